/**
 * Reading one cgroup's counters from cgroupfs, v1 or v2 (detected once per root), the way
 * cAdvisor's libcontainer handler does: CPU (cumulative, user/system, CFS throttling), memory
 * (usage, cache, RSS, mapped file, swap, failcnt, working set = usage − inactive_file, page
 * faults), OOM kills, PIDs and the cgroup's limits. A missing file or controller leaves that
 * field undefined and records a {@link CgroupReadProblem}; it never throws.
 *
 * @module
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { PSIData, PSIStats } from './summary-types.js';

/** Which cgroup hierarchy a root holds. */
export type CgroupVersion = 'v1' | 'v2';

/** The v1 controllers read (each a separate hierarchy below the root, possibly co-mounted). */
export const CGROUP_V1_CONTROLLERS = ['cpu', 'cpuacct', 'memory', 'pids'] as const;

/** The files {@link readCgroupV2} opens per cgroup (controller `''`: the unified tree); the root skips some. */
export const CGROUP_V2_FILES: readonly (readonly [string, string])[] = [
  'cpu.stat',
  'memory.stat',
  'memory.current',
  'memory.events',
  'pids.current',
  'cpu.max',
  'cpu.weight',
  'memory.max',
  'memory.low',
  'memory.peak',
  'memory.swap.current',
  'memory.swap.max',
  'pids.max',
  'cpu.pressure',
  'memory.pressure',
  'io.pressure',
].map((f) => ['', f] as const);

/** The files {@link readCgroupV1} opens per cgroup, as (controller, file). */
export const CGROUP_V1_FILES: readonly (readonly [string, string])[] = [
  ['cpuacct', 'cpuacct.usage'],
  ['cpuacct', 'cpuacct.stat'],
  ['cpu', 'cpu.stat'],
  ['memory', 'memory.usage_in_bytes'],
  ['memory', 'memory.stat'],
  ['memory', 'memory.max_usage_in_bytes'],
  ['memory', 'memory.failcnt'],
  ['pids', 'pids.current'],
  ['cpu', 'cpu.cfs_quota_us'],
  ['cpu', 'cpu.cfs_period_us'],
  ['cpu', 'cpu.shares'],
  ['memory', 'memory.limit_in_bytes'],
  ['memory', 'memory.soft_limit_in_bytes'],
  ['memory', 'memory.memsw.usage_in_bytes'],
  ['memory', 'memory.memsw.limit_in_bytes'],
  ['memory', 'memory.oom_control'],
  ['pids', 'pids.max'],
];

/** One cgroup's counters at one instant; a field is undefined when its file could not be read. */
export interface CgroupSample {
  /** Wall-clock time of the read, ms since the epoch. */
  readonly timeMs: number;
  /** Cumulative CPU time, ns. */
  readonly cpuUsageNs?: number;
  /** Cumulative user CPU time, ns. */
  readonly cpuUserNs?: number;
  /** Cumulative system CPU time, ns. */
  readonly cpuSystemNs?: number;
  /** CFS enforcement periods elapsed. */
  readonly cfsPeriods?: number;
  /** CFS periods throttled. */
  readonly cfsThrottledPeriods?: number;
  /** Time throttled, ns. */
  readonly cfsThrottledNs?: number;
  /** CFS quota in µs; 0 when unlimited. */
  readonly cpuQuotaUs?: number;
  /** CFS period in µs. */
  readonly cpuPeriodUs?: number;
  /** CPU shares (v2 weights converted back, as cAdvisor does). */
  readonly cpuShares?: number;
  /** Memory usage, bytes (v1 `memory.usage_in_bytes`, v2 `memory.current`). */
  readonly memoryUsageBytes?: number;
  /** Peak memory usage, bytes (v1 `max_usage_in_bytes`, v2 `memory.peak`). */
  readonly memoryMaxUsageBytes?: number;
  /** Memory limit, bytes; undefined when unlimited. */
  readonly memoryLimitBytes?: number;
  /** Swap limit, bytes; undefined when unlimited or unknown. */
  readonly memorySwapLimitBytes?: number;
  /** Memory reservation (v1 soft limit, v2 `memory.low`), bytes; undefined when unlimited. */
  readonly memoryReservationBytes?: number;
  /** usage − inactive_file, floored at 0 (cAdvisor's working set). */
  readonly workingSetBytes?: number;
  /** Page cache, bytes (v1 `total_cache`, v2 `file`). */
  readonly cacheBytes?: number;
  /** Anonymous memory, bytes (v1 `total_rss`, v2 `anon`). */
  readonly rssBytes?: number;
  /** Memory-mapped files, bytes. */
  readonly mappedFileBytes?: number;
  /** Kernel memory, bytes. */
  readonly kernelBytes?: number;
  /** Inactive file cache, bytes. */
  readonly inactiveFileBytes?: number;
  /** Active file cache, bytes. */
  readonly activeFileBytes?: number;
  /** Swap used, bytes. */
  readonly swapBytes?: number;
  /** Times the memory limit was hit. */
  readonly memoryFailcnt?: number;
  /** Page faults. */
  readonly pgfault?: number;
  /** Major page faults. */
  readonly pgmajfault?: number;
  /** Page faults of this cgroup alone (v1 `pgfault`; v2 has only the hierarchical count). */
  readonly pgfaultContainer?: number;
  /** Major page faults of this cgroup alone. */
  readonly pgmajfaultContainer?: number;
  /** OOM kills in this cgroup (v2 `memory.events` oom_kill, v1 `memory.oom_control` oom_kill). */
  readonly oomKills?: number;
  /** Processes/threads in the cgroup (`pids.current`). */
  readonly pids?: number;
  /** `pids.max`; 0 when unlimited (cAdvisor's convention for `threads_max`). */
  readonly pidsMax?: number;
  /** `cpu.pressure` (v2 with PSI). */
  readonly cpuPressure?: PSIStats;
  /** `memory.pressure` (v2 with PSI). */
  readonly memoryPressure?: PSIStats;
  /** `io.pressure` (v2 with PSI). */
  readonly ioPressure?: PSIStats;
}

