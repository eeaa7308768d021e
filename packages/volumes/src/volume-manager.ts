/**
 * The kubelet's volume manager (upstream `pkg/kubelet/volumemanager`), without the Go
 * machinery: the pods given to {@link VolumeManager.waitForAttachAndMount} are the desired
 * state; each of their volumes used by a container is set up by its plugin (with a per-volume
 * exponential back-off, 500 ms to 2m2s, as upstream's pending operations); API-backed volumes
 * are set up again on every call and every `remountPeriodMs`; `unmountPodVolumes` tears a
 * pod's volumes down (found on disk, so it also works after a restart); orphaned pod
 * directories are removed.
 *
 * @module
 */
import { lstat, readdir, rm, rmdir } from 'node:fs/promises';
import { join } from 'node:path';
import type { V1Pod, V1Volume } from '@kubernetes/client-node';
import {
  type Clock,
  type Lifecycle,
  type Logger,
  noopLogger,
  realClock,
  StartOnce,
  type Timer,
} from '@nodeagent/core';
import { UnmountedVolumesError, VolumeError } from './errors.js';
import { ExecMounter } from './mounter.js';
import { DEFAULT_ROOT_DIR, podDir, podVolumesDir, unescapePluginNameFromDisk } from './paths.js';
import { tearDownEmptyDirAt } from './plugins/empty-dir.js';
import { DEFAULT_VOLUME_PLUGINS } from './plugins/index.js';
import { unsupportedVolumeError } from './plugins/unsupported.js';
import { TokenManager } from './token-manager.js';
import type { VolumeEventRecorder, VolumeManagerOptions } from './volume-manager-options.js';
import type { VolumeHost, VolumePlugin } from './volume-plugin.js';

/** A set-up volume of a pod. */
export interface MountedVolume {
  /** The pod spec's volume name. */
  readonly name: string;
  /** The plugin that set it up. */
  readonly pluginName: string;
  /** The host path containers mount. */
  readonly hostPath: string;
  /** Containers mount it read-only whatever the volumeMount says (API-backed volumes). */
  readonly readOnly: boolean;
}

interface BackOff {
  delayMs: number;
  retryAtMs: number;
  error: Error;
}

/** The volume names a pod's containers mount (upstream `GetPodVolumeNames`). */
export function podVolumeNamesInUse(pod: V1Pod): Set<string> {
  const names = new Set<string>();
  const spec = pod.spec;
  for (const c of [
    ...(spec?.initContainers ?? []),
    ...(spec?.containers ?? []),
    ...(spec?.ephemeralContainers ?? []),
  ]) {
    for (const m of c.volumeMounts ?? []) names.add(m.name);
    for (const d of c.volumeDevices ?? []) names.add(d.name);
  }
  return names;
}

function podRef(pod: V1Pod): string {
  return `${pod.metadata?.namespace ?? ''}/${pod.metadata?.name ?? ''}`;
}

function isNotFound(err: unknown): boolean {
  return (err as NodeJS.ErrnoException | undefined)?.code === 'ENOENT';
}

/** Sets up and tears down pods' volumes. */
export class VolumeManager implements Lifecycle {
  readonly #host: VolumeHost;
  readonly #plugins: readonly VolumePlugin[];
  readonly #recorder: VolumeEventRecorder | undefined;
  readonly #options: VolumeManagerOptions;
  readonly #clock: Clock;
  readonly #log: Logger;
  readonly #desired = new Map<string, V1Pod>();
  readonly #mounted = new Map<string, Map<string, MountedVolume>>();
  readonly #backOff = new Map<string, BackOff>();
  readonly #locks = new Map<string, Promise<unknown>>();
  readonly #once = new StartOnce('VolumeManager');
  #timer: Timer | undefined;
  #cleanupTimer: Timer | undefined;
  #cleaning = false;

  /** @param options see {@link VolumeManagerOptions} */
  constructor(options: VolumeManagerOptions) {
    this.#options = options;
    this.#clock = options.clock ?? realClock;
    this.#log = (options.logger ?? noopLogger).child({ component: 'volume-manager' });
    this.#plugins = options.plugins ?? DEFAULT_VOLUME_PLUGINS;
    this.#recorder = options.recorder;
    this.#host = {
      podsDir: options.podsDir ?? join(options.rootDir ?? DEFAULT_ROOT_DIR, 'pods'),
      mounter: options.mounter ?? new ExecMounter(),
      dataSource: options.dataSource,
      tokens: new TokenManager({ source: options.dataSource, clock: this.#clock, logger: this.#log }),
      nodeAllocatable: options.nodeAllocatable ?? (() => ({})),
      memoryMedium: options.memoryMedium ?? 'tmpfs',
      clock: this.#clock,
      logger: this.#log,
    };
  }

  /** `<root-dir>/pods`. */
  get podsDir(): string {
    return this.#host.podsDir;
  }

  /** The token manager (its cache, for tests and metrics). */
  get tokens(): TokenManager {
    return this.#host.tokens;
  }

  /** Starts the periodic remount, and the orphan clean-up when `podDirInUse` is given. */
  start(signal?: AbortSignal): Promise<void> {
    return this.#once.run(
      signal,
      async () => {
        const period = this.#options.remountPeriodMs ?? 60_000;
        this.#timer = this.#clock.setInterval(() => void this.#remountAll(), period);
        this.#timer.unref();
        const inUse = this.#options.podDirInUse;
        if (inUse !== undefined) {
          const every = this.#options.housekeepingPeriodMs ?? 2_000;
          this.#cleanupTimer = this.#clock.setInterval(() => void this.#cleanup(inUse), every);
          this.#cleanupTimer.unref();
        }
      },
      () => this.stop(),
    );
  }

