/**
 * The `PodSandboxConfig` of a pod (upstream `generatePodSandboxConfig`,
 * `generatePodSandboxLinuxConfig`): metadata with the attempt, labels and annotations,
 * hostname, DNS, log directory, port mappings, namespaces, sysctls and sandbox security.
 *
 * @module
 */
import type { V1Container, V1Pod } from '@kubernetes/client-node';
import {
  type LinuxPodSandboxConfig,
  type PodSandboxConfig,
  type PortMapping,
  Protocol,
  SecurityProfile_ProfileType,
} from '@nodeagent/cri';
import { type DnsOptions, podDnsConfig } from './dns.js';
import { sandboxHostname } from './hostname.js';
import { newPodAnnotations, newPodLabels } from './labels.js';
import { podLogsDirectory } from './paths.js';
import { type CpuCfsOptions, sandboxLinuxResources } from './resources.js';
import {
  hasPrivilegedContainer,
  namespacesForPod,
  podSupplementalGroups,
  podSupplementalGroupsPolicy,
  toRuntimeSELinuxOption,
} from './security-context.js';

/** Node settings that shape sandbox configs. */
export interface SandboxConfigOptions extends CpuCfsOptions, DnsOptions {
  /** Root of pod log directories. @default "/var/log/pods" */
  readonly podLogsRoot?: string;
  /** The pod's cgroup parent (the kubelet's QoS cgroup); `''` leaves it to the runtime. @default () => "" */
  readonly cgroupParent?: (pod: V1Pod) => string;
}

/** CRI protocol of an API port protocol (TCP when unset). */
export function toRuntimeProtocol(protocol: string | undefined): Protocol {
  if (protocol === 'UDP') return Protocol.UDP;
  if (protocol === 'SCTP') return Protocol.SCTP;
  return Protocol.TCP;
}

/** A container's port mappings, skipping repeated port names (upstream `MakePortMappings`). */
export function makePortMappings(container: V1Container): PortMapping[] {
  const names = new Set<string>();
  const out: PortMapping[] = [];
  for (const p of container.ports ?? []) {
    const hostIp = p.hostIP ?? '';
    const family = hostIp === '' ? 'any' : hostIp.includes(':') ? 'v6' : 'v4';
    const name = p.name || `${family}-${p.protocol ?? 'TCP'}-${hostIp}:${p.containerPort}:${p.hostPort ?? 0}`;
    if (names.has(name)) continue;
    names.add(name);
    out.push({
      protocol: toRuntimeProtocol(p.protocol),
      containerPort: p.containerPort,
      hostPort: p.hostPort ?? 0,
      hostIp,
    });
  }
  return out;
}

/**
 * A sysctl name with `/` separators converted to dots, as runc wants them (upstream
 * `ConvertSysctlVariableToDotsSeparator`): when the first separator is `/`, `/` and `.` swap.
 */
export function sysctlToDots(name: string): string {
  const first = name.search(/[./]/);
  if (first === -1 || name[first] === '.') return name;
  return name.replace(/[./]/g, (c) => (c === '/' ? '.' : '/'));
}

/**
 * The sandbox's Linux settings (upstream `generatePodSandboxLinuxConfig`).
 * @throws ContainerConfigError for an unsupported `supplementalGroupsPolicy`
 */
export function sandboxLinuxConfig(pod: V1Pod, options: SandboxConfigOptions = {}): LinuxPodSandboxConfig {
  const sc = pod.spec?.securityContext;
  const sysctls: Record<string, string> = {};
  for (const s of sc?.sysctls ?? []) sysctls[sysctlToDots(s.name)] = s.value;
  return {
    cgroupParent: options.cgroupParent?.(pod) ?? '',
    securityContext: {
      namespaceOptions: namespacesForPod(pod),
      selinuxOptions: toRuntimeSELinuxOption(sc?.seLinuxOptions),
      runAsUser: sc?.runAsUser == null ? undefined : { value: BigInt(sc.runAsUser) },
      runAsGroup: sc?.runAsGroup == null ? undefined : { value: BigInt(sc.runAsGroup) },
      readonlyRootfs: false,
      supplementalGroups: podSupplementalGroups(pod),
      supplementalGroupsPolicy: podSupplementalGroupsPolicy(pod),
      privileged: hasPrivilegedContainer(pod),
      // Upstream always runs the sandbox itself under the runtime's default profile.
      seccomp: { profileType: SecurityProfile_ProfileType.RuntimeDefault, localhostRef: '' },
      apparmor: undefined,
      seccompProfilePath: '',
    },
    sysctls,
    overhead: undefined,
    resources: sandboxLinuxResources(pod, options),
  };
}

/**
 * The full sandbox config the runtime manager sends in `RunPodSandbox` for `pod`'s sandbox
 * number `attempt` (upstream `generatePodSandboxConfig`): for a benchmark or a tool that must
 * ask the runtime for exactly the sandbox the agent would.
 * @throws ContainerConfigError for an unsupported `supplementalGroupsPolicy`
 */
export function generatePodSandboxConfig(
  pod: V1Pod,
  attempt: number,
  options: SandboxConfigOptions = {},
): PodSandboxConfig {
  const m = pod.metadata;
  const portMappings = (pod.spec?.containers ?? []).flatMap(makePortMappings);
  return {
    metadata: { name: m?.name ?? '', namespace: m?.namespace ?? '', uid: m?.uid ?? '', attempt },
    hostname: pod.spec?.hostNetwork === true ? '' : sandboxHostname(pod, options.clusterDomain),
    logDirectory: podLogsDirectory(
      options.podLogsRoot ?? '/var/log/pods',
      m?.namespace ?? '',
      m?.name ?? '',
      m?.uid ?? '',
    ),
    dnsConfig: podDnsConfig(pod, options),
    portMappings,
    labels: newPodLabels(pod),
    annotations: newPodAnnotations(pod),
    linux: sandboxLinuxConfig(pod, options),
    windows: undefined,
  };
}