/**
 * Parses a `*.pressure` file (`some avg10=… avg60=… avg300=… total=…` and `full …`); undefined
 * when the `some` line is missing. A missing `full` line (old kernels' `cpu.pressure`) is zeros.
 */
export function parsePressure(text: string): PSIStats | undefined {
  const lines = new Map<string, PSIData>();
  for (const line of text.split('\n')) {
    const [kind, ...fields] = line.trim().split(/\s+/);
    if (kind !== 'some' && kind !== 'full') continue;
    const kv = new Map(fields.map((f) => f.split('=') as [string, string]));
    lines.set(kind, {
      total: Number(kv.get('total') ?? 0),
      avg10: Number(kv.get('avg10') ?? 0),
      avg60: Number(kv.get('avg60') ?? 0),
      avg300: Number(kv.get('avg300') ?? 0),
    });
  }
  const some = lines.get('some');
  if (some === undefined) return undefined;
  return { some, full: lines.get('full') ?? { total: 0, avg10: 0, avg60: 0, avg300: 0 } };
}

/** A file that could not be read for one cgroup. */
export interface CgroupReadProblem {
  /** The cgroup, relative to the hierarchy root (`/` for the root). */
  readonly cgroup: string;
  /** The file that failed. */
  readonly file: string;
  /** Why (the errno code, e.g. `ENOENT`). */
  readonly reason: string;
}

/** What one read of a cgroup gives. */
export interface CgroupReadResult {
  /** The counters read. */
  readonly sample: CgroupSample;
  /** What could not be read (the sample is partial then). */
  readonly problems: readonly CgroupReadProblem[];
  /** False when the cgroup directory itself is gone (the container vanished). */
  readonly exists: boolean;
}

/** Parses `key value` lines (memory.stat, cpu.stat, memory.events) into a map. */
export function parseFlatKeyed(text: string): Map<string, number> {
  // A scan instead of split('\n') + slice per line: memory.stat is read for every cgroup.
  const out = new Map<string, number>();
  const end = text.length;
  let start = 0;
  while (start < end) {
    let nl = text.indexOf('\n', start);
    if (nl === -1) nl = end;
    const sp = text.indexOf(' ', start);
    if (sp > start && sp < nl) {
      const value = Number(text.slice(sp + 1, nl));
      if (Number.isFinite(value)) out.set(text.slice(start, sp), value);
    }
    start = nl + 1;
  }
  return out;
}

/** Values above this are "unlimited" in v1 (`PAGE_COUNTER_MAX` rounded to pages). */
const V1_UNLIMITED = 2 ** 62;

/** cAdvisor's conversion of a v2 `cpu.weight` back to v1 shares. */
export function weightToShares(weight: number): number {
  return weight === 0 ? 0 : 2 + Math.floor(((weight - 1) * 262142) / 9999);
}

