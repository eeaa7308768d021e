/**
 * Options of the node status manager: what the node is (name, labels, taints, machine), what
 * it holds back (reservations, max pods), where its readiness and pressure come from, and the
 * kubelet's cadence.
 *
 * @module
 */
import type { V1Taint } from '@kubernetes/client-node';
import type { Clock, Logger, MetricsOptions } from '@nodeagent/core';
import type { ResourceList } from './allocatable.js';
import type { StatusApi } from './api.js';
import type { MachineInfo } from './machine-info.js';
import type { NodePressureProvider } from './node-conditions.js';
import type { NodeImage } from './node-object.js';

/** Options of `NodeStatusManager`. */
export interface NodeStatusManagerOptions {
  /** Where the Node lives. */
  readonly api: StatusApi;
  /** The Node's name. */
  readonly nodeName: string;
  /** `kubernetes.io/hostname` and the Hostname address. @default nodeName */
  readonly hostname?: string;
  /** Machine facts. @default readMachineInfo() */
  readonly machine?: MachineInfo;
  /** Extra labels set at registration (`--node-labels`). @default {} */
  readonly nodeLabels?: Readonly<Record<string, string>>;
  /** Taints set at registration (`--register-with-taints`). @default [] */
  readonly registerWithTaints?: readonly V1Taint[];
  /**
   * Create the Node at start (the kubelet's `registerNode`). When false the Node must already
   * exist (made by an administrator): the manager only updates its status, as the kubelet does.
   * @default true
   */
  readonly registerNode?: boolean;
  /** Register schedulable; false adds the `node.kubernetes.io/unschedulable:NoSchedule` taint. @default true */
  readonly registerSchedulable?: boolean;
  /** `spec.podCIDRs` set at registration (normally the controller manager's job). @default none */
  readonly podCidrs?: readonly string[];
  /** InternalIP addresses (`--node-ip`, up to one per family). @default the machine's first address */
  readonly nodeIps?: readonly string[];
  /** `status.capacity.pods` (`--max-pods`). Minimum: 1. @default 110 */
  readonly maxPods?: number;
  /** `--kube-reserved`. @default {} */
  readonly kubeReserved?: ResourceList;
  /** `--system-reserved`. @default {} */
  readonly systemReserved?: ResourceList;
  /** Hard eviction thresholds (`--eviction-hard`) as signal → quantity or percentage. @default DEFAULT_EVICTION_HARD */
  readonly evictionHard?: ResourceList;
  /** `daemonEndpoints.kubeletEndpoint.Port`. @default 10250 */
  readonly kubeletPort?: number;
  /** `nodeInfo.kubeletVersion`. @default 'v1.36.0-nodeagent' */
  readonly kubeletVersion?: string;
  /** `nodeInfo.containerRuntimeVersion` (`containerd://2.1.4`); called until it resolves. @default () => '' */
  readonly runtimeVersion?: () => Promise<string> | string;
  /**
   * The reasons the node is not ready, in the kubelet's words (see `runtimeReadinessErrors`);
   * empty when ready. Rejecting counts as "container runtime is down". @default () => []
   */
  readonly readiness?: () => Promise<readonly string[]> | readonly string[];
  /** Memory, disk and PID pressure (the eviction manager). @default noNodePressure */
  readonly pressure?: NodePressureProvider;
  /** The runtime's images for `status.images`. @default () => [] */
  readonly images?: () => Promise<readonly NodeImage[]> | readonly NodeImage[];
  /** `nodeStatusMaxImages`; -1 reports all. @default 50 */
  readonly maxImages?: number;
  /** How often the status is computed, ms (`nodeStatusUpdateFrequency`). Minimum: 1. @default 10_000 */
  readonly statusUpdateFrequencyMs?: number;
  /** An unchanged status is still posted this often, ms (`nodeStatusReportFrequency`). @default 300_000 */
  readonly statusReportFrequencyMs?: number;
  /**
   * Records a Node event (an event recorder): called with `Normal`, the reason
   * (`NodeHasSufficientMemory`, `NodeReady`, `NodeNotReady`, …) and `Node <name> status is now:
   * <reason>` when one of the four conditions appears or flips. @default none
   */
  readonly recordEvent?: (type: 'Normal' | 'Warning', reason: string, message: string) => void;
  /** @default realClock */
  readonly clock?: Clock;
  /** @default noopLogger */
  readonly logger?: Logger;
  /** Registers `nodeagent_status_api_requests_total`. @default none */
  readonly metrics?: MetricsOptions;
}
