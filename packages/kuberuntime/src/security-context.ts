/**
 * Namespace modes and the Linux security context the kubelet passes to the runtime
 * (upstream `kuberuntime/security_context.go`, `security_context_others.go`, `helpers.go`
 * `getSeccompProfile` / `getAppArmorProfile`, `runtime/util.NamespacesForPod`), and the
 * `runAsNonRoot` check.
 *
 * @module
 */
import { join } from 'node:path';
import type {
  V1AppArmorProfile,
  V1Container,
  V1Pod,
  V1SELinuxOptions,
  V1SeccompProfile,
  V1SecurityContext,
} from '@kubernetes/client-node';
import {
  type LinuxContainerSecurityContext,
  NamespaceMode,
  type NamespaceOption,
  type SELinuxOption,
  type SecurityProfile,
  SecurityProfile_ProfileType,
  SupplementalGroupsPolicy,
} from '@nodeagent/cri';
import { formatPod } from './container-hash.js';
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

/** The kubelet's default `seccompProfileRoot` (`<root-dir>/seccomp`). */
export const DEFAULT_SECCOMP_PROFILE_ROOT = '/var/lib/kubelet/seccomp';

/**
 * The CRI seccomp profile for an API profile (upstream `fieldSeccompProfile`): RuntimeDefault,
 * Localhost (`<seccompProfileRoot>/<localhostProfile>`), anything else Unconfined; no profile
 * gives the node default.
 * @throws ContainerConfigError for a Localhost profile without `localhostProfile`
 */
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
  if (type === 'Localhost') {
    if (!profile?.localhostProfile)
      throw new ContainerConfigError('localhostProfile must be set if seccompProfile type is Localhost.');
    return {
      profileType: SecurityProfile_ProfileType.Localhost,
      localhostRef: join(
        options.seccompProfileRoot ?? DEFAULT_SECCOMP_PROFILE_ROOT,
        profile.localhostProfile,
      ),
    };
  }
  return { profileType: SecurityProfile_ProfileType.Unconfined, localhostRef: '' };
}

/**
 * The container's seccomp profile (upstream `getSeccompProfile`): the container's field, else
 * the pod's, else the node default. The deprecated `seccomp.security.alpha.kubernetes.io`
 * annotations are not read, as the kubelet no longer reads them (the API server copies them
 * into the fields).
 */
export function containerSeccompProfile(
  pod: V1Pod,
  container: V1Container,
  options: SeccompOptions = {},
): SecurityProfile {
  return seccompProfile(
    container.securityContext?.seccompProfile ?? pod.spec?.securityContext?.seccompProfile,
    options,
  );
}

/** Prefix of the deprecated per-container AppArmor annotation (`v1.DeprecatedAppArmorBetaContainerAnnotationKeyPrefix`). */
export const APPARMOR_ANNOTATION_PREFIX = 'container.apparmor.security.beta.kubernetes.io/';

function appArmorFromAnnotation(pod: V1Pod, containerName: string): V1AppArmorProfile | undefined {
  const value = pod.metadata?.annotations?.[`${APPARMOR_ANNOTATION_PREFIX}${containerName}`];
  if (value === undefined) return undefined;
  if (value === 'runtime/default') return { type: 'RuntimeDefault' };
  if (value === 'unconfined') return { type: 'Unconfined' };
  if (value.startsWith('localhost/'))
    return { type: 'Localhost', localhostProfile: value.slice('localhost/'.length) };
  return undefined; // invalid: ignored, as upstream
}

/**
 * The container's AppArmor profile (upstream `apparmor.GetProfile`): the container's
 * `appArmorProfile`, else the deprecated annotation
 * `container.apparmor.security.beta.kubernetes.io/<container>` (static pods never had it copied
 * into the field), else the pod's `appArmorProfile`.
 */
export function effectiveAppArmorProfile(pod: V1Pod, container: V1Container): V1AppArmorProfile | undefined {
  return (
    container.securityContext?.appArmorProfile ??
    appArmorFromAnnotation(pod, container.name) ??
    pod.spec?.securityContext?.appArmorProfile ??
    undefined
  );
}

/**
 * The CRI AppArmor settings (upstream `getAppArmorProfile`): the profile, and the deprecated
 * string form older runtimes read (`runtime/default`, `unconfined`, `localhost/<name>`).
 * @throws ContainerConfigError for a Localhost profile without a name, or an unknown type
 */
