/**
 * Pod volume statistics (upstream `fs_resource_analyzer.go` and `volume_stat_calculator.go`):
 * one calculator per pod measures its volumes — the disk usage of the volume's directory tree
 * (`du`: allocated blocks and inodes) plus `statfs` of the filesystem it lives on — at once,
 * then again a jittered period later (upstream `JitterUntil(period, 1.0, sliding)`: between
 * one and two periods after the previous pass ended). Volumes whose content only the kubelet
 * writes (configMap, secret, downwardAPI, projected) are measured once and reused, as
 * upstream's `CachedMetrics`. The analyzer starts a calculator for each pod the lister names
 * and stops those of pods gone, every period. The Summary reads the latest result.
 *
 * @module
 */
import { type Clock, type Logger, noopLogger, realClock, type Timer } from '@nodeagent/core';
import { statsTime } from './convert.js';
import { capacityOf, defaultStatfs, diskUsage, type StatfsFunction } from './filesystem.js';
import type { PVCReference, VolumeStats } from './summary-types.js';

/** The kubelet's `--volume-stats-agg-period` default, ms. */
export const DEFAULT_VOLUME_STATS_AGG_PERIOD_MS = 60_000;

/** One pod volume whose usage is measured. */
export interface MeasuredVolume {
  /** The pod spec's volume name (`volume[].name`). */
  readonly name: string;
  /** The host directory the volume is set up in. */
  readonly path: string;
  /** Measure once and reuse (upstream `CachedMetrics`: configMap, secret, downwardAPI, projected). @default false */
  readonly cached?: boolean;
  /** The claim behind the volume: reported as a persistent volume with `pvcRef`. @default none (ephemeral) */
  readonly pvcRef?: PVCReference;
}

/** Where the analyzer learns pods and their volumes (upstream `GetPods` and `ListVolumesForPod`). */
export interface PodVolumeLister {
  /** UIDs of the pods whose volumes are measured. */
  podUids(): readonly string[];
  /** The pod's volumes that report usage (hostPath, for one, does not). */
  volumesForPod(uid: string): readonly MeasuredVolume[];
}

/** A pod's volume stats (upstream `PodVolumeStats`). */
export interface PodVolumeStats {
  /** Volumes without a claim (emptyDir, configMap, secret, ...): they count toward ephemeral storage. */
  readonly ephemeralVolumes: readonly VolumeStats[];
  /** Volumes backed by a PersistentVolumeClaim. */
  readonly persistentVolumes: readonly VolumeStats[];
}

/** Options of {@link FsResourceAnalyzer}. */
export interface FsResourceAnalyzerOptions {
  /** The pods and their volumes. */
  readonly lister: PodVolumeLister;
  /** `--volume-stats-agg-period`, ms. Minimum: 1000. @default 60_000 */
  readonly periodMs?: number;
  /** `statfs(2)`. @default fs.promises.statfs */
  readonly statfs?: StatfsFunction;
  /** A number in [0, 1) for the jitter. @default Math.random */
  readonly random?: () => number;
  /** Called for each volume that could not be measured. @default none */
  readonly onError?: (path: string, reason: string) => void;
  /** @default realClock */
  readonly clock?: Clock;
  /** @default noopLogger */
  readonly logger?: Logger;
}

interface Measurement {
  readonly timeMs: number;
  readonly usedBytes: number;
  readonly inodesUsed: number;
  readonly capacityBytes: number;
  readonly availableBytes: number;
  readonly inodes: number;
  readonly inodesFree: number;
}

/** Measures one pod's volumes on its own jittered period. */
class VolumeStatCalculator {
  #timer: Timer | undefined;
  #stopped = false;
  #latest: PodVolumeStats | undefined;
  readonly #cached = new Map<string, Measurement>();

  constructor(
    private readonly uid: string,
    private readonly o: Required<Omit<FsResourceAnalyzerOptions, 'onError' | 'logger'>> &
      Pick<FsResourceAnalyzerOptions, 'onError'> & { readonly log: Logger },
  ) {}

  get latest(): PodVolumeStats | undefined {
    return this.#latest;
  }

  /** The first pass now, the next ones a jittered period after each ends. */
  start(): void {
    this.#schedule(0);
  }

  stop(): void {
    this.#stopped = true;
    this.#timer?.cancel();
    this.#timer = undefined;
  }

