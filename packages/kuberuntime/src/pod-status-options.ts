/**
 * Options of `computePodStatus` (in their own module so the container status
 * conversion reads them without importing the pod status computation).
 *
 * @module
 */
import type { V1PodStatus } from '@kubernetes/client-node';
import type { ReasonCache } from './reason-cache.js';

/** Options of `computePodStatus`. */
export interface PodStatusOptions {
  /** Start failures (waiting reasons such as CrashLoopBackOff). @default none */
  readonly reasonCache?: ReasonCache;
  /** Time for new condition transitions, ms since the epoch. @default Date.now() */
  readonly now?: number;
  /** Node IPs (`hostIP`, `hostIPs`; pod IPs of host-network pods). @default [] */
  readonly hostIps?: readonly string[];
  /** The previous status (the status manager's); @default `pod.status` */
  readonly oldStatus?: V1PodStatus;
  /** Probe results; a container without the probe is ready / started while running. */
  readonly probes?: {
    /** Readiness of a running container with a readiness probe. */
    readonly readiness?: (containerId: string) => 'success' | 'failure' | undefined;
    /** Startup result of a running container with a startup probe. */
    readonly startup?: (containerId: string) => 'success' | 'failure' | undefined;
  };
  /**
   * Runtime name in container IDs (`<name>://<id>`), the runtime's `Version().runtime_name`
   * (`KubeRuntimeManager.computePodStatus` fills it in). @default "containerd"
   */
  readonly runtimeName?: string;
  /** The pod is terminal (the pod worker finished it). @default false */
  readonly podIsTerminal?: boolean;
}
