/**
 * Creating a directory below a volume without ever leaving it (upstream
 * `pkg/volume/util/subpath/subpath_linux.go` `SafeMakeDir`): the volume's contents belong to the
 * pod, so any component of a `subPath` may be a symlink a container planted. The walk opens one
 * component at a time relative to the directory already opened (`/proc/self/fd/<fd>/<name>`, the
 * `openat` of Node), with `O_NOFOLLOW`; a symlink is resolved and followed only when its target
 * is still inside the volume, and a missing directory is created in the directory opened before
 * it, never through a path that could be swapped underneath.
 *
 * @module
 */
import { constants } from 'node:fs';
import { type FileHandle, lstat, mkdir, open, realpath } from 'node:fs/promises';
import { join, relative } from 'node:path';
import { validateLocalDescendingPath } from './path-validation.js';

/** Symlinks followed in one walk before giving up, as Linux's `MAXSYMLINKS`. */
const MAX_SYMLINKS = 40;

/** A path below a volume would resolve outside it, or could not be created safely. */
export class UnsafePathError extends Error {
  override readonly name = 'UnsafePathError';
  constructor(
    /** The volume directory the path must stay in. */
    readonly base: string,
    /** The path below it, as given. */
    readonly subPath: string,
    message: string,
  ) {
    super(message);
  }
}

function within(root: string, path: string): boolean {
  return path === root || path.startsWith(root.endsWith('/') ? root : `${root}/`);
}

function code(err: unknown): string | undefined {
  return (err as NodeJS.ErrnoException | undefined)?.code;
}

const DIR_FLAGS = constants.O_RDONLY | constants.O_DIRECTORY | constants.O_NOFOLLOW;

/**
 * Creates `subPath` below `base` (each missing directory with `mode`, past the umask) and
 * returns the resolved host path, which is always `base`'s real path or below it. The last
 * component may be an existing non-directory (a file mounted by subPath); earlier ones must be
 * directories. `base` itself is trusted and may be a symlink.
 * @throws UnsafePathError when `subPath` is absolute, has a `..` element, or a symlink in it
 *   resolves outside `base` (or dangles); filesystem errors otherwise
 */
export async function safeMakeDir(base: string, subPath: string, mode: number): Promise<string> {
  const bad = validateLocalDescendingPath(subPath);
  if (bad.length > 0) throw new UnsafePathError(base, subPath, `subPath "${subPath}": ${bad.join(', ')}`);
  const root = await realpath(base);
  let rest = subPath.split('/').filter((p) => p !== '' && p !== '.');
  for (let links = 0; links <= MAX_SYMLINKS; links++) {
    const outcome = await walk(root, rest, mode);
    if (typeof outcome === 'string') return outcome;
    // A symlink inside the volume: follow it only while it stays inside.
    let target: string;
    try {
      target = await realpath(outcome.link);
    } catch (err) {
      const why = code(err) === 'ELOOP' ? 'is a symlink loop' : 'dangles';
      throw new UnsafePathError(base, subPath, `subPath "${subPath}": symlink ${outcome.link} ${why}`);
    }
    if (!within(root, target))
      throw new UnsafePathError(base, subPath, `subPath "${subPath}" resolves outside the volume`);
    rest = [
      ...relative(root, target)
        .split('/')
        .filter((p) => p !== ''),
      ...outcome.rest,
    ];
  }
  throw new UnsafePathError(base, subPath, `subPath "${subPath}": too many levels of symbolic links`);
}

/** Walks `parts` below `root`; the real path when done, or the symlink met and what follows it. */
async function walk(
  root: string,
  parts: readonly string[],
  mode: number,
): Promise<string | { link: string; rest: string[] }> {
  let dir: FileHandle = await open(root, constants.O_RDONLY | constants.O_DIRECTORY);
  let current = root;
  try {
    for (let i = 0; i < parts.length; i++) {
      const part = parts[i] as string;
      const at = `/proc/self/fd/${dir.fd}/${part}`;
      let st = await lstat(at).catch((err: unknown) => {
        if (code(err) === 'ENOENT') return undefined;
        throw err;
      });
      if (st === undefined) {
        await mkdir(at, { mode }).catch((err: unknown) => {
          if (code(err) !== 'EEXIST') throw err;
        });
        st = await lstat(at);
        if (st.isDirectory()) {
          const created = await open(at, DIR_FLAGS);
          await created.chmod(mode).finally(() => created.close());
        }
      }
      if (st.isSymbolicLink()) return { link: join(current, part), rest: parts.slice(i + 1) };
      if (!st.isDirectory()) {
        if (i === parts.length - 1) return join(current, part);
        throw Object.assign(new Error(`${join(current, part)} is not a directory`), { code: 'ENOTDIR' });
      }
      // O_NOFOLLOW: if the directory was swapped for a symlink since lstat, this fails (ELOOP).
      const next = await open(at, DIR_FLAGS);
      await dir.close();
      dir = next;
      current = join(current, part);
    }
    return current;
  } finally {
    await dir.close();
  }
}