/**
 * Reads cgroup files of one hierarchy layout, collecting problems instead of throwing.
 * Synchronously: cgroupfs files are generated by the kernel and never wait on a disk, and a
 * synchronous read costs a fraction of `fs.promises.readFile`'s thread-pool round trips
 * (see the benchmark); callers yield to the event loop between cgroups.
 */
class FileReads {
  readonly problems: CgroupReadProblem[] = [];
  missingDirs = 0;
  reads = 0;
  constructor(private readonly cgroup: string) {}

  text(path: string, file: string): string | undefined {
    this.reads++;
    try {
      return readFileSync(path, 'utf8');
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code ?? 'EIO';
      if (code === 'ENOENT') this.missingDirs++;
      this.problems.push({ cgroup: this.cgroup, file, reason: code });
      return undefined;
    }
  }

  num(path: string, file: string): number | undefined {
    const text = this.text(path, file);
    if (text === undefined) return undefined;
    const trimmed = text.trim();
    if (trimmed === 'max') return Number.POSITIVE_INFINITY;
    const n = Number(trimmed);
    if (!Number.isFinite(n)) {
      this.problems.push({
        cgroup: this.cgroup,
        file,
        reason: `unparsable value ${JSON.stringify(trimmed)}`,
      });
      return undefined;
    }
    return n;
  }

  /** Reads a file that legitimately does not exist on some kernels or at the root. */
  optionalText(path: string): string | undefined {
    try {
      return readFileSync(path, 'utf8');
    } catch {
      return undefined;
    }
  }
}

function workingSet(usage: number | undefined, inactiveFile: number | undefined): number | undefined {
  if (usage === undefined) return undefined;
  const inactive = inactiveFile ?? 0;
  return usage > inactive ? usage - inactive : 0;
}

const finite = (n: number | undefined): number | undefined =>
  n === undefined || !Number.isFinite(n) ? undefined : n;

