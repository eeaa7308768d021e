/**
 * Finding and removing mounts under a directory (containerd leaves overlay, shm and netns mounts).
 * @module
 */
import { readFileSync } from 'node:fs';
import { runCommand } from './command.js';

/** Decode the octal escapes (`\040` for space, ...) used in /proc/self/mountinfo. */
function unescapeMountPath(p: string): string {
  return p.replace(/\\([0-7]{3})/g, (_, o: string) => String.fromCharCode(Number.parseInt(o, 8)));
}

/** Mount points at or below `dir` (deepest first), from /proc/self/mountinfo. */
export function mountsUnder(dir: string): string[] {
  const base = dir.replace(/\/+$/, '');
  const points = readFileSync('/proc/self/mountinfo', 'utf8')
    .split('\n')
    .map((l) => l.split(' ')[4])
    .filter((p): p is string => !!p)
    .map(unescapeMountPath)
    .filter((p) => p === base || p.startsWith(`${base}/`));
  return [...new Set(points)].sort((a, b) => b.length - a.length);
}

/**
 * Unmount everything at or below `dir`: plain `umount` first, lazy (`umount -l`) for what stays
 * busy. Returns the mount points that remain (normally none).
 */
export async function unmountUnder(dir: string): Promise<string[]> {
  for (let round = 0; round < 3; round++) {
    const points = mountsUnder(dir);
    if (points.length === 0) return [];
    for (const p of points) {
      const r = await runCommand(['umount', p]);
      if (r.code !== 0) await runCommand(['umount', '-l', p]);
    }
  }
  return mountsUnder(dir);
}
