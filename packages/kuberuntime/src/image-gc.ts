/**
 * Image garbage collection as the kubelet's (`pkg/kubelet/images/image_gc_manager.go`): images
 * are tracked with the time first detected and last used; when the image filesystem's usage
 * reaches `imageGCHighThresholdPercent` (85), unused images are removed — least recently used
 * first, never one in use by any container (running or exited), never a pinned one, never
 * one detected less than `imageMinimumGCAge` (2 min) ago — until usage is back at
 * `imageGCLowThresholdPercent` (80). `deleteUnusedImages` (the eviction manager's node-level
 * reclaim) removes every eligible image.
 *
 * @module
 */
import { statfs } from 'node:fs/promises';
import {
  type Clock,
  createMetricFactory,
  InvalidOptionsError,
  type Logger,
  type MetricsOptions,
  noopLogger,
  realClock,
  StartOnce,
  type Timer,
} from '@nodeagent/core';
import type { CriClient } from '@nodeagent/cri';
import { errorMessage } from './errors.js';

/** Period of the kubelet's image GC: 5 minutes (`ImageGCPeriod`). */
export const IMAGE_GC_PERIOD_MS = 5 * 60_000;
/** Default `imageGCHighThresholdPercent`. */
export const DEFAULT_IMAGE_GC_HIGH_THRESHOLD_PERCENT = 85;
/** Default `imageGCLowThresholdPercent`. */
export const DEFAULT_IMAGE_GC_LOW_THRESHOLD_PERCENT = 80;
/** Default `imageMinimumGCAge` (`--minimum-image-ttl-duration`): 2 minutes. */
export const DEFAULT_IMAGE_MINIMUM_GC_AGE_MS = 2 * 60_000;

/** Capacity and availability of the image filesystem, bytes. */
export interface ImageFsStats {
  /** Total size. */
  readonly capacityBytes: number;
  /** Free for use. */
  readonly availableBytes: number;
}

/** Where the image GC reads the image filesystem's size (upstream `StatsProvider.ImageFsStats`). */
export interface ImageFsStatsProvider {
  /**
   * The image filesystem now; `undefined` when it cannot be measured from this host (the
   * runtime's mountpoint is not here, e.g. a fake or remote runtime): the GC pass is skipped.
   */
  imageFsStats(): Promise<ImageFsStats | undefined>;
}

/** The runtime calls the image GC makes. */
export interface ImageGCRuntime {
  /** `criClient.image` (ListImages, RemoveImage, ImageFsInfo). */
  readonly image: Pick<CriClient['image'], 'listImages' | 'removeImage' | 'imageFsInfo'>;
  /** `criClient.runtime` (ListContainers: images in use). */
  readonly runtime: Pick<CriClient['runtime'], 'listContainers'>;
}

/**
 * The image filesystem from CRI `ImageFsInfo` (its mountpoint) and `statfs` of that
 * mountpoint — what the kubelet's CRI stats provider does.
 */
export function criImageFsStats(image: Pick<CriClient['image'], 'imageFsInfo'>): ImageFsStatsProvider {
  return {
    async imageFsStats() {
      const info = await image.imageFsInfo({});
      const mountpoint = info.imageFilesystems[0]?.fsId?.mountpoint ?? '';
      if (mountpoint === '') throw new Error('ImageFsInfo returned no image filesystem');
      try {
        const s = await statfs(mountpoint);
        return { capacityBytes: s.blocks * s.bsize, availableBytes: s.bavail * s.bsize };
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
        throw err;
      }
    },
  };
}

/** The image GC policy with the kubelet's defaults. */
export interface ImageGCPolicy {
  /** `--image-gc-high-threshold`: disk usage percent that triggers GC; 100 disables periodic GC. Range: 0–100. @default 85 */
  readonly highThresholdPercent?: number;
  /** `--image-gc-low-threshold`: disk usage percent GC frees down to. Range: 0–100, ≤ high. @default 80 */
  readonly lowThresholdPercent?: number;
  /** `--minimum-image-ttl-duration`: minimum age of an unused image before removal, ms. @default 120000 */
  readonly minAgeMs?: number;
}

/** Options of {@link ImageGCManager}. */
export interface ImageGCManagerOptions extends ImageGCPolicy {
  /** The CRI services. */
  readonly cri: ImageGCRuntime;
  /** Size of the image filesystem. @default criImageFsStats(cri.image) */
  readonly imageFsStats?: ImageFsStatsProvider;
  /** Called when a periodic pass fails, with whether the previous one failed too (the kubelet records `ImageGCFailed` then). @default none */
  readonly onError?: (error: Error, previousFailed: boolean) => void;
  /** Called with an event-worthy problem: `FreeDiskSpaceFailed`, `InvalidDiskCapacity`. @default none */
  readonly onWarning?: (reason: 'FreeDiskSpaceFailed' | 'InvalidDiskCapacity', message: string) => void;
  /** Metrics (`kubelet_image_garbage_collected_total{reason}`). @default none */
  readonly metrics?: MetricsOptions;
  /** Period of `start()`'s loop, ms. Minimum: 1. @default 300000 */
  readonly periodMs?: number;
  /** @default realClock */
  readonly clock?: Clock;
  /** @default noopLogger */
  readonly logger?: Logger;
}