/** Reads one cgroup (path relative to the hierarchy root) under cgroup v2. */
export async function readCgroupV2(
  root: string,
  cgroup: string,
  timeMs: number,
  rootMeminfo?: () => Promise<Map<string, number> | undefined>,
): Promise<CgroupReadResult> {
  const dir = dirOf(root, cgroup);
  const r = new FileReads(cgroup);
  const isRoot = cgroup === '/' || cgroup === '';
  const [cpuStatText, memStatText, memCurrent, memEvents, pidsCurrent] = await Promise.all([
    r.text(`${dir}/cpu.stat`, 'cpu.stat'),
    r.text(`${dir}/memory.stat`, 'memory.stat'),
    isRoot ? Promise.resolve(undefined) : r.num(`${dir}/memory.current`, 'memory.current'),
    isRoot ? Promise.resolve(undefined) : r.text(`${dir}/memory.events`, 'memory.events'),
    isRoot ? Promise.resolve(undefined) : r.num(`${dir}/pids.current`, 'pids.current'),
  ]);
  const exists = r.missingDirs < r.reads;
  const pressure = await Promise.all(
    ['cpu.pressure', 'memory.pressure', 'io.pressure'].map((f) => r.optionalText(`${dir}/${f}`)),
  );
  const psi = (t: string | undefined): PSIStats | undefined =>
    t === undefined ? undefined : parsePressure(t);
  const [cpuMax, cpuWeight, memMax, memLow, memPeak, swapCurrent, swapMax, pidsMax] = isRoot
    ? []
    : await Promise.all([
        r.optionalText(`${dir}/cpu.max`),
        r.optionalText(`${dir}/cpu.weight`),
        r.optionalText(`${dir}/memory.max`),
        r.optionalText(`${dir}/memory.low`),
        r.optionalText(`${dir}/memory.peak`),
        r.optionalText(`${dir}/memory.swap.current`),
        r.optionalText(`${dir}/memory.swap.max`),
        r.optionalText(`${dir}/pids.max`),
      ]);
  const cpu = cpuStatText === undefined ? undefined : parseFlatKeyed(cpuStatText);
  const mem = memStatText === undefined ? undefined : parseFlatKeyed(memStatText);
  const events = memEvents === undefined ? undefined : parseFlatKeyed(memEvents);
  let usage = finite(memCurrent);
  let swap = swapCurrent === undefined ? undefined : finite(Number(swapCurrent.trim()));
  if (isRoot && rootMeminfo !== undefined) {
    // The root has no memory.current: runc derives usage from /proc/meminfo.
    const mi = await rootMeminfo();
    const total = mi?.get('MemTotal');
    const free = mi?.get('MemFree');
    if (total !== undefined && free !== undefined) usage = total - free;
    const swapTotal = mi?.get('SwapTotal');
    const swapFree = mi?.get('SwapFree');
    if (swapTotal !== undefined && swapFree !== undefined) swap = swapTotal - swapFree;
  }
  const us = (key: string): number | undefined => {
    const v = cpu?.get(key);
    return v === undefined ? undefined : v * 1000;
  };
  let quotaUs: number | undefined;
  let periodUs: number | undefined;
  if (cpuMax !== undefined) {
    const [q, p] = cpuMax.trim().split(/\s+/);
    quotaUs = q === 'max' ? 0 : Number(q);
    periodUs = Number(p);
  }
  const limit = (text: string | undefined): number | undefined => {
    if (text === undefined) return undefined;
    const t = text.trim();
    return t === 'max' ? undefined : finite(Number(t));
  };
  const pm = pidsMax?.trim();
  const sample: Loose<CgroupSample> = {
    timeMs,
    cpuUsageNs: us('usage_usec'),
    cpuUserNs: us('user_usec'),
    cpuSystemNs: us('system_usec'),
    cfsPeriods: cpu?.get('nr_periods'),
    cfsThrottledPeriods: cpu?.get('nr_throttled'),
    cfsThrottledNs: us('throttled_usec'),
    cpuQuotaUs: quotaUs,
    cpuPeriodUs: periodUs,
    cpuShares: cpuWeight === undefined ? undefined : weightToShares(Number(cpuWeight.trim())),
    memoryUsageBytes: usage,
    memoryMaxUsageBytes: limit(memPeak),
    memoryLimitBytes: limit(memMax),
    memorySwapLimitBytes: limit(swapMax),
    memoryReservationBytes: limit(memLow) || undefined,
    workingSetBytes: workingSet(usage, mem?.get('inactive_file')),
    cacheBytes: mem?.get('file'),
    rssBytes: mem?.get('anon'),
    mappedFileBytes: mem?.get('file_mapped'),
    kernelBytes: mem?.get('kernel'),
    inactiveFileBytes: mem?.get('inactive_file'),
    activeFileBytes: mem?.get('active_file'),
    swapBytes: swap,
    memoryFailcnt: events?.get('max'),
    pgfault: mem?.get('pgfault'),
    pgmajfault: mem?.get('pgmajfault'),
    pgfaultContainer: mem?.get('pgfault'),
    pgmajfaultContainer: mem?.get('pgmajfault'),
    oomKills: events?.get('oom_kill'),
    pids: finite(pidsCurrent),
    pidsMax: pm === undefined ? undefined : pm === 'max' ? 0 : finite(Number(pm)),
    cpuPressure: psi(pressure[0]),
    memoryPressure: psi(pressure[1]),
    ioPressure: psi(pressure[2]),
  };
  return { sample: dropUndefined<CgroupSample>(sample), problems: r.problems, exists };
}

