/**
 * Removing network namespaces left behind by test processes that died before their cleanup ran.
 * Names made by `createNetns` embed the creating PID (`<prefix>-<pid base36>-<n>`), so a namespace
 * whose creator is gone can be recognised without guessing.
 * @module
 */
import { CommandFailedError, requireBinary, runCommand } from './command.js';
import { isAlive, killPids } from './procfs.js';

/** Delete a namespace by name after killing (by PID) every process still inside it. */
export async function deleteNetnsByName(name: string): Promise<void> {
  const ip = requireBinary('ip');
  const pids = await runCommand([ip, 'netns', 'pids', name]);
  const inside = pids.stdout
    .split('\n')
    .filter(Boolean)
    .map(Number)
    .filter((p) => p !== process.pid);
  if (inside.length) await killPids(inside, { signal: 'SIGTERM', graceMs: 2_000 });
  const del = await runCommand([ip, 'netns', 'delete', name]);
  if (del.code !== 0 && !/No such file/i.test(del.stderr)) {
    throw new CommandFailedError([ip, 'netns', 'delete', name], del);
  }
}

/** The PID encoded in a `createNetns` name with this prefix, if the name has that shape. */
export function creatorPid(prefix: string, name: string): number | undefined {
  const m = new RegExp(`^${prefix.replace(/[.]/g, '\\.')}-([0-9a-z]+)-[0-9a-z]+$`).exec(name);
  return m ? Number.parseInt(m[1] as string, 36) : undefined;
}

/**
 * Delete namespaces named `<prefix>-<pid>-<n>` whose creating process no longer exists (and
 * the processes inside them). Namespaces of live processes are left alone.
 * @returns the names deleted.
 */
export async function cleanupStaleNetns(prefix: string): Promise<string[]> {
  const ip = requireBinary('ip');
  const list = await runCommand([ip, 'netns', 'list']);
  const names = list.stdout
    .split('\n')
    .map((l) => l.trim().split(/\s+/)[0] ?? '')
    .filter(Boolean);
  const stale = names.filter((n) => {
    const pid = creatorPid(prefix, n);
    return pid !== undefined && pid !== process.pid && !isAlive(pid);
  });
  for (const name of stale) await deleteNetnsByName(name);
  return stale;
}