interface ImageRecord {
  firstDetectedMs: number;
  lastUsedMs: number | undefined;
  size: number;
  pinned: boolean;
}

/** Thrown when the image filesystem reports a capacity of 0. */
export class InvalidDiskCapacityError extends Error {
  override readonly name = 'InvalidDiskCapacityError';
  constructor() {
    super('invalid capacity 0 on image filesystem');
  }
}

/** The image garbage collector. */
export class ImageGCManager {
  readonly #o: ImageGCManagerOptions;
  readonly #clock: Clock;
  readonly #log: Logger;
  readonly #high: number;
  readonly #low: number;
  readonly #minAgeMs: number;
  readonly #fs: ImageFsStatsProvider;
  readonly #records = new Map<string, ImageRecord>();
  readonly #collected: ((reason: 'age' | 'space') => void) | undefined;
  readonly #once = new StartOnce('ImageGCManager');
  #timer: Timer | undefined;
  #running: Promise<void> | undefined;
  #previousFailed = false;

  /** @throws InvalidOptionsError with upstream's messages for thresholds out of range */
  constructor(options: ImageGCManagerOptions) {
    const high = options.highThresholdPercent ?? DEFAULT_IMAGE_GC_HIGH_THRESHOLD_PERCENT;
    const low = options.lowThresholdPercent ?? DEFAULT_IMAGE_GC_LOW_THRESHOLD_PERCENT;
    if (!(high >= 0 && high <= 100)) {
      throw new InvalidOptionsError(
        'ImageGCManager',
        `invalid HighThresholdPercent ${high}, must be in range [0-100]`,
      );
    }
    if (!(low >= 0 && low <= 100)) {
      throw new InvalidOptionsError(
        'ImageGCManager',
        `invalid LowThresholdPercent ${low}, must be in range [0-100]`,
      );
    }
    if (low > high) {
      throw new InvalidOptionsError(
        'ImageGCManager',
        `LowThresholdPercent ${low} can not be higher than HighThresholdPercent ${high}`,
      );
    }
    const period = options.periodMs ?? IMAGE_GC_PERIOD_MS;
    if (!(period >= 1))
      throw new InvalidOptionsError('ImageGCManager', `periodMs must be >= 1, got ${period}`);
    this.#o = options;
    this.#clock = options.clock ?? realClock;
    this.#log = (options.logger ?? noopLogger).child({ component: 'image-gc' });
    this.#high = high;
    this.#low = low;
    this.#minAgeMs = options.minAgeMs ?? DEFAULT_IMAGE_MINIMUM_GC_AGE_MS;
    this.#fs = options.imageFsStats ?? criImageFsStats(options.cri.image);
    if (options.metrics !== undefined) {
      const counter = createMetricFactory(options.metrics).counter({
        name: 'kubelet_image_garbage_collected_total',
        help: 'Total number of images garbage collected by the kubelet, whether through disk usage or image age.',
        labelNames: ['reason'],
      });
      this.#collected = (reason) => counter.inc({ reason });
    }
  }