  /** Stops the periodic work; mounted volumes stay. */
  async stop(): Promise<void> {
    this.#timer?.cancel();
    this.#timer = undefined;
    this.#cleanupTimer?.cancel();
    this.#cleanupTimer = undefined;
  }

  async #cleanup(inUse: (uid: string) => boolean): Promise<void> {
    if (this.#cleaning) return;
    this.#cleaning = true;
    try {
      await this.cleanupOrphanedPodDirs(inUse);
    } catch (err) {
      this.#log.error({ err: (err as Error).message }, 'Cleaning up orphaned pod directories failed');
    } finally {
      this.#cleaning = false;
    }
  }

  async #remountAll(): Promise<void> {
    for (const pod of [...this.#desired.values()]) {
      try {
        await this.#withLock(pod.metadata?.uid ?? '', () => this.#mountPod(pod, undefined, true));
      } catch (err) {
        this.#log.debug({ pod: podRef(pod), err: (err as Error).message }, 'Remount failed');
      }
    }
  }

  #withLock<T>(uid: string, fn: () => Promise<T>): Promise<T> {
    const prev = this.#locks.get(uid) ?? Promise.resolve();
    const next = prev.then(fn, fn);
    const settled = next.catch(() => undefined);
    this.#locks.set(uid, settled);
    void settled.then(() => {
      if (this.#locks.get(uid) === settled) this.#locks.delete(uid);
    });
    return next;
  }

