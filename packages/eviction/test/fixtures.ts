// Builders for the eviction tests: a fake Summary the tests mutate between rounds, pods, and
// a recording pod killer.
import type { V1Pod } from '@kubernetes/client-node';
import type { PodStats, Summary, SummaryProvider, SummaryScope } from '@nodeagent/stats';
import type { EvictionStatus, PodKiller } from '../src/index.js';

export const Mi = 1024 * 1024;
export const Gi = 1024 * Mi;

/** A mutable node summary; `time` advances on every `get`, as fresh stats would. */
export class FakeSummary implements SummaryProvider {
  memoryAvailable: number | undefined = 2 * Gi;
  memoryWorkingSet = 6 * Gi;
  allocatableAvailable: number | undefined;
  allocatableWorkingSet = 0;
  nodefs: { available: number; capacity: number; inodesFree: number; inodes: number } | undefined = {
    available: 50 * Gi,
    capacity: 100 * Gi,
    inodesFree: 900_000,
    inodes: 1_000_000,
  };
  imagefs: { available: number; capacity: number; inodesFree: number; inodes: number } | undefined;
  containerfs: { available: number; capacity: number; inodesFree: number; inodes: number } | undefined;
  pid: { maxpid: number; curproc: number } | undefined = { maxpid: 32_768, curproc: 300 };
  pods: PodStats[] = [];
  calls = 0;
  /** Calls that asked for the pods (no scope, or `pods` not false). */
  podCalls = 0;
  fail = false;
  /** Fail only the calls that ask for the pods. */
  failPods = false;
  /** Called on every get (e.g. to model a GC that freed space). */
  onGet: (() => void) | undefined;
  constructor(readonly now: () => number) {}

  async get(_update: boolean, scope?: SummaryScope): Promise<Summary> {
    const withPods = scope?.pods !== false;
    this.calls += 1;
    if (withPods) this.podCalls += 1;
    this.onGet?.();
    if (this.fail || (withPods && this.failPods)) throw new Error('stats unavailable');
    const time = new Date(this.now()).toISOString();
    const fs = (f: NonNullable<FakeSummary['nodefs']>) => ({
      time,
      availableBytes: f.available,
      capacityBytes: f.capacity,
      usedBytes: f.capacity - f.available,
      inodesFree: f.inodesFree,
      inodes: f.inodes,
      inodesUsed: f.inodes - f.inodesFree,
    });
    return {
      node: {
        nodeName: 'node-1',
        startTime: time,
        ...(this.memoryAvailable !== undefined
          ? { memory: { time, availableBytes: this.memoryAvailable, workingSetBytes: this.memoryWorkingSet } }
          : {}),
        ...(this.allocatableAvailable !== undefined
          ? {
              systemContainers: [
                {
                  name: 'pods',
                  startTime: time,
                  memory: {
                    time,
                    availableBytes: this.allocatableAvailable,
                    workingSetBytes: this.allocatableWorkingSet,
                  },
                },
              ],
            }
          : {}),
        ...(this.nodefs !== undefined ? { fs: fs(this.nodefs) } : {}),
        ...(this.imagefs !== undefined || this.containerfs !== undefined
          ? {
              runtime: {
                ...(this.imagefs !== undefined ? { imageFs: fs(this.imagefs) } : {}),
                ...(this.containerfs !== undefined ? { containerFs: fs(this.containerfs) } : {}),
              },
            }
          : {}),
        ...(this.pid !== undefined ? { rlimit: { time, ...this.pid } } : {}),
      },
      pods: withPods ? this.pods : [],
    };
  }
}

export interface PodSpecOptions {
  priority?: number;
  memoryRequest?: string;
  storageRequest?: string;
  annotations?: Record<string, string>;
  terminationGracePeriodSeconds?: number;
  containers?: string[];
  volumes?: V1Pod['spec'] extends infer S ? (S extends { volumes?: infer V } ? V : never) : never;
}

export function pod(name: string, o: PodSpecOptions = {}): V1Pod {
  const requests: Record<string, string> = {};
  if (o.memoryRequest !== undefined) requests.memory = o.memoryRequest;
  if (o.storageRequest !== undefined) requests['ephemeral-storage'] = o.storageRequest;
  return {
    metadata: {
      name,
      namespace: 'default',
      uid: `uid-${name}`,
      ...(o.annotations ? { annotations: o.annotations } : {}),
    },
    spec: {
      ...(o.priority !== undefined ? { priority: o.priority } : {}),
      ...(o.terminationGracePeriodSeconds !== undefined
        ? { terminationGracePeriodSeconds: o.terminationGracePeriodSeconds }
        : {}),
      ...(o.volumes ? { volumes: o.volumes } : {}),
      containers: (o.containers ?? [name]).map((c) => ({
        name: c,
        image: 'busybox',
        ...(Object.keys(requests).length > 0 ? { resources: { requests } } : {}),
      })),
    },
  };
}

export interface PodUsage {
  memory?: number;
  rootfs?: number;
  logs?: number;
  rootfsInodes?: number;
  logsInodes?: number;
  processes?: number;
  volumes?: { name: string; used: number; inodes?: number }[];
}

/** Stats of `p`, all usage in its first container. */
export function podStats(p: V1Pod, u: PodUsage): PodStats {
  const time = '2026-01-01T00:00:00Z';
  const name = p.spec?.containers[0]?.name ?? 'c';
  return {
    podRef: {
      name: p.metadata?.name ?? '',
      namespace: p.metadata?.namespace ?? '',
      uid: p.metadata?.uid ?? '',
    },
    startTime: time,
    containers: [
      {
        name,
        startTime: time,
        ...(u.memory !== undefined ? { memory: { time, workingSetBytes: u.memory } } : {}),
        rootfs: { time, usedBytes: u.rootfs ?? 0, inodesUsed: u.rootfsInodes ?? 0 },
        logs: { time, usedBytes: u.logs ?? 0, inodesUsed: u.logsInodes ?? 0 },
      },
    ],
    ...(u.memory !== undefined ? { memory: { time, workingSetBytes: u.memory } } : {}),
    ...(u.processes !== undefined ? { process_stats: { process_count: u.processes } } : {}),
    ...(u.volumes
      ? {
          volume: u.volumes.map((v) => ({
            time,
            name: v.name,
            usedBytes: v.used,
            inodesUsed: v.inodes ?? 0,
          })),
        }
      : {}),
  };
}

export interface Kill {
  pod: string;
  graceSeconds: number;
  status: EvictionStatus;
}

export class RecordingKiller implements PodKiller {
  readonly kills: Kill[] = [];
  fail = false;
  async killPod(p: V1Pod, graceSeconds: number, status: EvictionStatus): Promise<void> {
    this.kills.push({ pod: p.metadata?.name ?? '', graceSeconds, status });
    if (this.fail) throw new Error('kill failed');
  }
}