  /**
   * Detects images now and every period, and runs a GC pass every period (the kubelet's
   * `StartGarbageCollection`; with a high threshold of 100 only detection runs).
   */
  start(signal?: AbortSignal): Promise<void> {
    return this.#once.run(
      signal,
      async () => {
        const tick = (): void => {
          if (this.#running !== undefined) return;
          this.#running = this.#tick().finally(() => {
            this.#running = undefined;
          });
        };
        tick();
        this.#timer = this.#clock.setInterval(tick, this.#o.periodMs ?? IMAGE_GC_PERIOD_MS);
      },
      () => this.stop(),
    );
  }

  async #tick(): Promise<void> {
    try {
      if (this.#high === 100) {
        await this.detectImages(this.#clock.now());
        return;
      }
      await this.garbageCollect();
      this.#previousFailed = false;
    } catch (err) {
      const e = err instanceof Error ? err : new Error(String(err));
      this.#log.error({ err: e.message }, 'Image garbage collection failed');
      this.#o.onError?.(e, this.#previousFailed);
      this.#previousFailed = true;
    }
  }

  /** Stops the loop and waits for a pass in progress. */
  async stop(): Promise<void> {
    this.#timer?.cancel();
    this.#timer = undefined;
    await this.#running;
  }

  /**
   * Records the images present (first detected now for new ones) and marks those used by any
   * container as used now; forgets images gone from the runtime. Resolves with the IDs in use.
   */
  async detectImages(detectMs: number): Promise<Set<string>> {
    const { images } = await this.#o.cri.image.listImages({});
    const { containers } = await this.#o.cri.runtime.listContainers({});
    const inUse = new Set<string>();
    for (const c of containers) {
      for (const id of [c.imageId, c.imageRef]) if (id) inUse.add(id);
    }
    const now = this.#clock.now();
    const present = new Set<string>();
    for (const image of images) {
      present.add(image.id);
      let record = this.#records.get(image.id);
      if (record === undefined) {
        record = { firstDetectedMs: detectMs, lastUsedMs: undefined, size: 0, pinned: false };
        this.#records.set(image.id, record);
      }
      if (inUse.has(image.id)) record.lastUsedMs = now;
      record.size = Number(image.size);
      record.pinned = image.pinned;
    }
    for (const id of [...this.#records.keys()]) if (!present.has(id)) this.#records.delete(id);
    return inUse;
  }

  /** Unused, unpinned images, least recently used first, ties by first detected (upstream `imagesInEvictionOrder`). */
  async #imagesInEvictionOrder(freeMs: number): Promise<{ id: string; record: ImageRecord }[]> {
    const inUse = await this.detectImages(freeMs);
    const out: { id: string; record: ImageRecord }[] = [];
    for (const [id, record] of this.#records) {
      if (inUse.has(id) || record.pinned) continue;
      out.push({ id, record: { ...record } });
    }
    const used = (r: ImageRecord): number => r.lastUsedMs ?? Number.NEGATIVE_INFINITY;
    return out.sort((a, b) =>
      used(a.record) === used(b.record)
        ? a.record.firstDetectedMs - b.record.firstDetectedMs
        : used(a.record) - used(b.record),
    );
  }

  /** Removes eligible images until `bytesToFree` are freed; resolves with the bytes freed. */
  async #freeSpace(
    bytesToFree: number,
    freeMs: number,
    images: { id: string; record: ImageRecord }[],
  ): Promise<number> {
    const errors: string[] = [];
    let freed = 0;
    for (const { id, record } of images) {
      if (record.lastUsedMs !== undefined && record.lastUsedMs >= freeMs) continue;
      if (freeMs - record.firstDetectedMs < this.#minAgeMs) continue;
      try {
        await this.#o.cri.image.removeImage({ image: { image: id } });
        this.#records.delete(id);
        this.#collected?.('space');
        this.#log.info({ imageID: id, size: record.size }, 'Removing image to free bytes');
      } catch (err) {
        errors.push(errorMessage(err));
        continue;
      }
      freed += record.size;
      if (freed >= bytesToFree) break;
    }
    if (errors.length > 0) {
      throw new Error(
        `wanted to free ${bytesToFree} bytes, but freed ${freed} bytes space with errors in image deletion: [${errors.join(', ')}]`,
      );
    }
    return freed;
  }

  /**
   * One pass (upstream `GarbageCollect`): when usage ≥ the high threshold, frees down to the
   * low threshold.
   * @throws when the capacity is 0, a removal fails, or not enough could be freed
   */
  async garbageCollect(): Promise<void> {
    const freeMs = this.#clock.now();
    const images = await this.#imagesInEvictionOrder(freeMs);
    const fs = await this.#fs.imageFsStats();
    if (fs === undefined) {
      this.#log.debug(
        {},
        'Image filesystem not measurable from this host, skipping image garbage collection',
      );
      return;
    }
    const capacity = Math.trunc(fs.capacityBytes);
    let available = Math.trunc(fs.availableBytes);
    if (available > capacity) available = capacity;
    if (capacity === 0) {
      const err = new InvalidDiskCapacityError();
      this.#o.onWarning?.('InvalidDiskCapacity', err.message);
      throw err;
    }
    const usagePercent = 100 - Math.trunc((available * 100) / capacity);
    if (usagePercent < this.#high) return;
    const amountToFree = Math.trunc((capacity * (100 - this.#low)) / 100) - available;
    this.#log.info(
      { usage: usagePercent, highThreshold: this.#high, amountToFree, lowThreshold: this.#low },
      'Disk usage on image filesystem is over the high threshold, trying to free bytes down to the low threshold',
    );
    const freed = await this.#freeSpace(amountToFree, freeMs, images);
    if (freed < amountToFree) {
      const message = `Failed to garbage collect required amount of images. Attempted to free ${amountToFree} bytes, but only found ${freed} bytes eligible to free.`;
      this.#o.onWarning?.('FreeDiskSpaceFailed', message);
      throw new Error(message);
    }
  }

  /** Removes every eligible image (the eviction manager's node-level reclaim). */
  async deleteUnusedImages(): Promise<void> {
    const freeMs = this.#clock.now();
    const images = await this.#imagesInEvictionOrder(freeMs);
    await this.#freeSpace(Number.MAX_SAFE_INTEGER, freeMs, images);
  }
}
