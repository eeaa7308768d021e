/**
 * The contract of a volume plugin (upstream `volume.VolumePlugin` with its `Mounter` and
 * `Unmounter` folded in) and the node facilities plugins use (upstream `VolumeHost`).
 *
 * @module
 */
import type { V1Pod, V1Volume } from '@kubernetes/client-node';
import type { Clock, Logger } from '@nodeagent/core';
import type { VolumeDataSource } from './data-source.js';
import type { ResourceList } from './field-path.js';
import type { Mounter } from './mounter.js';
import type { TokenManager } from './token-manager.js';

/**
 * How memory-backed volumes (emptyDir `medium: Memory`, secret, downwardAPI, projected) are
 * stored: `'tmpfs'` mounts a tmpfs (the kubelet's behaviour; needs root), `'directory'` keeps
 * them in a plain directory on disk (only for runtimes that need no real mounts, such as a fake
 * runtime run without root: secrets then touch the disk).
 */
export type MemoryMediumMode = 'tmpfs' | 'directory';

/** The node facilities a plugin uses. */
export interface VolumeHost {
  /** `<root-dir>/pods`. */
  readonly podsDir: string;
  /** Mounts tmpfs. */
  readonly mounter: Mounter;
  /** ConfigMaps, Secrets, tokens. */
  readonly dataSource: VolumeDataSource;
  /** Caches service-account tokens. */
  readonly tokens: TokenManager;
  /** The node's allocatable (downwardAPI limits, memory-backed volume size). */
  readonly nodeAllocatable: () => ResourceList;
  /** See {@link MemoryMediumMode}. */
  readonly memoryMedium: MemoryMediumMode;
  /** Names the atomic writer's timestamped directories. */
  readonly clock: Clock;
  /** For what upstream logs and goes on. */
  readonly logger: Logger;
}

/** One volume of one pod being set up. */
export interface VolumeSetUpContext {
  /** The pod. */
  readonly pod: V1Pod;
  /** The volume (from `pod.spec.volumes`). */
  readonly volume: V1Volume;
  /** The volume's directory, from {@link VolumePlugin.getPath}. */
  readonly dir: string;
  /** Cancels API calls. */
  readonly signal?: AbortSignal | undefined;
}

/** A volume plugin. */
export interface VolumePlugin {
  /** Upstream's plugin name, e.g. `kubernetes.io/configmap`. */
  readonly name: string;
  /**
   * Set up again on every pod sync so API changes reach the files (upstream `RequiresRemount`):
   * configMap, secret, downwardAPI, projected.
   */
  readonly requiresRemount: boolean;
  /**
   * Containers always mount it read-only (upstream `GetAttributes().ReadOnly`, honoured by
   * `makeMounts`): configMap, secret, downwardAPI, projected.
   */
  readonly readOnly: boolean;
  /** Whether this plugin handles `volume`. */
  canSupport(volume: V1Volume): boolean;
  /** The host path containers mount. */
  getPath(host: VolumeHost, pod: V1Pod, volume: V1Volume): string;
  /** Makes the volume ready at `ctx.dir` (idempotent: also a remount). @throws VolumeError */
  setUp(host: VolumeHost, ctx: VolumeSetUpContext): Promise<void>;
  /** Removes what `setUp` made at `dir` (unmounts a tmpfs, removes the directory). */
  tearDown(host: VolumeHost, dir: string): Promise<void>;
}
