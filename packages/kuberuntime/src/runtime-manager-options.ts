/**
 * Options of the `KubeRuntimeManager` (in their own module so the pieces it wires, such
 * as the container starter, read them without importing the manager).
 *
 * @module
 */
import type { Clock, Logger, MetricsOptions } from '@nodeagent/core';
import type { CriClient } from '@nodeagent/cri';
import type { PodStatusSource } from '@nodeagent/kubecontainer';
import type { EnvSources } from './env.js';
import type { RuntimeEventRecorder } from './event-recorder.js';
import type { HandlerRunnerDeps } from './lifecycle-handlers.js';
import type { PodVolumeLookup } from './mounts.js';
import type { PodActionsOptions } from './pod-actions.js';
import type { PodStatusOptions } from './pod-status-options.js';
import type { SandboxConfigOptions } from './sandbox-config.js';

/** CrashLoopBackOff settings, ms. */
export interface CrashLoopBackOffOptions {
  /** First delay. @default 10_000 */
  readonly initialMs?: number;
  /** Cap (kubelet `maxContainerRestartPeriod`). @default 300_000 */
  readonly maxMs?: number;
  /** A container that ran this long before failing starts over at `initialMs`. @default 600_000 */
  readonly resetAfterMs?: number;
}

/** Options of `KubeRuntimeManager`. */
export interface KubeRuntimeManagerOptions extends SandboxConfigOptions {
  /** The CRI runtime. */
  readonly cri: CriClient;
  /** @default realClock */
  readonly clock?: Clock;
  /** @default noopLogger */
  readonly logger?: Logger;
  /** Root of pod directories (emptyDir volumes, termination message files). @default "/var/lib/kubelet/pods" */
  readonly podsRoot?: string;
  /**
   * The pod's volumes as a volume manager (e.g. `@nodeagent/volumes`) set them up, by name: their
   * host paths are mounted as they are, and every volume a container mounts must be there.
   * @default none: only emptyDir (on disk) and hostPath volumes, prepared here
   */
  readonly podVolumes?: PodVolumeLookup;
  /** CrashLoopBackOff: 10 s doubling to 5 min, reset after 10 min. */
  readonly crashLoopBackOff?: CrashLoopBackOffOptions;
  /** ImagePullBackOff: 10 s doubling to 5 min. */
  readonly imagePullBackOff?: Omit<CrashLoopBackOffOptions, 'resetAfterMs'>;
  /**
   * Image pulls in flight at once; the others wait (the kubelet's `maxParallelImagePulls`, and
   * 1 for its default `serializeImagePulls: true`). Minimum: 1. @default unlimited
   */
  readonly maxParallelImagePulls?: number;
  /** Node memory capacity for OOM scores, bytes. @default os.totalmem() */
  readonly memoryCapacityBytes?: bigint;
  /** Node allocatable (the value of unset limits in `resourceFieldRef`). @default all CPUs, total memory */
  readonly nodeAllocatable?: { readonly cpuMilli: bigint; readonly memoryBytes: bigint };
  /** Node IPs (`status.hostIP(s)`). @default [] */
  readonly hostIps?: readonly string[];
  /** Use RuntimeDefault seccomp when unspecified (kubelet `seccompDefault`). @default false */
  readonly seccompDefault?: boolean;
  /** The node's hosts file, copied into host-network pods' `/etc/hosts`. @default "/etc/hosts" */
  readonly nodeHostsFile?: string;
  /**
   * Directory of `Localhost` seccomp profiles (the kubelet's `<root-dir>/seccomp`).
   * @default `seccomp` next to `podsRoot` (`/var/lib/kubelet/seccomp`)
   */
  readonly seccompProfileRoot?: string;
  /** ConfigMap / Secret lookups for env. @default none (such references fail unless optional) */
  readonly envSources?: EnvSources;
  /** Probe results consulted by the pod actions and the status. */
  readonly probes?: PodActionsOptions & PodStatusOptions['probes'];
  /** Where pod statuses are read from. @default criPodStatusSource(cri) */
  readonly podStatusSource?: PodStatusSource;
  /** Metrics on a registry you own. @default none */
  readonly metrics?: MetricsOptions;
  /**
   * The runtime's name in container IDs (`<name>://<id>`). @default the runtime's
   * `Version().runtime_name`, asked on the first sync or status read
   */
  readonly runtimeName?: string;
  /** CRI deadline of a call, ms (kubelet `runtimeRequestTimeout`). @default 120_000 */
  readonly runtimeRequestTimeoutMs?: number;
  /** HTTP GET for `httpGet` lifecycle hooks; resolves with the status code. @default node http(s) */
  readonly httpGet?: HandlerRunnerDeps['httpGet'];
  /**
   * Receives the kubelet's pod and container events (`Pulling`, `Pulled`, `Created`,
   * `Started`, `Killing`, `BackOff`, `Failed`, `SandboxChanged`, …) with upstream's messages.
   * @default none (the moments are only logged)
   */
  readonly recorder?: RuntimeEventRecorder;
  /** Whether the pod worker is already terminating the pod (a failed sandbox is then no error). */
  readonly isPodTerminationRequested?: (uid: string) => boolean;
}
