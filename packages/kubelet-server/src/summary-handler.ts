/**
 * `/stats/summary` as upstream's `handleSummary`: `?only_cpu_and_memory=true` (exactly one
 * value, exactly `true`) answers the provider's CPU-and-memory summary; otherwise a GET reads
 * the cached stats and a POST asks for fresh ones.
 *
 * @module
 */
import type { ContainerStats, Summary, SummaryProvider } from '@nodeagent/stats';

/** Whether the query asks for CPU and memory only (upstream: one `only_cpu_and_memory` equal to `true`). */
export function onlyCpuAndMemoryRequested(query: URLSearchParams): boolean {
  const values = query.getAll('only_cpu_and_memory');
  return values.length === 1 && values[0] === 'true';
}

function containerCpuAndMemory(c: ContainerStats): ContainerStats {
  return {
    name: c.name,
    startTime: c.startTime,
    ...(c.cpu === undefined ? {} : { cpu: c.cpu }),
    ...(c.memory === undefined ? {} : { memory: c.memory }),
    ...(c.swap === undefined ? {} : { swap: c.swap }),
  };
}

/**
 * The fields upstream's `GetCPUAndMemoryStats` fills, for providers without
 * `getCpuAndMemory`: node name, start time, CPU, memory, swap and system containers; per pod
 * its reference, start time, CPU, memory, swap and containers (name, start time, CPU,
 * memory, swap).
 */
export function cpuAndMemoryOnly(summary: Summary): Summary {
  const n = summary.node;
  return {
    node: {
      nodeName: n.nodeName,
      startTime: n.startTime,
      ...(n.cpu === undefined ? {} : { cpu: n.cpu }),
      ...(n.memory === undefined ? {} : { memory: n.memory }),
      ...(n.swap === undefined ? {} : { swap: n.swap }),
      ...(n.systemContainers === undefined
        ? {}
        : { systemContainers: n.systemContainers.map(containerCpuAndMemory) }),
    },
    pods: summary.pods.map((p) => ({
      podRef: p.podRef,
      startTime: p.startTime,
      containers: p.containers.map(containerCpuAndMemory),
      ...(p.cpu === undefined ? {} : { cpu: p.cpu }),
      ...(p.memory === undefined ? {} : { memory: p.memory }),
      ...(p.swap === undefined ? {} : { swap: p.swap }),
    })),
  };
}

/** The summary a `/stats/summary` request asks for. */
export async function summaryFor(
  provider: SummaryProvider,
  method: string,
  query: URLSearchParams,
): Promise<Summary> {
  if (onlyCpuAndMemoryRequested(query)) {
    return provider.getCpuAndMemory !== undefined
      ? provider.getCpuAndMemory()
      : cpuAndMemoryOnly(await provider.get(false));
  }
  return provider.get(method === 'POST');
}