  #pluginFor(volume: V1Volume): VolumePlugin | undefined {
    return this.#plugins.find((p) => p.canSupport(volume));
  }

  /**
   * Sets up every volume `pod`'s containers use (API-backed ones again, so updates land) and
   * resolves when all are ready — what the pod sync awaits before starting containers.
   * @throws UnmountedVolumesError listing what is not set up, with the plugins' messages
   */
  waitForAttachAndMount(pod: V1Pod, signal?: AbortSignal): Promise<void> {
    const uid = pod.metadata?.uid ?? '';
    this.#desired.set(uid, pod);
    return this.#withLock(uid, () => this.#mountPod(pod, signal, false));
  }

  async #mountPod(pod: V1Pod, signal: AbortSignal | undefined, remountOnly: boolean): Promise<void> {
    const uid = pod.metadata?.uid ?? '';
    if (this.#desired.get(uid) === undefined) return;
    const inUse = podVolumeNamesInUse(pod);
    const mounted = this.#mounted.get(uid) ?? new Map<string, MountedVolume>();
    this.#mounted.set(uid, mounted);
    const unmounted: string[] = [];
    const notProcessed: string[] = [];
    const messages: string[] = [];
    for (const volume of pod.spec?.volumes ?? []) {
      if (!inUse.has(volume.name)) continue;
      signal?.throwIfAborted();
      const plugin = this.#pluginFor(volume);
      if (plugin === undefined) {
        if (remountOnly) continue;
        unmounted.push(volume.name);
        notProcessed.push(volume.name);
        const err = unsupportedVolumeError(volume);
        messages.push(err.message);
        this.#failed(pod, volume.name, err, false);
        continue;
      }
      const current = mounted.get(volume.name);
      if (current !== undefined && !plugin.requiresRemount) continue;
      if (remountOnly && current === undefined) continue;
      const key = `${uid}/${volume.name}`;
      const backOff = this.#backOff.get(key);
      if (backOff !== undefined && this.#clock.now() < backOff.retryAtMs) {
        if (current === undefined) {
          unmounted.push(volume.name);
          messages.push(`MountVolume.SetUp failed for volume "${volume.name}" : ${backOff.error.message}`);
        }
        continue;
      }
      try {
        const dir = plugin.getPath(this.#host, pod, volume);
        await plugin.setUp(this.#host, { pod, volume, dir, signal });
        mounted.set(volume.name, {
          name: volume.name,
          pluginName: plugin.name,
          hostPath: dir,
          readOnly: plugin.readOnly,
        });
        this.#backOff.delete(key);
      } catch (caught) {
        const err = caught instanceof Error ? caught : new Error(String(caught));
        this.#failed(pod, volume.name, err, true);
        if (current === undefined) {
          unmounted.push(volume.name);
          messages.push(`MountVolume.SetUp failed for volume "${volume.name}" : ${err.message}`);
        }
      }
    }
    if (unmounted.length > 0) {
      throw new UnmountedVolumesError(
        podRef(pod),
        unmounted.sort(),
        notProcessed.sort(),
        messages.join('; '),
      );
    }
  }

  #failed(pod: V1Pod, volumeName: string, err: Error, backOff: boolean): void {
    const key = `${pod.metadata?.uid ?? ''}/${volumeName}`;
    const message = `MountVolume.SetUp failed for volume "${volumeName}" : ${err.message}`;
    if (backOff) {
      const initial = this.#options.initialBackOffMs ?? 500;
      const max = this.#options.maxBackOffMs ?? 122_000;
      const prev = this.#backOff.get(key);
      const delayMs = prev === undefined ? initial : Math.min(prev.delayMs * 2, max);
      this.#backOff.set(key, { delayMs, retryAtMs: this.#clock.now() + delayMs, error: err });
    }
    this.#log.warn({ pod: podRef(pod), volume: volumeName, err: err.message }, 'MountVolume.SetUp failed');
    this.#recorder?.(pod, 'Warning', 'FailedMount', message);
  }

  /** The set-up volumes of the pod `uid` by name (upstream `GetMountedVolumesForPod`). */
  getMountedVolumesForPod(uid: string): ReadonlyMap<string, MountedVolume> {
    return this.#mounted.get(uid) ?? new Map();
  }

  /** The back-off left for a volume, ms (0: none). */
  backOffRemainingMs(uid: string, volumeName: string): number {
    const b = this.#backOff.get(`${uid}/${volumeName}`);
    return b === undefined ? 0 : Math.max(0, b.retryAtMs - this.#clock.now());
  }

  /**
   * Tears down every volume of the pod `uid` — those on disk under `<pods>/<uid>/volumes`,
   * whether or not this process set them up — and forgets the pod. Call it once the pod's
   * containers are gone.
   * @throws VolumeError when a volume could not be torn down (the others still are)
   */
  unmountPodVolumes(uid: string): Promise<void> {
    this.#desired.delete(uid);
    return this.#withLock(uid, async () => {
      this.#desired.delete(uid);
      const errors: string[] = [];
      const volumesDir = podVolumesDir(this.#host.podsDir, uid);
      for (const pluginDir of await listDir(volumesDir)) {
        const pluginName = unescapePluginNameFromDisk(pluginDir);
        const plugin = this.#plugins.find((p) => p.name === pluginName);
        for (const name of await listDir(join(volumesDir, pluginDir))) {
          const dir = join(volumesDir, pluginDir, name);
          try {
            await (plugin ?? { tearDown: tearDownEmptyDirAt }).tearDown(this.#host, dir);
          } catch (err) {
            errors.push(
              `UnmountVolume.TearDown failed for volume "${name}" (${dir}): ${(err as Error).message}`,
            );
          }
        }
        // Only when empty (a volume that failed to tear down stays).
        await rmdir(join(volumesDir, pluginDir)).catch(() => undefined);
      }
      this.#mounted.delete(uid);
      for (const key of [...this.#backOff.keys()]) if (key.startsWith(`${uid}/`)) this.#backOff.delete(key);
      this.#host.tokens.deleteServiceAccountToken(uid);
      if (errors.length > 0) throw new VolumeError('failed', errors.join('; '));
    });
  }

  /**
   * Upstream `cleanupOrphanedPodDirs`: for each pod directory whose UID is neither desired here
   * nor `inUse`, tears its volumes down and removes the directory — never across a mount point
   * that is left. Run it once the pod sources have synced.
   * @returns the UIDs whose directories were removed
   */
  async cleanupOrphanedPodDirs(inUse: (uid: string) => boolean): Promise<string[]> {
    const removed: string[] = [];
    for (const uid of await listDir(this.#host.podsDir)) {
      if (this.#desired.has(uid) || inUse(uid)) continue;
      const dir = podDir(this.#host.podsDir, uid);
      try {
        await this.unmountPodVolumes(uid);
        const left = await this.#host.mounter.mountsUnder(dir);
        if (left.length > 0) {
          this.#log.error(
            { podUID: uid, mounts: left },
            'Orphaned pod found, but volumes are still mounted; will retry',
          );
          continue;
        }
        await rm(dir, { recursive: true, force: true });
        removed.push(uid);
        this.#log.info({ podUID: uid }, 'Cleaned up orphaned pod directory');
      } catch (err) {
        this.#log.error(
          { podUID: uid, err: (err as Error).message },
          'Failed to clean up orphaned pod directory',
        );
      }
    }
    return removed;
  }
}

async function listDir(dir: string): Promise<string[]> {
  try {
    const st = await lstat(dir);
    if (!st.isDirectory()) return [];
    return (await readdir(dir)).sort();
  } catch (err) {
    if (isNotFound(err)) return [];
    throw err;
  }
}
