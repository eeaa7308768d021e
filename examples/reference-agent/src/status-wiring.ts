/**
 * The agent's `@nodeagent/status` pieces: the pod status manager, node registration and status
 * (Ready from the runtime's Status call and PLEG health, images from the runtime) and the node
 * Lease, built from the agent's options.
 *
 * @module
 */
import type { V1Pod, V1Taint } from '@kubernetes/client-node';
import {
  type Clock,
  definedFields,
  type Logger,
  type MetricsOptions,
  milliValue,
  quantityValue,
} from '@nodeagent/core';
import type { CriClient } from '@nodeagent/cri';
import type { PlegHealth } from '@nodeagent/pleg';
import {
  DEFAULT_MAX_PODS,
  type MachineInfo,
  type MirrorPodTranslator,
  type NodeImage,
  NodeLease,
  type NodePressureProvider,
  NodeStatusManager,
  nodeAllocatable,
  nodeCapacity,
  PodStatusManager,
  type ResourceList,
  runtimeReadinessErrors,
  type StatusApi,
} from '@nodeagent/status';
import { podCapacity } from './node-tuning-wiring.js';

/**
 * The node's allocatable CPU and memory as its Node status reports them (capacity minus
 * `--kube-reserved`, `--system-reserved` and the hard memory eviction threshold): the value of
 * an unset limit in a container's `resourceFieldRef`.
 */
export function runtimeAllocatable(
  machine: MachineInfo,
  reservations: {
    readonly kubeReserved?: ResourceList | undefined;
    readonly systemReserved?: ResourceList | undefined;
    readonly evictionHard?: ResourceList | undefined;
  },
): { readonly cpuMilli: bigint; readonly memoryBytes: bigint } {
  const allocatable = nodeAllocatable(nodeCapacity(machine), definedFields(reservations));
  return {
    cpuMilli: milliValue(allocatable.cpu ?? '0'),
    memoryBytes: quantityValue(allocatable.memory ?? '0'),
  };
}

/** What the status pieces need from the agent. */
export interface StatusWiringDeps {
  readonly api: StatusApi;
  readonly cri: CriClient;
  readonly nodeName: string;
  readonly machine: MachineInfo;
  readonly plegHealth: () => PlegHealth;
  readonly podLookup: (uid: string) => V1Pod | undefined;
  readonly couldHaveRunningContainers: (uid: string) => boolean;
  readonly podCidr: string | undefined;
  readonly nodeIps: readonly string[];
  readonly nodeLabels: Readonly<Record<string, string>> | undefined;
  readonly registerWithTaints: readonly V1Taint[] | undefined;
  readonly kubeReserved: ResourceList | undefined;
  readonly systemReserved: ResourceList | undefined;
  readonly maxPods: number | undefined;
  /** `--pods-per-core`: capacity pods = min(maxPods, this × cores) when > 0. @default 0 */
  readonly podsPerCore?: number | undefined;
  /** `--node-status-max-images` (-1: all). @default 50 */
  readonly nodeStatusMaxImages?: number | undefined;
  /** `--register-node`: false leaves the Node to an administrator. @default true */
  readonly registerNode?: boolean | undefined;
  readonly statusUpdateFrequencyMs: number | undefined;
  readonly leaseDurationSeconds: number | undefined;
  /** `nodeStatusReportFrequency`, ms. @default the status package's (5 min) */
  readonly statusReportFrequencyMs?: number | undefined;
  readonly pressure: NodePressureProvider | undefined;
  /** `--eviction-hard` (allocatable subtracts its memory.available). @default the kubelet's */
  readonly evictionHard?: ResourceList | undefined;
  /** Static ↔ mirror pod UIDs (statuses of static pods go to their mirror pods). */
  readonly mirrorPods: MirrorPodTranslator;
  /** Records an event about this Node (NodeReady, NodeHasSufficientMemory, ...). */
  readonly recordNodeEvent: (type: 'Normal' | 'Warning', reason: string, message: string) => void;
  /** `daemonEndpoints.kubeletEndpoint.Port`: the kubelet server's port. @default 10250 */
  readonly kubeletPort?: number | undefined;
  /** The agent's `/metrics` registry (metrics-wiring.ts). @default none */
  readonly metrics?: MetricsOptions | undefined;
  readonly clock: Clock;
  readonly logger: Logger;
}

/** The three status pieces, not started. */
export interface StatusParts {
  readonly podStatus: PodStatusManager;
  readonly nodeStatus: NodeStatusManager;
  readonly lease: NodeLease;
}

/** Builds the pod status manager, node status manager and Lease over the agent's API and runtime. */
export function createStatusParts(d: StatusWiringDeps): StatusParts {
  let everChecked = false;
  const readiness = async (): Promise<string[]> => {
    const unhealthy: Record<string, string> = {};
    const pleg = d.plegHealth();
    if (!pleg.ok) unhealthy.PLEG = pleg.message;
    try {
      const res = await d.cri.runtime.status({}, { timeoutMs: 5_000 });
      everChecked = true;
      return runtimeReadinessErrors({ conditions: res.status?.conditions ?? [], unhealthy });
    } catch {
      return runtimeReadinessErrors({ conditions: undefined, everChecked, unhealthy });
    }
  };
  const images = async (): Promise<NodeImage[]> => {
    const res = await d.cri.image.listImages({}, { timeoutMs: 5_000 });
    return res.images.map((i) => ({
      repoDigests: i.repoDigests,
      repoTags: i.repoTags,
      sizeBytes: Number(i.size),
    }));
  };
  const podStatus = new PodStatusManager({
    api: d.api,
    podLookup: d.podLookup,
    mirrorPods: d.mirrorPods,
    couldHaveRunningContainers: (pod) => d.couldHaveRunningContainers(pod.metadata?.uid ?? ''),
    clock: d.clock,
    logger: d.logger,
    ...definedFields({ metrics: d.metrics }),
  });
  const nodeStatus = new NodeStatusManager({
    api: d.api,
    nodeName: d.nodeName,
    machine: d.machine,
    nodeIps: d.nodeIps,
    runtimeVersion: async () => {
      const v = await d.cri.runtime.version({ version: 'v1' }, { timeoutMs: 5_000 });
      return `${v.runtimeName}://${v.runtimeVersion}`;
    },
    readiness,
    images,
    recordEvent: d.recordNodeEvent,
    clock: d.clock,
    logger: d.logger,
    ...(d.podCidr === undefined ? {} : { podCidrs: [d.podCidr] }),
    ...definedFields({
      nodeLabels: d.nodeLabels,
      registerWithTaints: d.registerWithTaints,
      kubeReserved: d.kubeReserved,
      systemReserved: d.systemReserved,
      maxPods:
        d.podsPerCore === undefined
          ? d.maxPods
          : podCapacity(d.maxPods ?? DEFAULT_MAX_PODS, d.podsPerCore, d.machine.cpus),
      maxImages: d.nodeStatusMaxImages,
      registerNode: d.registerNode,
      statusUpdateFrequencyMs: d.statusUpdateFrequencyMs,
      statusReportFrequencyMs: d.statusReportFrequencyMs,
      pressure: d.pressure,
      evictionHard: d.evictionHard,
      kubeletPort: d.kubeletPort,
      metrics: d.metrics,
    }),
  });
  const lease = new NodeLease({
    api: d.api,
    nodeName: d.nodeName,
    nodeUid: () => nodeStatus.nodeUid,
    clock: d.clock,
    logger: d.logger,
    ...definedFields({ leaseDurationSeconds: d.leaseDurationSeconds, metrics: d.metrics }),
  });
  return { podStatus, nodeStatus, lease };
}