export function appArmorProfile(
  pod: V1Pod,
  container: V1Container,
): { readonly apparmor: SecurityProfile | undefined; readonly apparmorProfile: string } {
  const profile = effectiveAppArmorProfile(pod, container);
  if (profile === undefined) return { apparmor: undefined, apparmorProfile: '' };
  switch (profile.type) {
    case 'RuntimeDefault':
      return {
        apparmor: { profileType: SecurityProfile_ProfileType.RuntimeDefault, localhostRef: '' },
        apparmorProfile: 'runtime/default',
      };
    case 'Unconfined':
      return {
        apparmor: { profileType: SecurityProfile_ProfileType.Unconfined, localhostRef: '' },
        apparmorProfile: 'unconfined',
      };
    case 'Localhost':
      if (profile.localhostProfile == null)
        throw new ContainerConfigError('missing localhost apparmor profile name');
      return {
        apparmor: {
          profileType: SecurityProfile_ProfileType.Localhost,
          localhostRef: profile.localhostProfile,
        },
        apparmorProfile: `localhost/${profile.localhostProfile}`,
      };
    default:
      throw new ContainerConfigError(`unknown apparmor profile type: ${JSON.stringify(profile.type)}`);
  }
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
 * The CRI `supplementalGroupsPolicy` of the pod (`Merge` when unset).
 * @throws ContainerConfigError `unsupported supplementalGroupsPolicy: X` for other values
 */
export function podSupplementalGroupsPolicy(pod: V1Pod): SupplementalGroupsPolicy {
  const policy = pod.spec?.securityContext?.supplementalGroupsPolicy;
  if (policy === undefined || policy === null) return SupplementalGroupsPolicy.Merge;
  if (policy === 'Merge') return SupplementalGroupsPolicy.Merge;
  if (policy === 'Strict') return SupplementalGroupsPolicy.Strict;
  throw new ContainerConfigError(`unsupported supplementalGroupsPolicy: ${policy}`);
}

/** The pod's SELinux options as the CRI takes them (`undefined` when none). */
export function toRuntimeSELinuxOption(opts: V1SELinuxOptions | undefined): SELinuxOption | undefined {
  if (opts == null) return undefined;
  return { user: opts.user ?? '', role: opts.role ?? '', type: opts.type ?? '', level: opts.level ?? '' };
}

/**
 * The container's effective security context (upstream `securitycontext.DetermineEffectiveSecurityContext`):
 * the pod's `seLinuxOptions`, `runAsUser`, `runAsGroup` and `runAsNonRoot`, each replaced by the
 * container's own when set, plus the container-only fields. Windows options are not read.
 */
export function effectiveSecurityContext(pod: V1Pod, container: V1Container): V1SecurityContext {
  const podSc = pod.spec?.securityContext;
  const sc = container.securityContext ?? {};
  const out: V1SecurityContext = { ...sc };
  const seLinuxOptions = sc.seLinuxOptions ?? podSc?.seLinuxOptions;
  const runAsUser = sc.runAsUser ?? podSc?.runAsUser;
  const runAsGroup = sc.runAsGroup ?? podSc?.runAsGroup;
  const runAsNonRoot = sc.runAsNonRoot ?? podSc?.runAsNonRoot;
  if (seLinuxOptions != null) out.seLinuxOptions = seLinuxOptions;
  if (runAsUser != null) out.runAsUser = runAsUser;
  if (runAsGroup != null) out.runAsGroup = runAsGroup;
  if (runAsNonRoot != null) out.runAsNonRoot = runAsNonRoot;
  return out;
}

/**
 * The user an image runs as, from the runtime's `ImageStatus` (upstream `getImageUser`): its
 * numeric `uid`, or else its `username`; an image that names neither runs as root (uid 0).
 */
export interface ImageUser {
  /** The numeric user, when the image has one. */
  readonly uid?: bigint | undefined;
  /** The non-numeric user name, when the image has one and no uid. */
  readonly username?: string | undefined;
}

const MAX_USER_ID = 2147483647n;

/**
 * Refuses a container that would run as root under `runAsNonRoot: true` (upstream
 * `verifyRunAsNonRoot`, Linux): `runAsUser: 0`, or no `runAsUser` and an image user that is
 * root, not numeric, or not a valid user ID. The messages are the kubelet's.
 * @throws ContainerConfigError (the start fails with CreateContainerConfigError)
 */
export function verifyRunAsNonRoot(pod: V1Pod, container: V1Container, imageUser: ImageUser): void {
  const sc = effectiveSecurityContext(pod, container);
  if (sc.runAsNonRoot !== true) return;
  const where = `(pod: ${goQuote(formatPod(pod))}, container: ${container.name})`;
  if (sc.runAsUser != null) {
    if (sc.runAsUser === 0)
      throw new ContainerConfigError(`container's runAsUser breaks non-root policy ${where}`);
    return;
  }
  const { uid, username } = imageUser;
  if (uid === undefined && username !== undefined && username !== '') {
    throw new ContainerConfigError(
      `container has runAsNonRoot and image has non-numeric user (${username}), cannot verify user is non-root ${where}`,
    );
  }
  if (uid === undefined) return;
  if (uid === 0n)
    throw new ContainerConfigError(`container has runAsNonRoot and image will run as root ${where}`);
  if (uid < 0n || uid > MAX_USER_ID) {
    throw new ContainerConfigError(
      `container has runAsNonRoot and image has an invalid user id (${uid}). (Must be 1-(${MAX_USER_ID})): must be between 0 and ${MAX_USER_ID}, inclusive ${where}`,
    );
  }
}

/** Go's `%q` of a string (ASCII-safe enough for pod names, which are DNS names). */
function goQuote(value: string): string {
  return JSON.stringify(value);
}

/** Options of {@link containerSecurityContext}. */
export interface ContainerSecurityOptions extends SeccompOptions {
  /** The image's user (from `ImageStatus`), used when no `runAsUser` is set. @default none */
  readonly imageUser?: ImageUser | undefined;
}

/**
 * The container's Linux security context (upstream `determineEffectiveSecurityContext`):
 * capabilities, privileged, read-only rootfs, SELinux options and run-as user/group from the
 * effective security context (the image's user when no `runAsUser` is set), seccomp and
 * AppArmor profiles, the pod's namespaces, supplemental groups and their policy,
 * `noNewPrivs` and the masked / read-only /proc paths.
 * @throws ContainerConfigError for an invalid seccomp / AppArmor profile or groups policy
 */
export function containerSecurityContext(
  pod: V1Pod,
  container: V1Container,
  options: ContainerSecurityOptions = {},
): LinuxContainerSecurityContext {
  const sc = effectiveSecurityContext(pod, container);
  const unmasked = sc.procMount === 'Unmasked';
  const { apparmor, apparmorProfile } = appArmorProfile(pod, container);
  const explicitUser = sc.runAsUser != null;
  const imageUid = options.imageUser?.uid;
  return {
    capabilities: {
      addCapabilities: [...(sc.capabilities?.add ?? [])],
      dropCapabilities: [...(sc.capabilities?.drop ?? [])],
      addAmbientCapabilities: [],
    },
    privileged: sc.privileged === true,
    namespaceOptions: namespacesForPod(pod),
    runAsUser: explicitUser
      ? { value: BigInt(sc.runAsUser as number) }
      : imageUid === undefined
        ? undefined
        : { value: imageUid },
    runAsGroup: sc.runAsGroup == null ? undefined : { value: BigInt(sc.runAsGroup) },
    runAsUsername: explicitUser ? '' : (options.imageUser?.username ?? ''),
    readonlyRootfs: sc.readOnlyRootFilesystem === true,
    supplementalGroups: podSupplementalGroups(pod),
    supplementalGroupsPolicy: podSupplementalGroupsPolicy(pod),
    noNewPrivs: sc.allowPrivilegeEscalation === false,
    maskedPaths: unmasked ? [] : [...DEFAULT_MASKED_PATHS],
    readonlyPaths: unmasked ? [] : [...DEFAULT_READONLY_PATHS],
    seccomp: containerSeccompProfile(pod, container, options),
    apparmor,
    apparmorProfile,
    seccompProfilePath: '',
    selinuxOptions: toRuntimeSELinuxOption(sc.seLinuxOptions),
  };
}

/** Whether any container of the pod is privileged (the sandbox must allow it). */
export function hasPrivilegedContainer(pod: V1Pod): boolean {
  const all = [...(pod.spec?.initContainers ?? []), ...(pod.spec?.containers ?? [])];
  return all.some((c) => c.securityContext?.privileged === true);
}
