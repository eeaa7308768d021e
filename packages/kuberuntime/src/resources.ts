/**
 * CPU and memory numbers the kubelet hands to the runtime: CFS shares / quota / period,
 * memory limit, OOM score adjustment by QoS class, and the pod-level sums for the sandbox
 * (upstream `kuberuntime_container_linux.go`, `cm/helpers_linux.go`, `qos/policy.go`).
 *
 * @module
 */

import type { V1Container, V1Pod } from '@kubernetes/client-node';
import type { LinuxContainerResources } from '@nodeagent/cri';
import { effectiveRequests, isRestartableInitContainer, podQosClass } from '@nodeagent/kubecontainer';
import { milliValue, quantityValue } from './quantity.js';

export { effectiveRequests, podQosClass } from '@nodeagent/kubecontainer';

/** Smallest cpu.shares the kubelet sets (the kernel minimum). */
export const MIN_SHARES = 2n;
/** Largest cpu.shares the kubelet sets. */
export const MAX_SHARES = 262_144n;
/** Shares of one whole CPU. */
export const SHARES_PER_CPU = 1024n;
/** Default CFS period, microseconds (100 ms). */
export const QUOTA_PERIOD_US = 100_000n;
/** Smallest CFS quota, microseconds (1 ms, the kernel minimum). */
export const MIN_QUOTA_PERIOD_US = 1_000n;

/** OOM score adjustment of Guaranteed pods' containers. */
export const GUARANTEED_OOM_SCORE_ADJ = -997;
/** OOM score adjustment of BestEffort pods' containers. */
export const BESTEFFORT_OOM_SCORE_ADJ = 1000;

/** cpu.shares for a CPU request in millicores: 2 for 0, else `milli*1024/1000` clamped to [2, 262144]. */
export function milliCpuToShares(milliCpu: bigint): bigint {
  if (milliCpu === 0n) return MIN_SHARES;
  const shares = (milliCpu * SHARES_PER_CPU) / 1000n;
  if (shares < MIN_SHARES) return MIN_SHARES;
  if (shares > MAX_SHARES) return MAX_SHARES;
  return shares;
}

/** CFS quota (µs) for a CPU limit in millicores over `periodUs`: 0 when unlimited, at least 1000. */
export function milliCpuToQuota(milliCpu: bigint, periodUs: bigint = QUOTA_PERIOD_US): bigint {
  if (milliCpu === 0n) return 0n;
  const quota = (milliCpu * periodUs) / 1000n;
  return quota < MIN_QUOTA_PERIOD_US ? MIN_QUOTA_PERIOD_US : quota;
}

/** How CPU limits are enforced. */
export interface CpuCfsOptions {
  /** Enforce CPU limits with CFS quota (kubelet `cpuCFSQuota`). @default true */
  readonly cpuCfsQuota?: boolean;
  /** CFS period, microseconds (kubelet `cpuCFSQuotaPeriod`). @default 100000 */
  readonly cpuCfsQuotaPeriodUs?: number;
}

/**
 * Linux resources from a CPU request / limit (millicores) and memory limit (bytes), as upstream
 * `calculateLinuxResources`: a missing request defaults to the limit for shares.
 */
export function calculateLinuxResources(
  cpuRequestMilli: bigint | undefined,
  cpuLimitMilli: bigint,
  memoryLimitBytes: bigint,
  options: CpuCfsOptions = {},
): LinuxContainerResources {
  const shares =
    (cpuRequestMilli === undefined || cpuRequestMilli === 0n) && cpuLimitMilli !== 0n
      ? milliCpuToShares(cpuLimitMilli)
      : milliCpuToShares(cpuRequestMilli ?? 0n);
  const out: LinuxContainerResources = {
    cpuPeriod: 0n,
    cpuQuota: 0n,
    cpuShares: shares,
    memoryLimitInBytes: memoryLimitBytes,
    oomScoreAdj: 0n,
    cpusetCpus: '',
    cpusetMems: '',
    hugepageLimits: [],
    unified: {},
    memorySwapLimitInBytes: 0n,
  };
  if (options.cpuCfsQuota ?? true) {
    const period = BigInt(options.cpuCfsQuotaPeriodUs ?? Number(QUOTA_PERIOD_US));
    out.cpuPeriod = period;
    out.cpuQuota = milliCpuToQuota(cpuLimitMilli, period);
  }
  return out;
}

type ResourceMap = Readonly<Record<string, string>> | undefined;

function cpuMilli(map: ResourceMap): bigint {
  return milliValue(map?.cpu);
}
function memoryBytes(map: ResourceMap): bigint {
  return quantityValue(map?.memory);
}

/** Options of {@link containerLinuxResources}. */
export interface ContainerResourceOptions extends CpuCfsOptions {
  /** Node memory capacity, bytes, for the Burstable OOM score. */
  readonly memoryCapacityBytes: bigint;
}

