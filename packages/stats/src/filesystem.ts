/**
 * Filesystem facts: `statfs` of a path (capacity, available, inodes — nodefs, imagefs), the
 * disk usage of a directory tree (`du`, for container logs), and the device a path lives on
 * (from `mountinfo`, cAdvisor's `device` label).
 *
 * @module
 */
import { lstat, statfs as nodeStatfs, readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';

/** What `statfs(2)` reports (Node's `fs.StatFs` shape). */
export interface StatfsResult {
  /** Block size, bytes. */
  readonly bsize: number;
  /** Total blocks. */
  readonly blocks: number;
  /** Free blocks. */
  readonly bfree: number;
  /** Blocks available to unprivileged users. */
  readonly bavail: number;
  /** Total inodes. */
  readonly files: number;
  /** Free inodes. */
  readonly ffree: number;
}

/** An injectable `statfs`; the default is `fs.promises.statfs`. */
export type StatfsFunction = (path: string) => Promise<StatfsResult>;

/** The default {@link StatfsFunction}. */
export const defaultStatfs: StatfsFunction = (path) => nodeStatfs(path);

/** Capacity facts of one filesystem (cAdvisor's `FsInfo`). */
export interface FsCapacity {
  /** Bytes in total. */
  readonly capacityBytes: number;
  /** Bytes available to unprivileged users. */
  readonly availableBytes: number;
  /** Bytes used (total − free). */
  readonly usedBytes: number;
  /** Inodes in total. */
  readonly inodes: number;
  /** Free inodes. */
  readonly inodesFree: number;
  /** Inodes used. */
  readonly inodesUsed: number;
}

/** Converts a statfs result to capacity facts. */
export function capacityOf(s: StatfsResult): FsCapacity {
  return {
    capacityBytes: s.blocks * s.bsize,
    availableBytes: s.bavail * s.bsize,
    usedBytes: (s.blocks - s.bfree) * s.bsize,
    inodes: s.files,
    inodesFree: s.ffree,
    inodesUsed: s.files - s.ffree,
  };
}

/** Disk usage of a tree: bytes of allocated blocks and inodes, as `du -s` and `find | wc -l`. */
export interface DiskUsage {
  /** Bytes allocated (512-byte blocks × 512). */
  readonly usedBytes: number;
  /** Inodes (files and directories, the root included). */
  readonly inodesUsed: number;
}

/** `du` of `dir`; undefined when it does not exist. Hard links are counted once. */
export async function diskUsage(dir: string): Promise<DiskUsage | undefined> {
  const seen = new Set<string>();
  let usedBytes = 0;
  let inodesUsed = 0;
  const walk = async (path: string): Promise<boolean> => {
    let st: Awaited<ReturnType<typeof lstat>>;
    try {
      st = await lstat(path);
    } catch {
      return false;
    }
    const key = `${st.dev}:${st.ino}`;
    if (seen.has(key)) return true;
    seen.add(key);
    usedBytes += st.blocks * 512;
    inodesUsed++;
    if (st.isDirectory()) {
      let names: string[] = [];
      try {
        names = await readdir(path);
      } catch {
        return true;
      }
      await Promise.all(names.map((n) => walk(join(path, n))));
    }
    return true;
  };
  return (await walk(dir)) ? { usedBytes, inodesUsed } : undefined;
}

/** One mount from `mountinfo`. */
export interface MountEntry {
  /** Mount point. */
  readonly mountPoint: string;
  /** Source device (`/dev/sda1`, `overlay`, `tmpfs`). */
  readonly source: string;
}

/** Parses `/proc/<pid>/mountinfo`. */
export function parseMountinfo(text: string): MountEntry[] {
  const out: MountEntry[] = [];
  for (const line of text.split('\n')) {
    const [left, right] = line.split(' - ');
    if (left === undefined || right === undefined) continue;
    const mountPoint = left.split(' ')[4];
    const source = right.split(' ')[1];
    if (mountPoint !== undefined && source !== undefined) {
      out.push({ mountPoint: mountPoint.replace(/\\040/g, ' '), source });
    }
  }
  return out;
}

/** The device of the mount holding `path` (longest mount-point prefix). */
export function deviceOf(mounts: readonly MountEntry[], path: string): string | undefined {
  let best: MountEntry | undefined;
  for (const m of mounts) {
    const prefix = m.mountPoint === '/' ? '/' : `${m.mountPoint}/`;
    if (path === m.mountPoint || path.startsWith(prefix)) {
      if (best === undefined || m.mountPoint.length >= best.mountPoint.length) best = m;
    }
  }
  return best?.source;
}

/** Reads `mountinfo` of the process below `procRoot`; empty when unreadable. */
export async function readMounts(procRoot: string): Promise<MountEntry[]> {
  try {
    return parseMountinfo(await readFile(join(procRoot, 'self', 'mountinfo'), 'utf8'));
  } catch {
    return [];
  }
}
