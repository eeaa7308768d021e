/**
 * Options of the volume manager.
 *
 * @module
 */
import type { V1Pod } from '@kubernetes/client-node';
import type { Clock, Logger } from '@nodeagent/core';
import type { VolumeDataSource } from './data-source.js';
import type { ResourceList } from './field-path.js';
import type { Mounter } from './mounter.js';
import type { MemoryMediumMode, VolumePlugin } from './volume-plugin.js';

/** Records a pod event (`type` Normal/Warning, `reason`, `message`). */
export type VolumeEventRecorder = (
  pod: V1Pod,
  type: 'Normal' | 'Warning',
  reason: string,
  message: string,
) => void;

/** Options of the `VolumeManager`. */
export interface VolumeManagerOptions {
  /** The kubelet's `--root-dir`; volumes live under `<rootDir>/pods/<uid>/volumes`. @default '/var/lib/kubelet' */
  readonly rootDir?: string;
  /** The pods directory itself, when it is not `<rootDir>/pods`. @default `<rootDir>/pods` */
  readonly podsDir?: string;
  /** ConfigMaps, Secrets and tokens (see `apiVolumeDataSource`). */
  readonly dataSource: VolumeDataSource;
  /** Mounts tmpfs. @default a new ExecMounter (runs `mount`, needs root) */
  readonly mounter?: Mounter;
  /**
   * Where memory-backed volumes go: `'tmpfs'` (the kubelet's behaviour) or `'directory'` (plain
   * directories, for a fake runtime run without root; secrets then reach the disk).
   * @default 'tmpfs'
   */
  readonly memoryMedium?: MemoryMediumMode;
  /** The node's allocatable (downwardAPI limits, tmpfs size). @default none */
  readonly nodeAllocatable?: () => ResourceList;
  /** The plugins. @default DEFAULT_VOLUME_PLUGINS */
  readonly plugins?: readonly VolumePlugin[];
  /** Records `FailedMount` events. @default none */
  readonly recorder?: VolumeEventRecorder;
  /**
   * How often configMap, secret, downwardAPI and projected volumes of the pods are set up again
   * (the kubelet's sync period), ms. Minimum: 1. @default 60_000
   */
  readonly remountPeriodMs?: number;
  /** First delay after a failed set-up of a volume, ms (upstream 500 ms). Minimum: 1. @default 500 */
  readonly initialBackOffMs?: number;
  /** Longest delay between set-ups of a failing volume, ms (upstream 2m2s). @default 122_000 */
  readonly maxBackOffMs?: number;
  /**
   * Whether a pod directory may stay: when given, every `housekeepingPeriodMs` the directories
   * of pods for which it answers `false` are removed (upstream `cleanupOrphanedPodDirs` in the
   * housekeeping pass). Return `true` for every pod until the pod sources are ready.
   * @default no periodic clean-up
   */
  readonly podDirInUse?: (uid: string) => boolean;
  /** How often orphaned pod directories are looked for, ms (the kubelet's housekeeping). Minimum: 1. @default 2_000 */
  readonly housekeepingPeriodMs?: number;
  /** @default realClock */
  readonly clock?: Clock;
  /** @default noopLogger */
  readonly logger?: Logger;
}
