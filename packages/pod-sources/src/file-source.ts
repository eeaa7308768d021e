/**
 * The static pod manifest directory (`--pod-manifest-path`, upstream `config/file.go`): every
 * regular, non-hidden file of the directory (not recursive, sorted), or the one file the path
 * names, is a manifest of one pod. The whole directory is re-read on every change the file
 * system reports and every `checkIntervalMs` (20 s), and sent as a snapshot. A manifest that
 * cannot be used is reported and left out; the other pods are unaffected, and a fixed version
 * is picked up by the next read. A missing path is an empty snapshot (so the source is seen).
 *
 * @module
 */
import { type FSWatcher, watch } from 'node:fs';
import { readdir, readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import type { V1Pod } from '@kubernetes/client-node';
import {
  type Clock,
  type Lifecycle,
  type Logger,
  noopLogger,
  realClock,
  StartOnce,
  type Timer,
} from '@nodeagent/core';
import { PodSourceError, type PodSourceErrorHandler } from './errors.js';
import { decodeManifest, MAX_MANIFEST_BYTES } from './manifest-decoder.js';
import type { PodSourceSink } from './pod-config.js';
import { FILE_SOURCE } from './pod-update.js';

/** Options of {@link FileSource}. */
export interface FileSourceOptions {
  /** The manifest directory, or one manifest file. */
  readonly path: string;
  /** This node's name (pod name suffix, UID input). */
  readonly nodeName: string;
  /** Where the snapshots go (`podConfig.channel('file')`). */
  readonly sink: PodSourceSink;
  /** Full re-read period, ms (`fileCheckFrequency`). Minimum: 1. @default 20_000 */
  readonly checkIntervalMs?: number;
  /** Watch the directory for changes (inotify) besides the periodic re-read. @default true */
  readonly watch?: boolean;
  /** Told about each manifest that cannot be used. @default log at warn */
  readonly onError?: PodSourceErrorHandler;
  /** @default realClock */
  readonly clock?: Clock;
  /** @default noopLogger */
  readonly logger?: Logger;
}

/** Reads static pods from a directory. */
export class FileSource implements Lifecycle {
  readonly #options: FileSourceOptions;
  readonly #once = new StartOnce('FileSource');
  readonly #log: Logger;
  readonly #onError: PodSourceErrorHandler;
  #timer: Timer | undefined;
  #watcher: FSWatcher | undefined;
  #reading: Promise<void> | undefined;
  #again = false;
  #stopped = false;

  /** @param options see {@link FileSourceOptions}. */
  constructor(options: FileSourceOptions) {
    this.#options = options;
    this.#log = (options.logger ?? noopLogger).child({ component: 'file-source', path: options.path });
    this.#onError =
      options.onError ?? ((err) => this.#log.warn({ file: err.location, code: err.code }, err.message));
  }

  /** Reads the path once (the first snapshot), then watches and re-reads until stopped. */
  start(signal?: AbortSignal): Promise<void> {
    return this.#once.run(
      signal,
      async () => {
        await this.resync();
        const clock = this.#options.clock ?? realClock;
        this.#timer = clock.setInterval(() => void this.resync(), this.#options.checkIntervalMs ?? 20_000);
        if (this.#options.watch !== false) this.#watch();
      },
      () => this.stop(),
    );
  }

  /** Stops watching and re-reading. Idempotent. */
  async stop(): Promise<void> {
    this.#stopped = true;
    this.#timer?.cancel();
    this.#timer = undefined;
    this.#watcher?.close();
    this.#watcher = undefined;
    await this.#reading;
  }

  #watch(): void {
    try {
      this.#watcher = watch(this.#options.path, { persistent: false }, () => void this.resync());
      this.#watcher.on('error', (err) =>
        this.#log.warn({ err: err.message }, 'manifest watch failed; re-reading periodically only'),
      );
    } catch (err) {
      // A path that does not exist yet: the periodic re-read picks it up.
      this.#log.info(
        { err: (err as Error).message },
        'cannot watch the manifest path; re-reading periodically only',
      );
    }
  }

  /** Re-reads now and sends a snapshot; concurrent calls coalesce into one more read. */
  resync(): Promise<void> {
    if (this.#stopped && this.#once.started) return Promise.resolve();
    if (this.#reading !== undefined) {
      this.#again = true;
      return this.#reading;
    }
    this.#reading = (async () => {
      do {
        this.#again = false;
        const pods = await this.#read();
        if (!this.#stopped) this.#options.sink.send({ op: 'SET', pods });
      } while (this.#again && !this.#stopped);
    })().finally(() => {
      this.#reading = undefined;
    });
    return this.#reading;
  }

  async #read(): Promise<V1Pod[]> {
    const { path } = this.#options;
    let files: string[];
    try {
      const info = await stat(path);
      if (info.isDirectory()) {
        const entries = await readdir(path, { withFileTypes: true });
        files = entries
          .filter((e) => !e.name.startsWith('.'))
          .map((e) => e.name)
          .sort()
          .map((name) => join(path, name));
      } else {
        files = [path];
      }
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') {
        this.#onError(new PodSourceError('Unreadable', FILE_SOURCE, path, (err as Error).message));
      }
      return [];
    }
    const pods: V1Pod[] = [];
    for (const file of files) {
      try {
        const pod = await this.#readManifest(file);
        if (pod !== undefined) pods.push(pod);
      } catch (err) {
        if (err instanceof PodSourceError) this.#onError(err);
        else this.#onError(new PodSourceError('Unreadable', FILE_SOURCE, file, (err as Error).message));
      }
    }
    return pods;
  }

  async #readManifest(file: string): Promise<V1Pod | undefined> {
    let info: Awaited<ReturnType<typeof stat>>;
    try {
      info = await stat(file);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined; // removed meanwhile
      throw err;
    }
    if (!info.isFile()) return undefined;
    if (info.size > MAX_MANIFEST_BYTES) {
      throw new PodSourceError(
        'TooLarge',
        FILE_SOURCE,
        file,
        `manifest is ${info.size} bytes, the limit is ${MAX_MANIFEST_BYTES}`,
      );
    }
    const text = await readFile(file, 'utf8');
    const [pod] = decodeManifest(text, { nodeName: this.#options.nodeName, source: 'file', location: file });
    return pod;
  }
}
