/**
 * The few `/proc` files the node's statistics need: `/proc/meminfo` (capacity, and usage of the
 * v2 root cgroup), `/proc/stat` (node CPU when the root cgroup has no counters),
 * `/proc/<pid>/net/dev` (a network namespace's interfaces), `/proc/loadavg` and
 * `/proc/sys/kernel/pid_max` (rlimit). The root is injected so tests use a temp dir.
 *
 * @module
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

/** One interface's counters from `net/dev`. */
export interface NetDevCounters {
  /** Interface name. */
  readonly name: string;
  /** Bytes received. */
  readonly rxBytes: number;
  /** Packets received. */
  readonly rxPackets: number;
  /** Receive errors. */
  readonly rxErrors: number;
  /** Received packets dropped. */
  readonly rxDropped: number;
  /** Bytes transmitted. */
  readonly txBytes: number;
  /** Packets transmitted. */
  readonly txPackets: number;
  /** Transmit errors. */
  readonly txErrors: number;
  /** Transmitted packets dropped. */
  readonly txDropped: number;
}

/** Interfaces cAdvisor leaves out of container network stats (by name prefix). */
export const IGNORED_INTERFACE_PREFIXES: readonly string[] = ['lo', 'veth', 'docker', 'nerdctl'];

/** Parses `/proc/meminfo` into bytes (`kB` values multiplied by 1024). */
export function parseMeminfo(text: string): Map<string, number> {
  const out = new Map<string, number>();
  for (const line of text.split('\n')) {
    const m = /^(\S+):\s+(\d+)(\s+kB)?/.exec(line);
    if (m?.[1] !== undefined && m[2] !== undefined) out.set(m[1], Number(m[2]) * (m[3] ? 1024 : 1));
  }
  return out;
}

/** Parses a `net/dev` file; interfaces with an ignored prefix are dropped. */
export function parseNetDev(text: string, ignored = IGNORED_INTERFACE_PREFIXES): NetDevCounters[] {
  const out: NetDevCounters[] = [];
  for (const line of text.split('\n').slice(2)) {
    const colon = line.indexOf(':');
    if (colon < 0) continue;
    const name = line.slice(0, colon).trim();
    if (ignored.some((p) => name.startsWith(p))) continue;
    const f = line
      .slice(colon + 1)
      .trim()
      .split(/\s+/)
      .map(Number);
    if (f.length < 16) continue;
    const at = (i: number): number => f[i] ?? 0;
    out.push({
      name,
      rxBytes: at(0),
      rxPackets: at(1),
      rxErrors: at(2),
      rxDropped: at(3),
      txBytes: at(8),
      txPackets: at(9),
      txErrors: at(10),
      txDropped: at(11),
    });
  }
  return out;
}

/**
 * Node CPU time from the `cpu` line of `/proc/stat`, ns: user+nice+system+irq+softirq+steal
 * (idle and iowait excluded), at USER_HZ = 100.
 */
export function parseProcStatCpuNs(text: string): number | undefined {
  const line = text.split('\n').find((l) => l.startsWith('cpu '));
  if (line === undefined) return undefined;
  const f = line.trim().split(/\s+/).slice(1).map(Number);
  const busy = [0, 1, 2, 5, 6, 7].reduce((sum, i) => sum + (f[i] ?? 0), 0);
  return busy * 10_000_000;
}

/** Reads files below one `/proc` root. */
export class ProcFs {
  /** @param root the proc mount, `/proc` on a real node. */
  constructor(readonly root: string) {}

  /** `/proc/meminfo`, in bytes; undefined when unreadable. */
  async meminfo(): Promise<Map<string, number> | undefined> {
    const text = await this.read('meminfo');
    return text === undefined ? undefined : parseMeminfo(text);
  }

  /** Busy CPU time of the node from `/proc/stat`, ns. */
  async cpuNs(): Promise<number | undefined> {
    const text = await this.read('stat');
    return text === undefined ? undefined : parseProcStatCpuNs(text);
  }

  /** Interfaces of the network namespace `pid` is in (`self` or `1` for the host's). */
  async netDev(pid: number | 'self'): Promise<NetDevCounters[] | undefined> {
    const text = await this.read(join(String(pid), 'net', 'dev'));
    return text === undefined ? undefined : parseNetDev(text);
  }

  /** Number of scheduling entities (threads) on the node, from `/proc/loadavg`. */
  async processCount(): Promise<number | undefined> {
    const text = await this.read('loadavg');
    const total = text?.split(/\s+/)[3]?.split('/')[1];
    return total === undefined ? undefined : Number(total);
  }

  /** `/proc/sys/kernel/pid_max`. */
  async pidMax(): Promise<number | undefined> {
    const text = await this.read(join('sys', 'kernel', 'pid_max'));
    return text === undefined ? undefined : Number(text.trim());
  }

  /** Seconds since boot, from `/proc/uptime`. */
  async uptimeSeconds(): Promise<number | undefined> {
    const text = await this.read('uptime');
    return text === undefined ? undefined : Number(text.split(/\s+/)[0]);
  }

  /** Synchronous, as cgroupfs reads: procfs files never wait on a disk. */
  private async read(rel: string): Promise<string | undefined> {
    try {
      return readFileSync(join(this.root, rel), 'utf8');
    } catch {
      return undefined;
    }
  }
}
