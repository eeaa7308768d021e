/**
 * The side-effect boundary for mounts: tmpfs for memory-backed volumes (`mount -t tmpfs -o
 * size=<bytes> tmpfs <dir>`, as upstream's emptyDir), unmount, and "is this a mount point"
 * from `/proc/self/mountinfo`. {@link FakeMounter} stands behind the same interface in tests.
 *
 * @module
 */
import { readFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import { runCommand } from '@nodeagent/core';
import { VolumeError } from './errors.js';

/** Mounts and unmounts file systems for the volume plugins. */
export interface Mounter {
  /**
   * Mounts a tmpfs at `dir` (which exists). `sizeBytes` becomes `-o size=<bytes>`; without it
   * the kernel's default (half of RAM) applies.
   */
  mountTmpfs(dir: string, sizeBytes?: bigint): Promise<void>;
  /** Unmounts `dir`. */
  unmount(dir: string): Promise<void>;
  /** Whether `dir` is a mount point. */
  isMountPoint(dir: string): Promise<boolean>;
  /** Mount points at or below `dir`, deepest first. */
  mountsUnder(dir: string): Promise<string[]>;
}

/** Decode the octal escapes (`\040` for a space) of /proc/self/mountinfo. */
function unescapeMountPath(p: string): string {
  return p.replace(/\\([0-7]{3})/g, (_, o: string) => String.fromCharCode(Number.parseInt(o, 8)));
}

/** The mount points listed in a mountinfo text (field 5). */
export function parseMountInfo(text: string): string[] {
  return text
    .split('\n')
    .map((l) => l.split(' ')[4])
    .filter((p): p is string => p !== undefined && p !== '')
    .map(unescapeMountPath);
}

function under(points: readonly string[], dir: string): string[] {
  const base = resolve(dir);
  return [...new Set(points.filter((p) => p === base || p.startsWith(`${base}/`)))].sort(
    (a, b) => b.length - a.length,
  );
}

/** Options of {@link ExecMounter}. */
export interface ExecMounterOptions {
  /** The mount binary. @default 'mount' */
  readonly mountCommand?: string;
  /** The umount binary. @default 'umount' */
  readonly umountCommand?: string;
  /** The mountinfo file read for mount points. @default '/proc/self/mountinfo' */
  readonly mountInfoPath?: string;
}

/** The real mounter: runs `mount` / `umount` (needs root). */
export class ExecMounter implements Mounter {
  readonly #options: ExecMounterOptions;
  /** @param options see {@link ExecMounterOptions} */
  constructor(options: ExecMounterOptions = {}) {
    this.#options = options;
  }

  async mountTmpfs(dir: string, sizeBytes?: bigint): Promise<void> {
    const argv = [this.#options.mountCommand ?? 'mount', '-t', 'tmpfs'];
    if (sizeBytes !== undefined) argv.push('-o', `size=${sizeBytes}`);
    argv.push('tmpfs', dir);
    const r = await runCommand(argv, { timeoutMs: 30_000 });
    if (r.code !== 0)
      throw new VolumeError(
        'failed',
        `mount failed: exit status ${r.code ?? r.signal}\nMounting command: ${argv.join(' ')}\nOutput: ${r.stderr.trim()}`,
      );
  }

  async unmount(dir: string): Promise<void> {
    const argv = [this.#options.umountCommand ?? 'umount', dir];
    const r = await runCommand(argv, { timeoutMs: 30_000 });
    if (r.code !== 0)
      throw new VolumeError(
        'failed',
        `unmount failed: exit status ${r.code ?? r.signal}\nUnmounting arguments: ${dir}\nOutput: ${r.stderr.trim()}`,
      );
  }

  async #points(): Promise<string[]> {
    return parseMountInfo(await readFile(this.#options.mountInfoPath ?? '/proc/self/mountinfo', 'utf8'));
  }

  async isMountPoint(dir: string): Promise<boolean> {
    const base = resolve(dir);
    return (await this.#points()).includes(base);
  }

  async mountsUnder(dir: string): Promise<string[]> {
    return under(await this.#points(), dir);
  }
}

/** One tmpfs mount recorded by {@link FakeMounter}. */
export interface FakeMount {
  /** Mount point. */
  readonly dir: string;
  /** The `size=` option, bytes. */
  readonly sizeBytes: bigint | undefined;
}

/** A mounter that only records (for unit tests and runtimes that do not need real mounts). */
export class FakeMounter implements Mounter {
  /** Current mounts by directory. */
  readonly mounts = new Map<string, FakeMount>();
  /** Every call, in order (`mount <dir>`, `unmount <dir>`). */
  readonly log: string[] = [];
  /** When set, the next `mountTmpfs` rejects with this error (then it is cleared). */
  failNextMount: Error | undefined;

  async mountTmpfs(dir: string, sizeBytes?: bigint): Promise<void> {
    this.log.push(`mount ${resolve(dir)}`);
    const fail = this.failNextMount;
    if (fail !== undefined) {
      this.failNextMount = undefined;
      throw fail;
    }
    this.mounts.set(resolve(dir), { dir: resolve(dir), sizeBytes });
  }

  async unmount(dir: string): Promise<void> {
    this.log.push(`unmount ${resolve(dir)}`);
    if (!this.mounts.delete(resolve(dir)))
      throw new VolumeError('failed', `unmount failed: ${dir}: not mounted`);
  }

  async isMountPoint(dir: string): Promise<boolean> {
    return this.mounts.has(resolve(dir));
  }

  async mountsUnder(dir: string): Promise<string[]> {
    return under([...this.mounts.keys()], dir);
  }
}
