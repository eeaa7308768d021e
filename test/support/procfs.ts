/**
 * Finding and stopping processes through /proc, by PID — never by name.
 * @module
 */
import { readdirSync, readFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';

/** One process as seen in /proc. */
export interface ProcessInfo {
  /** Process id. */
  readonly pid: number;
  /** Parent process id. */
  readonly ppid: number;
  /** Command line, split on NUL (empty for kernel threads and zombies). */
  readonly argv: readonly string[];
}

function readPpid(pid: number): number | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The command name (field 2) may contain spaces and parentheses: parse after the last ')'.
    const rest = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return Number(rest[1]);
  } catch {
    return undefined;
  }
}

/** Snapshot of all processes currently in /proc (processes that vanish mid-scan are skipped). */
export function listProcesses(): ProcessInfo[] {
  const out: ProcessInfo[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const pid = Number(entry);
    const ppid = readPpid(pid);
    if (ppid === undefined) continue;
    let argv: string[] = [];
    try {
      argv = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').filter(Boolean);
    } catch {
      continue;
    }
    out.push({ pid, ppid, argv });
  }
  return out;
}

/** Processes having `value` as one whole argument, or (when `substring` is true) inside any argument. */
export function findProcessesWithArg(value: string, substring = false): ProcessInfo[] {
  return listProcesses().filter(
    (p) => p.pid !== process.pid && p.argv.some((a) => (substring ? a.includes(value) : a === value)),
  );
}

/** All descendants (children, grandchildren, ...) of the given PIDs, from one snapshot. */
export function descendantsOf(pids: readonly number[], snapshot = listProcesses()): ProcessInfo[] {
  const byParent = new Map<number, ProcessInfo[]>();
  for (const p of snapshot) {
    const list = byParent.get(p.ppid) ?? [];
    list.push(p);
    byParent.set(p.ppid, list);
  }
  const result: ProcessInfo[] = [];
  const queue = [...pids];
  const seen = new Set<number>(pids);
  for (let pid = queue.shift(); pid !== undefined; pid = queue.shift()) {
    for (const child of byParent.get(pid) ?? []) {
      if (seen.has(child.pid)) continue;
      seen.add(child.pid);
      result.push(child);
      queue.push(child.pid);
    }
  }
  return result;
}

/** True while a process with this PID exists (zombies count as gone). */
export function isAlive(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) !== 'Z';
  } catch {
    return false;
  }
}

/**
 * Send `signal` to each PID, wait up to `graceMs` for them to exit, then SIGKILL the rest and
 * wait again briefly. Returns the PIDs still alive at the end (normally none).
 */
export async function killPids(
  pids: readonly number[],
  { signal = 'SIGTERM', graceMs = 5_000 }: { signal?: NodeJS.Signals; graceMs?: number } = {},
): Promise<number[]> {
  const send = (sig: NodeJS.Signals, list: readonly number[]) => {
    for (const pid of list) {
      try {
        process.kill(pid, sig);
      } catch {
        // already gone
      }
    }
  };
  const waitGone = async (list: readonly number[], ms: number) => {
    const deadline = Date.now() + ms;
    let alive = list.filter(isAlive);
    while (alive.length > 0 && Date.now() < deadline) {
      await sleep(20);
      alive = alive.filter(isAlive);
    }
    return alive;
  };
  send(signal, pids);
  let alive = await waitGone(pids, signal === 'SIGKILL' ? 2_000 : graceMs);
  if (alive.length > 0 && signal !== 'SIGKILL') {
    send('SIGKILL', alive);
    alive = await waitGone(alive, 2_000);
  }
  return alive;
}
