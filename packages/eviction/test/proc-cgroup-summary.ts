// A test-local SummaryProvider for the real-node eviction test, until @nodeagent/stats lands:
// node memory from /proc/meminfo (available = MemAvailable, working set = MemTotal −
// MemAvailable) and each pod's working set from its containers' memory cgroups (usage −
// inactive_file, as cAdvisor), found through the container's PID (CRI verbose status) and
// /proc/<pid>/cgroup. cgroup v1 and v2 are both read. Not a replacement for the stats package:
// no CPU, filesystems or PIDs.
import { readFile } from 'node:fs/promises';
import type { CriClient } from '@nodeagent/cri';
import { ContainerState } from '@nodeagent/cri';
import type { PodStats, Summary, SummaryProvider } from '@nodeagent/stats';

export interface PodRef {
  readonly name: string;
  readonly namespace: string;
  readonly uid: string;
}

async function meminfo(): Promise<Map<string, number>> {
  const out = new Map<string, number>();
  for (const line of (await readFile('/proc/meminfo', 'utf8')).split('\n')) {
    const m = /^(\w+):\s+(\d+) kB/.exec(line);
    if (m) out.set(m[1] as string, Number(m[2]) * 1024);
  }
  return out;
}

/** MemAvailable, bytes. */
export async function memAvailableBytes(): Promise<number> {
  return (await meminfo()).get('MemAvailable') ?? 0;
}

/** The memory cgroup directory of a process (v1 memory controller, or the v2 unified one). */
export async function memoryCgroupDir(pid: number): Promise<{ dir: string; v2: boolean }> {
  const lines = (await readFile(`/proc/${pid}/cgroup`, 'utf8')).trim().split('\n');
  for (const l of lines) {
    const [, controllers, path] = l.split(':');
    if (controllers?.split(',').includes('memory')) return { dir: `/sys/fs/cgroup/memory${path}`, v2: false };
  }
  const unified = lines.find((l) => l.startsWith('0::'));
  if (unified) return { dir: `/sys/fs/cgroup${unified.slice(3)}`, v2: true };
  throw new Error(`no memory cgroup for pid ${pid}`);
}

/** usage − inactive_file of a memory cgroup, bytes. */
export async function workingSetBytes(cg: { dir: string; v2: boolean }): Promise<number> {
  const usage = Number(
    (await readFile(`${cg.dir}/${cg.v2 ? 'memory.current' : 'memory.usage_in_bytes'}`, 'utf8')).trim(),
  );
  const stat = await readFile(`${cg.dir}/memory.stat`, 'utf8');
  const key = cg.v2 ? 'inactive_file' : 'total_inactive_file';
  const inactive = Number(new RegExp(`^${key} (\\d+)$`, 'm').exec(stat)?.[1] ?? 0);
  return Math.max(0, usage - inactive);
}

/** The PID of a running container (CRI verbose ContainerStatus `info.pid`). */
export async function containerPid(cri: CriClient, containerId: string): Promise<number> {
  const res = await cri.runtime.containerStatus({ containerId, verbose: true });
  const info = JSON.parse(res.info.info ?? '{}') as { pid?: number };
  if (!info.pid) throw new Error(`no pid for container ${containerId}`);
  return info.pid;
}

/** A SummaryProvider over /proc/meminfo and the pods' container cgroups. */
export function procCgroupSummary(cri: CriClient, pods: () => readonly PodRef[]): SummaryProvider {
  return {
    async get(): Promise<Summary> {
      const time = new Date().toISOString();
      const mem = await meminfo();
      const total = mem.get('MemTotal') ?? 0;
      const available = mem.get('MemAvailable') ?? 0;
      const podStats: PodStats[] = [];
      for (const p of pods()) {
        const { containers } = await cri.runtime.listContainers({
          filter: { labelSelector: { 'io.kubernetes.pod.uid': p.uid } },
        });
        const cs = [];
        let podWs = 0;
        for (const c of containers) {
          if (c.state !== ContainerState.CONTAINER_RUNNING) continue;
          const ws = await workingSetBytes(await memoryCgroupDir(await containerPid(cri, c.id)));
          podWs += ws;
          cs.push({ name: c.metadata?.name ?? '', startTime: time, memory: { time, workingSetBytes: ws } });
        }
        podStats.push({
          podRef: { ...p },
          startTime: time,
          containers: cs,
          memory: { time, workingSetBytes: podWs },
        });
      }
      return {
        node: {
          nodeName: 'real',
          startTime: time,
          memory: { time, availableBytes: available, workingSetBytes: total - available },
        },
        pods: podStats,
      };
    },
  };
}
