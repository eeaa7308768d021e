/**
 * `/metrics/resource`, the kubelet's resource metrics collector (what metrics-server scrapes):
 * node, pod and container CPU (cumulative core-seconds), working set, swap and container start
 * time, with the collector's names, HELP texts, stability levels, labels and timestamps.
 * `scrape_error` (deprecated in 1.29, hidden since 1.30) is not emitted.
 *
 * @module
 */
import { type PromFamily, renderFamilies } from './prom-text.js';
import type { ContainerStats, PodStats, Summary } from './summary-types.js';

const family = (name: string, help: string, type: 'counter' | 'gauge'): PromFamily => ({
  name,
  help,
  type,
  samples: [],
});

const timeMs = (t: string): number => Date.parse(t);

/**
 * Renders `/metrics/resource` from a CPU-and-memory Summary (`StatsProvider.getCpuAndMemory()`).
 * Pass `undefined` when the summary could not be produced: only `resource_scrape_error 1` is
 * written, as upstream does.
 */
export function renderResourceMetrics(summary: Summary | undefined): string {
  const nodeCpu = family(
    'node_cpu_usage_seconds_total',
    '[STABLE] Cumulative cpu time consumed by the node in core-seconds',
    'counter',
  );
  const nodeMem = family(
    'node_memory_working_set_bytes',
    '[STABLE] Current working set of the node in bytes',
    'gauge',
  );
  const nodeSwap = family(
    'node_swap_usage_bytes',
    '[ALPHA] Current swap usage of the node in bytes. Reported only on non-windows systems',
    'gauge',
  );
  const cCpu = family(
    'container_cpu_usage_seconds_total',
    '[STABLE] Cumulative cpu time consumed by the container in core-seconds',
    'counter',
  );
  const cMem = family(
    'container_memory_working_set_bytes',
    '[STABLE] Current working set of the container in bytes',
    'gauge',
  );
  const cSwap = family(
    'container_swap_usage_bytes',
    '[ALPHA] Current amount of the container swap usage in bytes. Reported only on non-windows systems',
    'gauge',
  );
  const cSwapLimit = family(
    'container_swap_limit_bytes',
    '[ALPHA] Current amount of the container swap limit in bytes. Reported only on non-windows systems',
    'gauge',
  );
  const cStart = family(
    'container_start_time_seconds',
    '[STABLE] Start time of the container since unix epoch in seconds',
    'gauge',
  );
  const pCpu = family(
    'pod_cpu_usage_seconds_total',
    '[STABLE] Cumulative cpu time consumed by the pod in core-seconds',
    'counter',
  );
  const pMem = family(
    'pod_memory_working_set_bytes',
    '[STABLE] Current working set of the pod in bytes',
    'gauge',
  );
  const pSwap = family(
    'pod_swap_usage_bytes',
    '[ALPHA] Current amount of the pod swap usage in bytes. Reported only on non-windows systems',
    'gauge',
  );
  const scrapeError = family(
    'resource_scrape_error',
    '[STABLE] 1 if there was an error while getting container metrics, 0 otherwise',
    'gauge',
  );
  const all = [
    nodeCpu,
    nodeMem,
    nodeSwap,
    cCpu,
    cMem,
    cSwap,
    cSwapLimit,
    cStart,
    pCpu,
    pMem,
    pSwap,
    scrapeError,
  ];
  scrapeError.samples.push({ labels: [], value: summary === undefined ? 1 : 0 });
  if (summary === undefined) return renderFamilies(all);

  const node = summary.node;
  if (node.cpu?.usageCoreNanoSeconds !== undefined) {
    nodeCpu.samples.push({
      labels: [],
      value: node.cpu.usageCoreNanoSeconds / 1e9,
      timestampMs: timeMs(node.cpu.time),
    });
  }
  if (node.memory?.workingSetBytes !== undefined) {
    nodeMem.samples.push({
      labels: [],
      value: node.memory.workingSetBytes,
      timestampMs: timeMs(node.memory.time),
    });
  }
  if (node.swap?.swapUsageBytes !== undefined && node.memory !== undefined) {
    // Upstream stamps node swap with the memory sample's time.
    nodeSwap.samples.push({
      labels: [],
      value: node.swap.swapUsageBytes,
      timestampMs: timeMs(node.memory.time),
    });
  }
  for (const pod of summary.pods) {
    for (const c of pod.containers) addContainer(pod, c);
    const labels = [
      ['pod', pod.podRef.name],
      ['namespace', pod.podRef.namespace],
    ] as const;
    if (pod.cpu?.usageCoreNanoSeconds !== undefined) {
      pCpu.samples.push({
        labels,
        value: pod.cpu.usageCoreNanoSeconds / 1e9,
        timestampMs: timeMs(pod.cpu.time),
      });
    }
    if (pod.memory?.workingSetBytes !== undefined) {
      pMem.samples.push({ labels, value: pod.memory.workingSetBytes, timestampMs: timeMs(pod.memory.time) });
    }
    if (pod.swap?.swapUsageBytes !== undefined) {
      pSwap.samples.push({ labels, value: pod.swap.swapUsageBytes, timestampMs: timeMs(pod.swap.time) });
    }
  }
  return renderFamilies(all);

  function addContainer(pod: PodStats, c: ContainerStats): void {
    const labels = [
      ['container', c.name],
      ['pod', pod.podRef.name],
      ['namespace', pod.podRef.namespace],
    ] as const;
    const start = timeMs(c.startTime);
    if (start > 0) cStart.samples.push({ labels, value: start / 1000 });
    if (c.cpu?.usageCoreNanoSeconds !== undefined) {
      cCpu.samples.push({ labels, value: c.cpu.usageCoreNanoSeconds / 1e9, timestampMs: timeMs(c.cpu.time) });
    }
    if (c.memory?.workingSetBytes !== undefined) {
      cMem.samples.push({ labels, value: c.memory.workingSetBytes, timestampMs: timeMs(c.memory.time) });
    }
    if (c.swap !== undefined) {
      const t = timeMs(c.swap.time);
      if (c.swap.swapUsageBytes !== undefined)
        cSwap.samples.push({ labels, value: c.swap.swapUsageBytes, timestampMs: t });
      if (c.swap.swapAvailableBytes !== undefined) {
        cSwapLimit.samples.push({
          labels,
          value: c.swap.swapAvailableBytes + (c.swap.swapUsageBytes ?? 0),
          timestampMs: t,
        });
      }
    }
  }
}
