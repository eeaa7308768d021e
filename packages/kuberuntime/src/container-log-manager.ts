/**
 * Container log rotation as the kubelet's container log manager
 * (`pkg/kubelet/logs/container_log_manager.go`): every `containerLogMonitorInterval` it
 * looks at each running container's log; one past `containerLogMaxSize` is renamed to
 * `<log>.<YYYYMMDD-hhmmss>` and the runtime is asked to reopen the log (CRI
 * `ReopenContainerLog`), after older rotated files are compressed to `.gz` and those past
 * `containerLogMaxFiles` removed, oldest first. A chatty container cannot fill the disk.
 *
 * @module
 */
import { createReadStream, createWriteStream } from 'node:fs';
import { readdir, rename, rm, stat } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { createGzip } from 'node:zlib';
import {
  type Clock,
  InvalidOptionsError,
  type Lifecycle,
  type Logger,
  noopLogger,
  realClock,
  StartOnce,
  type Timer,
} from '@nodeagent/core';
import { ContainerState, type CriClient } from '@nodeagent/cri';
import { quantityValue } from './quantity.js';

/** Default `containerLogMaxSize`: 10Mi. */
export const DEFAULT_CONTAINER_LOG_MAX_SIZE = '10Mi';
/** Default `containerLogMaxFiles`: 5 (the live log and four rotated ones). */
export const DEFAULT_CONTAINER_LOG_MAX_FILES = 5;
/** Default `containerLogMonitorInterval`: 10 s. */
export const DEFAULT_CONTAINER_LOG_MONITOR_INTERVAL_MS = 10_000;
/** Default `containerLogMaxWorkers`: 1. */
export const DEFAULT_CONTAINER_LOG_MAX_WORKERS = 1;

const COMPRESS_SUFFIX = '.gz';
const TMP_SUFFIX = '.tmp';

/** The runtime calls the log manager makes. */
export type ContainerLogRuntime = Pick<
  CriClient['runtime'],
  'listContainers' | 'containerStatus' | 'reopenContainerLog'
>;

/** Options of {@link ContainerLogManager}; the names are the kubelet configuration's. */
export interface ContainerLogManagerOptions {
  /** The CRI runtime service (`criClient.runtime`). */
  readonly runtime: ContainerLogRuntime;
  /**
   * Size at which a container's log is rotated: a quantity (`'10Mi'`) or bytes. Minimum: 1.
   * @default '10Mi'
   */
  readonly containerLogMaxSize?: string | number;
  /**
   * Most log files kept per container, the live one included. Minimum: 2.
   * @default 5
   */
  readonly containerLogMaxFiles?: number;
  /**
   * Period of the size check, in milliseconds. Minimum: 3000 (the kubelet's validation).
   * @default 10000
   */
  readonly containerLogMonitorIntervalMs?: number;
  /**
   * Containers rotated concurrently in one pass (the kubelet's `containerLogMaxWorkers`).
   * Minimum: 1.
   * @default 1
   */
  readonly containerLogMaxWorkers?: number;
  /** @default realClock */
  readonly clock?: Clock;
  /** @default noopLogger */
  readonly logger?: Logger;
}

/** Formats an instant as Go's `20060102-150405` in local time (the rotated file suffix). */
export function rotationTimestamp(ms: number): string {
  const d = new Date(ms);
  const p = (n: number): string => String(n).padStart(2, '0');
  return `${d.getFullYear()}${p(d.getMonth() + 1)}${p(d.getDate())}-${p(d.getHours())}${p(d.getMinutes())}${p(d.getSeconds())}`;
}

/** Rotated files of `log` (`<log>.*`), sorted by name: oldest first. */
export async function rotatedLogs(log: string): Promise<string[]> {
  const prefix = `${basename(log)}.`;
  let names: string[];
  try {
    names = await readdir(dirname(log));
  } catch {
    return [];
  }
  return names
    .filter((n) => n.startsWith(prefix))
    .sort()
    .map((n) => join(dirname(log), n));
}

function isNotFound(err: unknown): boolean {
  return (err as NodeJS.ErrnoException).code === 'ENOENT';
}