/** Reads one cgroup under cgroup v1 (`<root>/<controller>/<cgroup>`). */
export async function readCgroupV1(root: string, cgroup: string, timeMs: number): Promise<CgroupReadResult> {
  const r = new FileReads(cgroup);
  const dirs = new Map<string, string>();
  const at = (controller: string, file: string): string => {
    let dir = dirs.get(controller);
    if (dir === undefined) {
      dir = dirOf(root, controller === '' ? cgroup : `${controller}/${cgroup}`);
      dirs.set(controller, dir);
    }
    return `${dir}/${file}`;
  };
  const isRoot = cgroup === '/' || cgroup === '';
  const [usage, acctStat, cpuStat, memUsage, memStat, memMax, memFailcnt, pidsCurrent] = await Promise.all([
    r.num(at('cpuacct', 'cpuacct.usage'), 'cpuacct.usage'),
    r.text(at('cpuacct', 'cpuacct.stat'), 'cpuacct.stat'),
    r.text(at('cpu', 'cpu.stat'), 'cpu.stat'),
    r.num(at('memory', 'memory.usage_in_bytes'), 'memory.usage_in_bytes'),
    r.text(at('memory', 'memory.stat'), 'memory.stat'),
    r.num(at('memory', 'memory.max_usage_in_bytes'), 'memory.max_usage_in_bytes'),
    r.num(at('memory', 'memory.failcnt'), 'memory.failcnt'),
    isRoot ? Promise.resolve(undefined) : r.num(at('pids', 'pids.current'), 'pids.current'),
  ]);
  const exists = r.missingDirs < r.reads;
  const [quota, period, shares, limit, softLimit, memswUsage, memswLimit, oomControl, pidsMax] =
    await Promise.all([
      r.optionalText(at('cpu', 'cpu.cfs_quota_us')),
      r.optionalText(at('cpu', 'cpu.cfs_period_us')),
      r.optionalText(at('cpu', 'cpu.shares')),
      r.optionalText(at('memory', 'memory.limit_in_bytes')),
      r.optionalText(at('memory', 'memory.soft_limit_in_bytes')),
      r.optionalText(at('memory', 'memory.memsw.usage_in_bytes')),
      r.optionalText(at('memory', 'memory.memsw.limit_in_bytes')),
      r.optionalText(at('memory', 'memory.oom_control')),
      isRoot ? Promise.resolve(undefined) : r.optionalText(at('pids', 'pids.max')),
    ]);
  const acct = acctStat === undefined ? undefined : parseFlatKeyed(acctStat);
  const cpu = cpuStat === undefined ? undefined : parseFlatKeyed(cpuStat);
  const mem = memStat === undefined ? undefined : parseFlatKeyed(memStat);
  const oom = oomControl === undefined ? undefined : parseFlatKeyed(oomControl);
  // cpuacct.stat counts USER_HZ (100 Hz) ticks.
  const ticks = (key: string): number | undefined => {
    const v = acct?.get(key);
    return v === undefined ? undefined : v * 10_000_000;
  };
  const num = (text: string | undefined): number | undefined =>
    text === undefined ? undefined : finite(Number(text.trim()));
  const bounded = (text: string | undefined): number | undefined => {
    const n = num(text);
    return n === undefined || n >= V1_UNLIMITED ? undefined : n;
  };
  const quotaUs = num(quota);
  const memUsed = finite(memUsage);
  const memsw = num(memswUsage);
  const pm = pidsMax?.trim();
  const sample: Loose<CgroupSample> = {
    timeMs,
    cpuUsageNs: finite(usage),
    cpuUserNs: ticks('user'),
    cpuSystemNs: ticks('system'),
    cfsPeriods: cpu?.get('nr_periods'),
    cfsThrottledPeriods: cpu?.get('nr_throttled'),
    cfsThrottledNs: cpu?.get('throttled_time'),
    cpuQuotaUs: quotaUs === undefined ? undefined : Math.max(quotaUs, 0),
    cpuPeriodUs: num(period),
    cpuShares: num(shares),
    memoryUsageBytes: memUsed,
    memoryMaxUsageBytes: finite(memMax),
    memoryLimitBytes: bounded(limit),
    memorySwapLimitBytes: bounded(memswLimit),
    memoryReservationBytes: bounded(softLimit),
    workingSetBytes: workingSet(memUsed, mem?.get('total_inactive_file')),
    cacheBytes: mem?.get('total_cache'),
    rssBytes: mem?.get('total_rss'),
    mappedFileBytes: mem?.get('total_mapped_file'),
    inactiveFileBytes: mem?.get('total_inactive_file'),
    activeFileBytes: mem?.get('total_active_file'),
    swapBytes:
      memsw !== undefined && memUsed !== undefined ? Math.max(0, memsw - memUsed) : mem?.get('total_swap'),
    memoryFailcnt: finite(memFailcnt),
    pgfault: mem?.get('total_pgfault'),
    pgmajfault: mem?.get('total_pgmajfault'),
    pgfaultContainer: mem?.get('pgfault'),
    pgmajfaultContainer: mem?.get('pgmajfault'),
    oomKills: oom?.get('oom_kill'),
    pids: finite(pidsCurrent),
    pidsMax: pm === undefined ? undefined : pm === 'max' ? 0 : finite(Number(pm)),
  };
  return { sample: dropUndefined<CgroupSample>(sample), problems: r.problems, exists };
}

/** `T` with `undefined` allowed on every optional field, before {@link dropUndefined}. */
type Loose<T> = { [K in keyof T]: T[K] | undefined };

function dropUndefined<T extends object>(o: Loose<T>): T {
  const out: Record<string, unknown> = {};
  const loose = o as Record<string, unknown>;
  for (const k in loose) if (loose[k] !== undefined) out[k] = loose[k];
  return out as T;
}

/**
 * `<root>/<cgroup>` without a trailing slash: one `path.join` per cgroup directory, the file
 * names are appended by concatenation (a `join` per file was a tenth of a pass).
 */
function dirOf(root: string, cgroup: string): string {
  const dir = join(root, cgroup);
  return dir.length > 1 && dir.endsWith('/') ? dir.slice(0, -1) : dir;
}
