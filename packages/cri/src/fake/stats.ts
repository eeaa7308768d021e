/**
 * Resource usage the fake reports for containers and sandboxes. Numbers follow from
 * each container's configured usage and its run time on the fake clock, so tests can
 * predict them: CPU time = cores × running time; memory = the working set while running.
 *
 * @module
 */
import {
  ContainerState,
  type ContainerStats,
  type CpuUsage,
  type FilesystemUsage,
  type MemoryUsage,
  type PodSandboxStats,
} from '../gen/runtime/v1/api.js';
import type { ContainerRecord, SandboxRecord } from './records.js';

/** Where the fake claims images and writable layers live. */
export const FAKE_SNAPSHOTTER_MOUNT = '/var/lib/fake-runtime/io.containerd.snapshotter.v1.overlayfs';
/** Bytes of a container's writable layer. */
const WRITABLE_LAYER_BYTES = 8192n;

const u64 = (value: bigint | number): { value: bigint } => ({ value: BigInt(value) });

function cpuOf(c: ContainerRecord, nowNs: bigint): CpuUsage | undefined {
  if (c.startedAtNs === 0n) return undefined;
  const end = c.state === ContainerState.CONTAINER_RUNNING ? nowNs : c.finishedAtNs;
  // Whole milliseconds of the clock: the ns tie-breakers of NanoClock are not run time.
  const ranMs = end / 1_000_000n - c.startedAtNs / 1_000_000n;
  const ranNs = ranMs > 0n ? ranMs * 1_000_000n : 0n;
  const millicores = BigInt(Math.round(c.usage.cpuCores * 1000));
  const running = c.state === ContainerState.CONTAINER_RUNNING;
  return {
    timestamp: nowNs,
    usageCoreNanoSeconds: u64((ranNs * millicores) / 1000n),
    usageNanoCores: u64(running ? millicores * 1_000_000n : 0n),
    psi: undefined,
  };
}

function memoryOf(c: ContainerRecord, nowNs: bigint): MemoryUsage {
  const bytes = c.state === ContainerState.CONTAINER_RUNNING ? c.usage.memoryWorkingSetBytes : 0;
  return {
    timestamp: nowNs,
    workingSetBytes: u64(bytes),
    availableBytes: undefined,
    usageBytes: u64(bytes),
    rssBytes: u64(bytes),
    pageFaults: u64(0),
    majorPageFaults: u64(0),
    psi: undefined,
  };
}

function writableLayerOf(nowNs: bigint): FilesystemUsage {
  return {
    timestamp: nowNs,
    fsId: { mountpoint: FAKE_SNAPSHOTTER_MOUNT },
    usedBytes: u64(WRITABLE_LAYER_BYTES),
    inodesUsed: u64(4),
  };
}

/** `ContainerStats` of one container at `nowNs`. */
export function containerStatsOf(c: ContainerRecord, nowNs: bigint): ContainerStats {
  return {
    attributes: {
      id: c.id,
      metadata: c.config.metadata === undefined ? undefined : { ...c.config.metadata },
      labels: { ...c.config.labels },
      annotations: { ...c.config.annotations },
    },
    cpu: cpuOf(c, nowNs),
    memory: memoryOf(c, nowNs),
    writableLayer: writableLayerOf(nowNs),
    swap: undefined,
    io: undefined,
  };
}

/** `PodSandboxStats` of one sandbox (sums over its containers) at `nowNs`. */
export function sandboxStatsOf(
  sandbox: SandboxRecord,
  containers: readonly ContainerRecord[],
  nowNs: bigint,
): PodSandboxStats {
  const perContainer = containers.map((c) => containerStatsOf(c, nowNs));
  let cpuNs = 0n;
  let nanoCores = 0n;
  let memory = 0n;
  for (const s of perContainer) {
    cpuNs += s.cpu?.usageCoreNanoSeconds?.value ?? 0n;
    nanoCores += s.cpu?.usageNanoCores?.value ?? 0n;
    memory += s.memory?.workingSetBytes?.value ?? 0n;
  }
  const running = containers.filter((c) => c.state === ContainerState.CONTAINER_RUNNING).length;
  return {
    attributes: {
      id: sandbox.id,
      metadata: sandbox.config.metadata === undefined ? undefined : { ...sandbox.config.metadata },
      labels: { ...sandbox.config.labels },
      annotations: { ...sandbox.config.annotations },
    },
    linux: {
      cpu: {
        timestamp: nowNs,
        usageCoreNanoSeconds: u64(cpuNs),
        usageNanoCores: u64(nanoCores),
        psi: undefined,
      },
      memory: {
        timestamp: nowNs,
        workingSetBytes: u64(memory),
        availableBytes: undefined,
        usageBytes: u64(memory),
        rssBytes: u64(memory),
        pageFaults: u64(0),
        majorPageFaults: u64(0),
        psi: undefined,
      },
      network: sandbox.hostNetwork
        ? undefined
        : {
            timestamp: nowNs,
            defaultInterface: {
              name: 'eth0',
              rxBytes: u64(0),
              rxErrors: u64(0),
              txBytes: u64(0),
              txErrors: u64(0),
            },
            interfaces: [],
          },
      process: { timestamp: nowNs, processCount: u64(running) },
      containers: perContainer,
      io: undefined,
    },
    windows: undefined,
  };
}