/** Rotates the logs of running containers; see the module comment. */
export class ContainerLogManager implements Lifecycle {
  readonly #runtime: ContainerLogRuntime;
  readonly #maxSize: number;
  readonly #maxFiles: number;
  readonly #intervalMs: number;
  readonly #workers: number;
  readonly #clock: Clock;
  readonly #log: Logger;
  readonly #once = new StartOnce('ContainerLogManager');
  #timer: Timer | undefined;
  #running: Promise<void> | undefined;
  /** Log paths of the running containers seen by earlier passes (see `#logPath`). */
  readonly #logPaths = new Map<string, string>();

  /** @throws InvalidOptionsError for a size, file count or interval out of range. */
  constructor(options: ContainerLogManagerOptions) {
    const size = options.containerLogMaxSize ?? DEFAULT_CONTAINER_LOG_MAX_SIZE;
    let bytes: number;
    try {
      bytes = typeof size === 'number' ? size : Number(quantityValue(size));
    } catch {
      bytes = Number.NaN;
    }
    if (!Number.isSafeInteger(bytes) || bytes < 1) {
      throw new InvalidOptionsError(
        'ContainerLogManager',
        `containerLogMaxSize must be a quantity of at least 1 byte, got ${JSON.stringify(size)}`,
      );
    }
    const files = options.containerLogMaxFiles ?? DEFAULT_CONTAINER_LOG_MAX_FILES;
    if (!Number.isInteger(files) || files < 2) {
      throw new InvalidOptionsError(
        'ContainerLogManager',
        `containerLogMaxFiles must be an integer >= 2, got ${files}`,
      );
    }
    const interval = options.containerLogMonitorIntervalMs ?? DEFAULT_CONTAINER_LOG_MONITOR_INTERVAL_MS;
    if (!Number.isFinite(interval) || interval < 3000) {
      throw new InvalidOptionsError(
        'ContainerLogManager',
        `containerLogMonitorIntervalMs must be >= 3000, got ${interval}`,
      );
    }
    const workers = options.containerLogMaxWorkers ?? DEFAULT_CONTAINER_LOG_MAX_WORKERS;
    if (!Number.isInteger(workers) || workers < 1) {
      throw new InvalidOptionsError(
        'ContainerLogManager',
        `containerLogMaxWorkers must be an integer >= 1, got ${workers}`,
      );
    }
    this.#workers = workers;
    this.#runtime = options.runtime;
    this.#maxSize = bytes;
    this.#maxFiles = files;
    this.#intervalMs = interval;
    this.#clock = options.clock ?? realClock;
    this.#log = options.logger ?? noopLogger;
  }

