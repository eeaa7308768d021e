/**
 * The kubelet's atomic writer (upstream `pkg/volume/util/atomic_writer.go`) for the volumes
 * fed from the API (configMap, secret, downwardAPI, projected). A payload is written into a
 * fresh `..<timestamp>` directory, published by renaming a `..data_tmp` symlink onto `..data`
 * (one `rename(2)`), and shown to the container through top-level symlinks `<name>` →
 * `..data/<name>`. A reader therefore sees the old files or the new files, never a mix of
 * half-written ones. An unchanged payload writes nothing; files gone from the payload are
 * removed; the previous timestamped directory is deleted after the swap.
 *
 * @module
 */
import {
  chmod,
  lstat,
  mkdir,
  readdir,
  readFile,
  readlink,
  rename,
  rm,
  symlink,
  writeFile,
} from 'node:fs/promises';
import { dirname, join, posix } from 'node:path';
import type { Clock } from '@nodeagent/core';
import { realClock } from '@nodeagent/core';
import { VolumeError } from './errors.js';

/** One file of a payload. */
export interface FileProjection {
  /** Contents. */
  readonly data: Uint8Array;
  /** Permission bits (e.g. `0o644`). */
  readonly mode: number;
}

/** Relative path → file. */
export type Payload = ReadonlyMap<string, FileProjection>;

/** The symlink the user-visible files point through. */
export const DATA_DIR_NAME = '..data';
/** The symlink renamed onto {@link DATA_DIR_NAME}. */
export const NEW_DATA_DIR_NAME = '..data_tmp';

const MAX_PATH_LENGTH = 4096;
const MAX_FILE_NAME_LENGTH = 255;

/** Upstream `validatePath`: relative, no `..` element, not starting with `..`, length limits. */
export function validatePayloadPath(targetPath: string): string | undefined {
  if (targetPath === '') return `invalid path: must not be empty: ${JSON.stringify(targetPath)}`;
  if (targetPath.startsWith('/')) return `invalid path: must be relative path: ${targetPath}`;
  if (targetPath.length > MAX_PATH_LENGTH)
    return `invalid path: must be less than or equal to ${MAX_PATH_LENGTH} characters`;
  const items = targetPath.split('/');
  for (const item of items) {
    if (item === '..') return `invalid path: must not contain '..': ${targetPath}`;
    if (item.length > MAX_FILE_NAME_LENGTH)
      return `invalid path: filenames must be less than or equal to ${MAX_FILE_NAME_LENGTH} characters`;
  }
  const first = items[0] ?? '';
  if (first.startsWith('..') && first.length > 2)
    return `invalid path: must not start with '..': ${targetPath}`;
  return undefined;
}

function cleanPayload(payload: Payload): Map<string, FileProjection> {
  const out = new Map<string, FileProjection>();
  for (const [p, file] of payload) {
    const bad = validatePayloadPath(p);
    if (bad !== undefined) throw new VolumeError('invalid', bad);
    out.set(posix.normalize(p).replace(/\/$/, ''), file);
  }
  return out;
}

function isNotFound(err: unknown): boolean {
  return (err as NodeJS.ErrnoException | undefined)?.code === 'ENOENT';
}

/** `..2006_01_02_15_04_05.` for `ms` (UTC), the prefix of a timestamped directory. */
export function timestampDirPrefix(ms: number): string {
  const d = new Date(ms);
  const p = (n: number, w = 2) => String(n).padStart(w, '0');
  return `..${d.getUTCFullYear()}_${p(d.getUTCMonth() + 1)}_${p(d.getUTCDate())}_${p(d.getUTCHours())}_${p(d.getUTCMinutes())}_${p(d.getUTCSeconds())}.`;
}

/** Options of {@link AtomicWriter}. */
export interface AtomicWriterOptions {
  /** Names the timestamped directories. @default realClock */
  readonly clock?: Clock;
}

/** What one {@link AtomicWriter.write} did. */
export interface AtomicWriteResult {
  /** A new timestamped directory was published. */
  readonly written: boolean;
  /** User-visible paths removed because they left the payload. */
  readonly removed: readonly string[];
}

/** Publishes payloads into one target directory, atomically. */
export class AtomicWriter {
  readonly #targetDir: string;
  readonly #clock: Clock;

  /** @param targetDir the volume directory (must exist); @param options see {@link AtomicWriterOptions} */
  constructor(targetDir: string, options: AtomicWriterOptions = {}) {
    this.#targetDir = targetDir;
    this.#clock = options.clock ?? realClock;
  }