/** The Linux resources of one container (upstream `generateLinuxContainerResources`). */
export function containerLinuxResources(
  pod: V1Pod,
  container: V1Container,
  options: ContainerResourceOptions,
): LinuxContainerResources {
  const requests = effectiveRequests(container);
  const limits = container.resources?.limits;
  const out = calculateLinuxResources(
    requests.cpu === undefined ? undefined : cpuMilli(requests),
    cpuMilli(limits),
    memoryBytes(limits),
    options,
  );
  out.oomScoreAdj = BigInt(containerOomScoreAdjust(pod, container, options.memoryCapacityBytes));
  return out;
}

const SYSTEM_CRITICAL_PRIORITY = 2_000_000_000;

/** Whether the pod is node-critical (upstream `IsNodeCriticalPod`): critical and `system-node-critical`. */
export function isNodeCriticalPod(pod: V1Pod): boolean {
  const critical =
    (pod.spec?.priority ?? 0) >= SYSTEM_CRITICAL_PRIORITY ||
    (pod.metadata?.annotations?.['kubernetes.io/config.source'] !== undefined &&
      pod.metadata.annotations['kubernetes.io/config.source'] !== 'api');
  return critical && pod.spec?.priorityClassName === 'system-node-critical';
}

/** The container's oom_score_adj as the kubelet computes it by QoS (upstream `GetContainerOOMScoreAdjust`). */
export function containerOomScoreAdjust(
  pod: V1Pod,
  container: V1Container,
  memoryCapacityBytes: bigint,
): number {
  if (isNodeCriticalPod(pod)) return GUARANTEED_OOM_SCORE_ADJ;
  const qos = podQosClass(pod);
  if (qos === 'Guaranteed') return GUARANTEED_OOM_SCORE_ADJ;
  if (qos === 'BestEffort') return BESTEFFORT_OOM_SCORE_ADJ;
  const memoryRequest = quantityValue(effectiveRequests(container).memory);
  const capacity = memoryCapacityBytes > 0n ? memoryCapacityBytes : 1n;
  const adj = Number(1000n - (1000n * memoryRequest) / capacity);
  if (adj < 1000 + GUARANTEED_OOM_SCORE_ADJ) return 1000 + GUARANTEED_OOM_SCORE_ADJ;
  if (adj === BESTEFFORT_OOM_SCORE_ADJ) return adj - 1;
  return adj;
}

/** CPU (millicores) and memory (bytes) totals of a pod. */
export interface PodResourceTotals {
  /** Millicores; undefined when no container states it. */
  readonly cpuMilli: bigint | undefined;
  /** Bytes. */
  readonly memoryBytes: bigint;
}

function aggregate(pod: V1Pod, pick: (c: V1Container) => ResourceMap): PodResourceTotals {
  let anyCpu = false;
  const read = (c: V1Container): [bigint, bigint] => {
    const m = pick(c);
    if (m?.cpu !== undefined) anyCpu = true;
    return [cpuMilli(m), memoryBytes(m)];
  };
  let cpu = 0n;
  let mem = 0n;
  for (const c of pod.spec?.containers ?? []) {
    const [a, b] = read(c);
    cpu += a;
    mem += b;
  }
  // Sidecars run beside the app containers; an ordinary init container only beside the
  // sidecars declared before it (upstream `PodRequests`/`PodLimits` with sidecars).
  let sideCpu = 0n;
  let sideMem = 0n;
  let initCpu = 0n;
  let initMem = 0n;
  for (const c of pod.spec?.initContainers ?? []) {
    const [a, b] = read(c);
    let stepCpu: bigint;
    let stepMem: bigint;
    if (isRestartableInitContainer(c)) {
      cpu += a;
      mem += b;
      sideCpu += a;
      sideMem += b;
      stepCpu = sideCpu;
      stepMem = sideMem;
    } else {
      stepCpu = a + sideCpu;
      stepMem = b + sideMem;
    }
    if (stepCpu > initCpu) initCpu = stepCpu;
    if (stepMem > initMem) initMem = stepMem;
  }
  return {
    cpuMilli: anyCpu ? (cpu > initCpu ? cpu : initCpu) : undefined,
    memoryBytes: mem > initMem ? mem : initMem,
  };
}

/** Effective pod requests (upstream `PodRequests`, overhead excluded). */
export function podRequests(pod: V1Pod): PodResourceTotals {
  return aggregate(pod, (c) => effectiveRequests(c));
}

/** Effective pod limits (upstream `PodLimits`, overhead excluded). */
export function podLimits(pod: V1Pod): PodResourceTotals {
  return aggregate(pod, (c) => c.resources?.limits);
}

/** The sandbox's pod-level resources (upstream `calculateSandboxResources`). */
export function sandboxLinuxResources(pod: V1Pod, options: CpuCfsOptions = {}): LinuxContainerResources {
  const req = podRequests(pod);
  const lim = podLimits(pod);
  return calculateLinuxResources(req.cpuMilli, lim.cpuMilli ?? 0n, lim.memoryBytes, options);
}