  /** Starts the periodic check (the first one runs after one interval, as the kubelet's). */
  start(signal?: AbortSignal): Promise<void> {
    return this.#once.run(
      signal,
      async () => {
        this.#timer = this.#clock.setInterval(() => {
          // One pass at a time (the kubelet's single worker); a slow pass skips a tick.
          if (this.#running) return;
          this.#running = this.rotateLogs().finally(() => {
            this.#running = undefined;
          });
        }, this.#intervalMs);
      },
      () => this.stop(),
    );
  }

  /** Stops the periodic check and waits for a pass in progress. Idempotent. */
  async stop(): Promise<void> {
    this.#timer?.cancel();
    this.#timer = undefined;
    await this.#running;
  }

  /**
   * One pass over the running containers; errors are logged per container and never stop
   * the others. Rotated names have a one-second resolution, as upstream's: two passes that
   * rotate the same log within one second would give the same name (the periodic check is
   * at least 3 s apart).
   */
  async rotateLogs(): Promise<void> {
    let containers: Awaited<ReturnType<ContainerLogRuntime['listContainers']>>['containers'];
    try {
      containers = (await this.#runtime.listContainers({})).containers;
    } catch (err) {
      this.#log.error({ err }, 'Failed to list containers');
      return;
    }
    // Only running containers write; an exited one keeps its last log as it is.
    const queue = containers.filter((c) => c.state === ContainerState.CONTAINER_RUNNING).map((c) => c.id);
    const listed = new Set(queue);
    for (const id of this.#logPaths.keys()) if (!listed.has(id)) this.#logPaths.delete(id);
    const worker = async (): Promise<void> => {
      for (let id = queue.shift(); id !== undefined; id = queue.shift()) {
        try {
          await this.#rotateContainer(id);
        } catch (err) {
          this.#log.error({ err, containerID: id }, 'Failed to rotate log for container');
        }
      }
    };
    await Promise.all(Array.from({ length: Math.min(this.#workers, queue.length) }, worker));
  }

  /** Removes every log file of a container, rotated ones included (upstream `Clean`). */
  async clean(containerId: string): Promise<void> {
    const res = await this.#runtime.containerStatus({ containerId });
    const path = res.status?.logPath ?? '';
    if (path === '') return;
    for (const f of [path, ...(await rotatedLogs(path))]) await rm(f, { force: true });
  }

  /**
   * The container's log path: asked of the runtime (`ContainerStatus`, as the kubelet asks it on
   * every pass) the first time, then remembered while the container runs. A container's log
   * path is fixed when it is created, so later passes make no runtime call for it.
   */
  async #logPath(id: string): Promise<string> {
    const known = this.#logPaths.get(id);
    if (known !== undefined) return known;
    const res = await this.#runtime.containerStatus({ containerId: id });
    const path = res.status?.logPath ?? '';
    this.#logPaths.set(id, path);
    return path;
  }

  async #rotateContainer(id: string): Promise<void> {
    const path = await this.#logPath(id);
    if (path === '') return;
    let size: number;
    try {
      size = (await stat(path)).size;
    } catch (err) {
      if (!isNotFound(err)) throw err;
      // A rotation that lost the live log (the reopen failed): ask the runtime to recreate it.
      await this.#runtime.reopenContainerLog({ containerId: id });
      size = (await stat(path)).size;
    }
    if (size < this.#maxSize) return;
    let logs = await this.#cleanupUnusedLogs(await rotatedLogs(path));
    logs = await this.#removeExcessLogs(logs);
    for (const l of logs) if (!l.endsWith(COMPRESS_SUFFIX)) await compressLog(l);
    await this.#rotateLatestLog(id, path);
  }

  /** Drops `.tmp` leftovers and uncompressed files whose `.gz` exists. */
  async #cleanupUnusedLogs(logs: readonly string[]): Promise<string[]> {
    const set = new Set(logs);
    const keep: string[] = [];
    for (const l of logs) {
      if (l.endsWith(TMP_SUFFIX) || (!l.endsWith(COMPRESS_SUFFIX) && set.has(l + COMPRESS_SUFFIX))) {
        await rm(l, { force: true });
      } else keep.push(l);
    }
    return keep;
  }

  /** Keeps the newest `maxFiles - 2` rotated files (the live log and the one rotated now make up the rest). */
  async #removeExcessLogs(logs: readonly string[]): Promise<string[]> {
    const sorted = [...logs].sort();
    const keep = Math.max(0, this.#maxFiles - 2);
    const excess = Math.max(0, sorted.length - keep);
    for (const l of sorted.slice(0, excess)) await rm(l, { force: true });
    return sorted.slice(excess);
  }

  async #rotateLatestLog(id: string, path: string): Promise<void> {
    const rotated = `${path}.${rotationTimestamp(this.#clock.now())}`;
    await rename(path, rotated);
    try {
      await this.#runtime.reopenContainerLog({ containerId: id });
    } catch (err) {
      // Put the log back so the next pass can try again.
      await rename(rotated, path).catch((renameErr: unknown) =>
        this.#log.error({ err: renameErr, containerID: id }, 'Failed to rename rotated log'),
      );
      throw new Error(`failed to reopen container log "${id}": ${(err as Error).message}`);
    }
  }
}

/** Compresses `log` into `log.tmp`, renames that to `log.gz` and removes `log`, as upstream. */
async function compressLog(log: string): Promise<void> {
  const tmp = log + TMP_SUFFIX;
  try {
    // The archive keeps the log's mode (current upstream; older releases used 0644).
    const { mode } = await stat(log);
    await pipeline(createReadStream(log), createGzip(), createWriteStream(tmp, { mode: mode & 0o777 }));
    await rename(tmp, log + COMPRESS_SUFFIX);
  } finally {
    await rm(tmp, { force: true });
  }
  await rm(log, { force: true });
}