  /**
   * Writes `payload`. `setPerms` runs on the new timestamped directory (its name relative to
   * the target) before it is published, as upstream's (fsGroup ownership goes there).
   * @throws VolumeError on an invalid payload path or a failed write
   */
  async write(payload: Payload, setPerms?: (tsDirName: string) => Promise<void>): Promise<AtomicWriteResult> {
    const files = cleanPayload(payload);
    const target = this.#targetDir;
    try {
      const st = await lstat(target);
      if (!st.isDirectory())
        throw new VolumeError('failed', `Error creating atomic writer: ${target} is not a directory`);
    } catch (err) {
      if (err instanceof VolumeError) throw err;
      throw new VolumeError('failed', `Error creating atomic writer: ${(err as Error).message}`, {
        cause: err,
      });
    }
    const dataDirPath = join(target, DATA_DIR_NAME);
    let oldTsDir = '';
    try {
      oldTsDir = await readlink(dataDirPath);
    } catch (err) {
      if (!isNotFound(err)) throw wrap(err, 'reading the ..data link');
    }
    const oldTsPath = oldTsDir === '' ? '' : join(target, oldTsDir);
    const toRemove = oldTsPath === '' ? [] : await pathsToRemove(files, oldTsPath);
    const changed = oldTsPath === '' || (await payloadDiffers(files, oldTsPath));
    if (!changed && toRemove.length === 0 && (await this.#visibleLinksPresent(files))) {
      return { written: false, removed: [] };
    }
    let published = false;
    let tsDir = '';
    try {
      tsDir = await makeTimestampDir(join(target, timestampDirPrefix(this.#clock.now())));
      await chmod(tsDir, 0o755);
      const tsDirName = tsDir.slice(target.length + 1);
      await writePayload(files, tsDir);
      if (setPerms) await setPerms(tsDirName);
      const tmpLink = join(target, NEW_DATA_DIR_NAME);
      await rm(tmpLink, { force: true });
      await symlink(tsDirName, tmpLink);
      await rename(tmpLink, dataDirPath);
      published = true;
    } catch (err) {
      if (!published && tsDir !== '') await rm(tsDir, { recursive: true, force: true });
      throw wrap(err, 'writing the payload');
    }
    try {
      await this.#createVisibleLinks(files);
      const removed = toRemove.filter((p) => !p.includes('/'));
      for (const p of removed) await rm(join(target, p), { force: true });
      if (oldTsPath !== '') await rm(oldTsPath, { recursive: true, force: true });
      return { written: true, removed };
    } catch (err) {
      throw wrap(err, 'publishing the payload');
    }
  }

  async #visibleLinksPresent(files: ReadonlyMap<string, FileProjection>): Promise<boolean> {
    for (const top of topLevel(files)) {
      try {
        await readlink(join(this.#targetDir, top));
      } catch {
        return false;
      }
    }
    return true;
  }

  async #createVisibleLinks(files: ReadonlyMap<string, FileProjection>): Promise<void> {
    for (const top of topLevel(files)) {
      const visible = join(this.#targetDir, top);
      try {
        await readlink(visible);
      } catch (err) {
        if (!isNotFound(err)) throw err;
        await symlink(join(DATA_DIR_NAME, top), visible);
      }
    }
  }
}

/** `os.MkdirTemp` as Go names it: the prefix and a random decimal number. */
async function makeTimestampDir(prefix: string): Promise<string> {
  for (let attempt = 0; ; attempt++) {
    const dir = `${prefix}${Math.floor(Math.random() * 2 ** 32)}`;
    try {
      await mkdir(dir, { mode: 0o700 });
      return dir;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST' || attempt > 100) throw err;
    }
  }
}

function topLevel(files: ReadonlyMap<string, FileProjection>): Set<string> {
  return new Set([...files.keys()].map((p) => p.split('/')[0] ?? p));
}

function wrap(err: unknown, what: string): VolumeError {
  if (err instanceof VolumeError) return err;
  return new VolumeError('failed', `atomic write failed ${what}: ${(err as Error).message}`, { cause: err });
}

async function writePayload(files: ReadonlyMap<string, FileProjection>, dir: string): Promise<void> {
  for (const [p, file] of files) {
    const full = join(dir, p);
    await mkdir(dirname(full), { recursive: true, mode: 0o777 });
    await writeFile(full, file.data, { mode: file.mode });
    // The umask applies to the create; the payload's mode is exact.
    await chmod(full, file.mode);
  }
}

async function payloadDiffers(files: ReadonlyMap<string, FileProjection>, tsPath: string): Promise<boolean> {
  for (const [p, file] of files) {
    let current: Buffer;
    try {
      current = await readFile(join(tsPath, p));
    } catch (err) {
      if (isNotFound(err)) return true;
      throw err;
    }
    if (!current.equals(Buffer.from(file.data.buffer, file.data.byteOffset, file.data.byteLength)))
      return true;
  }
  return false;
}

/** Relative paths in the published directory that the new payload no longer has. */
async function pathsToRemove(files: ReadonlyMap<string, FileProjection>, tsPath: string): Promise<string[]> {
  const keep = new Set<string>();
  for (const p of files.keys()) {
    const parts = p.split('/');
    for (let i = 1; i <= parts.length; i++) keep.add(parts.slice(0, i).join('/'));
  }
  const found: string[] = [];
  const walk = async (rel: string): Promise<void> => {
    let entries: string[];
    try {
      entries = await readdir(join(tsPath, rel));
    } catch (err) {
      if (isNotFound(err)) return;
      throw err;
    }
    for (const name of entries) {
      const child = rel === '' ? name : `${rel}/${name}`;
      if (!keep.has(child)) found.push(child);
      const st = await lstat(join(tsPath, child));
      if (st.isDirectory()) await walk(child);
    }
  };
  await walk('');
  return found;
}
