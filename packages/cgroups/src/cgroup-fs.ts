/**
 * The side-effect boundary: the few filesystem calls the cgroup manager makes. The real one
 * works on cgroupfs (where `rmdir` removes a cgroup with its interface files); tests pass the
 * fake tree of `@nodeagent/cgroups/testing`, which emulates those kernel semantics on a temp dir.
 *
 * @module
 */
import {
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  rmdirSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';

/** Filesystem calls on a cgroup tree. All paths are absolute. */
export interface CgroupFs {
  /** Whether `path` exists. */
  exists(path: string): boolean;
  /** Whether `path` is a directory (following symlinks). */
  isDirectory(path: string): boolean;
  /** Creates a directory (parents must exist); an existing one is fine. */
  mkdir(path: string): void;
  /** Removes a cgroup directory (its interface files go with it); it must have no child cgroups. */
  rmdir(path: string): void;
  /** Names of the entries of a directory. */
  readdir(path: string): string[];
  /**
   * Names of the entries of a directory that are directories themselves, from the entry types
   * the directory listing carries (no `stat` per entry; symlinks are not followed). Optional:
   * without it the callers `readdir` and ask {@link CgroupFs.isDirectory} of each entry.
   */
  subdirectories?(path: string): string[];
  /** The text of a file. */
  readFile(path: string): string;
  /** Writes `value` to an existing interface file (creates it on a plain filesystem). */
  writeFile(path: string, value: string): void;
  /** Sends SIGKILL to `pid`; false when it no longer exists. */
  kill(pid: number): boolean;
}

/** The real filesystem (cgroupfs on a node). */
export const nodeCgroupFs: CgroupFs = {
  exists: (p) => existsSync(p),
  isDirectory: (p) => {
    try {
      return statSync(p).isDirectory();
    } catch {
      return false;
    }
  },
  mkdir: (p) => {
    try {
      mkdirSync(p);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    }
  },
  rmdir: (p) => rmdirSync(p),
  readdir: (p) => readdirSync(p),
  // cgroupfs (kernfs) fills in each entry's type, as upstream's os.ReadDir + DirEntry.IsDir relies on.
  subdirectories: (p) =>
    readdirSync(p, { withFileTypes: true })
      .filter((e) => e.isDirectory())
      .map((e) => e.name),
  readFile: (p) => readFileSync(p, 'utf8'),
  writeFile: (p, v) => writeFileSync(p, v),
  kill: (pid) => {
    try {
      process.kill(pid, 'SIGKILL');
      return true;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ESRCH') return false;
      throw err;
    }
  },
};

/**
 * The directories among the entries of `dir` through `fs` ({@link CgroupFs.subdirectories} when
 * it has it). @throws what `fs.readdir` throws (a missing `dir`: ENOENT)
 */
export function subdirectoriesOf(fs: CgroupFs, dir: string): string[] {
  if (fs.subdirectories !== undefined) return fs.subdirectories(dir);
  return fs.readdir(dir).filter((e) => fs.isDirectory(join(dir, e)));
}
