/**
 * Namespace modes and the Linux security context subset the kubelet passes to the runtime
 * (upstream `kuberuntime/security_context.go`, `runtime/util.NamespacesForPod`).
 *
 * @module
 */
import type { V1Container, V1Pod, V1SeccompProfile } from '@kubernetes/client-node';
import {
  type LinuxContainerSecurityContext,
  NamespaceMode,
  type NamespaceOption,
  type SecurityProfile,
  SecurityProfile_ProfileType,
} from '@nodeagent/cri';
import { ContainerConfigError } from './errors.js';

/** Paths masked in /proc and /sys unless `procMount: Unmasked` (upstream `defaultMaskedPaths`). */
export const DEFAULT_MASKED_PATHS: readonly string[] = [
  '/proc/asound',
  '/proc/acpi',
  '/proc/kcore',
  '/proc/keys',
  '/proc/latency_stats',
  '/proc/timer_list',
  '/proc/timer_stats',
  '/proc/sched_debug',
  '/proc/scsi',
  '/sys/firmware',
  '/sys/devices/virtual/powercap',
];
/** Paths mounted read-only unless `procMount: Unmasked` (upstream `defaultReadonlyPaths`). */
export const DEFAULT_READONLY_PATHS: readonly string[] = [
  '/proc/bus',
  '/proc/fs',
  '/proc/irq',
  '/proc/sys',
  '/proc/sysrq-trigger',
];

/** Network namespace of a pod: NODE with `hostNetwork`, else POD. */
export function networkNamespaceForPod(pod: V1Pod): NamespaceMode {
  return pod.spec?.hostNetwork === true ? NamespaceMode.NODE : NamespaceMode.POD;
}

/** Namespace options of a pod's sandbox and containers (upstream `NamespacesForPod`). */
export function namespacesForPod(pod: V1Pod): NamespaceOption {
  const spec = pod.spec;
  let pid = NamespaceMode.CONTAINER;
  if (spec?.hostPID === true) pid = NamespaceMode.NODE;
  else if (spec?.shareProcessNamespace === true) pid = NamespaceMode.POD;
  return {
    network: networkNamespaceForPod(pod),
    pid,
    ipc: spec?.hostIPC === true ? NamespaceMode.NODE : NamespaceMode.POD,
    targetId: '',
  };
}

/** Seccomp settings of the node. */
export interface SeccompOptions {
  /** Use RuntimeDefault when neither pod nor container says (kubelet `seccompDefault`). @default false */
  readonly seccompDefault?: boolean;
  /** Directory of Localhost profiles (`<root-dir>/seccomp`). @default "/var/lib/kubelet/seccomp" */
  readonly seccompProfileRoot?: string;
}

/** The CRI seccomp profile for an API profile (upstream `getSeccompProfile`). */
export function seccompProfile(
  profile: V1SeccompProfile | undefined,
  options: SeccompOptions = {},
): SecurityProfile {
  const type = profile?.type;
  if (type === undefined) {
    return {
      profileType: options.seccompDefault
        ? SecurityProfile_ProfileType.RuntimeDefault
        : SecurityProfile_ProfileType.Unconfined,
      localhostRef: '',
    };
  }
  if (type === 'RuntimeDefault')
    return { profileType: SecurityProfile_ProfileType.RuntimeDefault, localhostRef: '' };
  if (type === 'Unconfined') return { profileType: SecurityProfile_ProfileType.Unconfined, localhostRef: '' };
  if (type === 'Localhost') {
    const root = options.seccompProfileRoot ?? '/var/lib/kubelet/seccomp';
    if (!profile?.localhostProfile)
      throw new ContainerConfigError('localhostProfile must be set for a Localhost seccomp profile');
    return {
      profileType: SecurityProfile_ProfileType.Localhost,
      localhostRef: `${root}/${profile.localhostProfile}`,
    };
  }
  throw new ContainerConfigError(`unsupported seccomp profile type ${JSON.stringify(type)}`);
}

/** Pod-level supplemental groups: fsGroup then supplementalGroups. */
export function podSupplementalGroups(pod: V1Pod): bigint[] {
  const sc = pod.spec?.securityContext;
  const groups: bigint[] = [];
  if (sc?.fsGroup != null) groups.push(BigInt(sc.fsGroup));
  for (const g of sc?.supplementalGroups ?? []) groups.push(BigInt(g));
  return groups;
}

/**
 * The container's Linux security context: container settings over pod settings for
 * runAsUser / runAsGroup / seccomp; privileged, readOnlyRootFilesystem, capabilities and
 * allowPrivilegeEscalation from the container (upstream `determineEffectiveSecurityContext`).
 */
export function containerSecurityContext(
  pod: V1Pod,
  container: V1Container,
  options: SeccompOptions = {},
): LinuxContainerSecurityContext {
  const podSc = pod.spec?.securityContext;
  const sc = container.securityContext;
  const runAsUser = sc?.runAsUser ?? podSc?.runAsUser;
  const runAsGroup = sc?.runAsGroup ?? podSc?.runAsGroup;
  const unmasked = sc?.procMount === 'Unmasked';
  return {
    capabilities: {
      addCapabilities: [...(sc?.capabilities?.add ?? [])],
      dropCapabilities: [...(sc?.capabilities?.drop ?? [])],
      addAmbientCapabilities: [],
    },
    privileged: sc?.privileged === true,
    namespaceOptions: namespacesForPod(pod),
    runAsUser: runAsUser == null ? undefined : { value: BigInt(runAsUser) },
    runAsGroup: runAsGroup == null ? undefined : { value: BigInt(runAsGroup) },
    runAsUsername: '',
    readonlyRootfs: sc?.readOnlyRootFilesystem === true,
    supplementalGroups: podSupplementalGroups(pod),
    supplementalGroupsPolicy: 0,
    noNewPrivs: sc?.allowPrivilegeEscalation === false,
    maskedPaths: unmasked ? [] : [...DEFAULT_MASKED_PATHS],
    readonlyPaths: unmasked ? [] : [...DEFAULT_READONLY_PATHS],
    seccomp: seccompProfile(sc?.seccompProfile ?? podSc?.seccompProfile, options),
    apparmor: undefined,
    apparmorProfile: '',
    seccompProfilePath: '',
    selinuxOptions: undefined,
  };
}

/** Whether any container of the pod is privileged (the sandbox must allow it). */
export function hasPrivilegedContainer(pod: V1Pod): boolean {
  const all = [...(pod.spec?.initContainers ?? []), ...(pod.spec?.containers ?? [])];
  return all.some((c) => c.securityContext?.privileged === true);
}
