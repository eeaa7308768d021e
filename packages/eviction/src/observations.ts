/**
 * Signal observations from a Summary (upstream `makeSignalObservations`): for each signal the
 * amount available, the capacity percentages refer to, and the time the stats were taken.
 *
 * @module
 */
import type { FsStats, PodStats, Summary } from '@nodeagent/stats';
import type { QuantityFormat } from './quantity-format.js';
import type { Signal } from './signals.js';

/** What was observed for one signal. */
export interface SignalObservation {
  /** Amount available now (bytes, inodes or PIDs). */
  readonly available: bigint;
  /** The total the percentages refer to. */
  readonly capacity: bigint;
  /** How `available` prints in messages. */
  readonly format: QuantityFormat;
  /** When the stats were taken, ms since the epoch; undefined when the summary gave no time. */
  readonly timeMs: number | undefined;
}

/** Observations per signal. */
export type SignalObservations = ReadonlyMap<Signal, SignalObservation>;

/** The stats of an active pod, by UID (upstream `statsFunc`). */
export type PodStatsLookup = (uid: string) => PodStats | undefined;

function timeOf(text: string | undefined): number | undefined {
  if (text === undefined || text === '') return undefined;
  const ms = Date.parse(text);
  return Number.isNaN(ms) ? undefined : ms;
}

function big(n: number): bigint {
  return BigInt(Math.trunc(n));
}

function addFs(
  out: Map<Signal, SignalObservation>,
  fs: FsStats | undefined,
  bytes: Signal,
  inodes: Signal,
): void {
  if (fs === undefined) return;
  const timeMs = timeOf(fs.time);
  if (fs.availableBytes !== undefined && fs.capacityBytes !== undefined) {
    out.set(bytes, {
      available: big(fs.availableBytes),
      capacity: big(fs.capacityBytes),
      format: 'BinarySI',
      timeMs,
    });
  }
  if (fs.inodesFree !== undefined && fs.inodes !== undefined) {
    out.set(inodes, { available: big(fs.inodesFree), capacity: big(fs.inodes), format: 'DecimalSI', timeMs });
  }
}

/**
 * The observations of a summary and a lookup of pod stats by UID. A signal whose stats are
 * missing from the summary has no observation (its thresholds are skipped, as upstream).
 */
export function makeSignalObservations(summary: Summary): {
  observations: Map<Signal, SignalObservation>;
  podStats: PodStatsLookup;
} {
  const out = new Map<Signal, SignalObservation>();
  const memory = summary.node.memory;
  if (memory?.availableBytes !== undefined && memory.workingSetBytes !== undefined) {
    out.set('memory.available', {
      available: big(memory.availableBytes),
      capacity: big(memory.availableBytes + memory.workingSetBytes),
      format: 'BinarySI',
      timeMs: timeOf(memory.time),
    });
  }
  const pods = summary.node.systemContainers?.find((c) => c.name === 'pods')?.memory;
  if (pods?.availableBytes !== undefined && pods.workingSetBytes !== undefined) {
    out.set('allocatableMemory.available', {
      available: big(pods.availableBytes),
      capacity: big(pods.availableBytes + pods.workingSetBytes),
      format: 'BinarySI',
      timeMs: timeOf(pods.time),
    });
  }
  addFs(out, summary.node.fs, 'nodefs.available', 'nodefs.inodesFree');
  addFs(out, summary.node.runtime?.imageFs, 'imagefs.available', 'imagefs.inodesFree');
  addFs(out, summary.node.runtime?.containerFs, 'containerfs.available', 'containerfs.inodesFree');
  const rlimit = summary.node.rlimit;
  if (rlimit?.maxpid !== undefined && rlimit.curproc !== undefined) {
    out.set('pid.available', {
      available: big(rlimit.maxpid - rlimit.curproc),
      capacity: big(rlimit.maxpid),
      format: 'DecimalSI',
      timeMs: timeOf(rlimit.time),
    });
  }
  const byUid = new Map<string, PodStats>();
  for (const p of summary.pods) byUid.set(p.podRef.uid, p);
  return { observations: out, podStats: (uid) => byUid.get(uid) };
}