  #schedule(delayMs: number): void {
    if (this.#stopped) return;
    this.#timer = this.o.clock.setTimeout(() => {
      this.#timer = undefined;
      void this.calcAndStore()
        .catch((err: unknown) => this.o.log.error({ err, uid: this.uid }, 'volume stats failed'))
        .finally(() => this.#schedule(this.o.periodMs * (1 + this.o.random())));
    }, delayMs);
    this.#timer.unref();
  }

  async #measure(v: MeasuredVolume): Promise<Measurement | undefined> {
    const hit = v.cached ? this.#cached.get(v.name) : undefined;
    if (hit !== undefined) return hit;
    const timeMs = this.o.clock.now();
    const du = await diskUsage(v.path);
    if (du === undefined) {
      this.o.onError?.(v.path, 'volume directory missing');
      return undefined;
    }
    let fs: ReturnType<typeof capacityOf>;
    try {
      fs = capacityOf(await this.o.statfs(v.path));
    } catch (err) {
      this.o.onError?.(v.path, (err as Error).message);
      return undefined;
    }
    const m: Measurement = {
      timeMs,
      usedBytes: du.usedBytes,
      inodesUsed: du.inodesUsed,
      capacityBytes: fs.capacityBytes,
      availableBytes: fs.availableBytes,
      inodes: fs.inodes,
      inodesFree: fs.inodesFree,
    };
    if (v.cached) this.#cached.set(v.name, m);
    return m;
  }

  /** One pass over the pod's volumes (upstream `calcAndStoreStats`). */
  async calcAndStore(): Promise<void> {
    const volumes = this.o.lister.volumesForPod(this.uid);
    const names = new Set(volumes.map((v) => v.name));
    for (const name of this.#cached.keys()) if (!names.has(name)) this.#cached.delete(name);
    const measured = await Promise.all(volumes.map((v) => this.#measure(v)));
    const ephemeralVolumes: VolumeStats[] = [];
    const persistentVolumes: VolumeStats[] = [];
    for (const [i, v] of volumes.entries()) {
      const m = measured[i];
      if (m === undefined) continue;
      const stat: VolumeStats = {
        time: statsTime(m.timeMs),
        availableBytes: m.availableBytes,
        capacityBytes: m.capacityBytes,
        usedBytes: m.usedBytes,
        inodesFree: m.inodesFree,
        inodes: m.inodes,
        inodesUsed: m.inodesUsed,
        name: v.name,
        ...(v.pvcRef === undefined ? {} : { pvcRef: v.pvcRef }),
      };
      (v.pvcRef === undefined ? ephemeralVolumes : persistentVolumes).push(stat);
    }
    if (!this.#stopped) this.#latest = { ephemeralVolumes, persistentVolumes };
  }
}

/** Thrown for a volume stats period under 1 s. */
export class VolumeStatsOptionsError extends Error {
  override readonly name = 'VolumeStatsOptionsError';
  /** @param periodMs the rejected period. */
  constructor(readonly periodMs: number) {
    super(`volume stats period: must be ≥ 1000 ms, got ${periodMs}`);
  }
}

/**
 * The kubelet's fsResourceAnalyzer: keeps one {@link PodVolumeStats} per pod, refreshed on a
 * jittered period, for the Summary's `pods[].volume` and ephemeral storage.
 *
 * @example
 * ```ts
 * const analyzer = new FsResourceAnalyzer({ lister: { podUids: () => ['uid-1'], volumesForPod: () => [{ name: 'data', path: '/var/lib/kubelet/pods/uid-1/volumes/kubernetes.io~empty-dir/data' }] } });
 * analyzer.start();
 * analyzer.podVolumeStats('uid-1'); // undefined until the first pass ends
 * ```
 */
export class FsResourceAnalyzer {
  readonly #calculators = new Map<string, VolumeStatCalculator>();
  readonly #o: ConstructorParameters<typeof VolumeStatCalculator>[1];
  #timer: Timer | undefined;

  /** @throws {@link VolumeStatsOptionsError} for a period under 1 s. */
  constructor(options: FsResourceAnalyzerOptions) {
    const periodMs = options.periodMs ?? DEFAULT_VOLUME_STATS_AGG_PERIOD_MS;
    if (!(periodMs >= 1000)) throw new VolumeStatsOptionsError(periodMs);
    this.#o = {
      lister: options.lister,
      periodMs,
      statfs: options.statfs ?? defaultStatfs,
      random: options.random ?? Math.random,
      clock: options.clock ?? realClock,
      log: (options.logger ?? noopLogger).child({ component: 'volume-stats' }),
      ...(options.onError === undefined ? {} : { onError: options.onError }),
    };
  }

  /** Starts calculators for the listed pods now and re-reads the pod list every period. Idempotent. */
  start(): void {
    if (this.#timer !== undefined) return;
    this.updateCachedPodVolumeStats();
    this.#timer = this.#o.clock
      .setInterval(() => this.updateCachedPodVolumeStats(), this.#o.periodMs)
      .unref();
  }

  /** Stops every calculator. Idempotent. */
  stop(): void {
    this.#timer?.cancel();
    this.#timer = undefined;
    for (const c of this.#calculators.values()) c.stop();
    this.#calculators.clear();
  }

  /** Starts calculators of new pods and stops those of pods no longer listed (upstream `updateCachedPodVolumeStats`). */
  updateCachedPodVolumeStats(): void {
    const uids = new Set(this.#o.lister.podUids());
    for (const [uid, c] of this.#calculators) {
      if (uids.has(uid)) continue;
      c.stop();
      this.#calculators.delete(uid);
    }
    for (const uid of uids) {
      if (this.#calculators.has(uid)) continue;
      const c = new VolumeStatCalculator(uid, this.#o);
      this.#calculators.set(uid, c);
      c.start();
    }
  }

  /** The pod's latest volume stats; `undefined` before its first pass ended (upstream `GetPodVolumeStats`). */
  podVolumeStats(uid: string): PodVolumeStats | undefined {
    return this.#calculators.get(uid)?.latest;
  }
}
