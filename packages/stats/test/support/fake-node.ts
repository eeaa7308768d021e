// Fake cgroupfs (v1 or v2) and /proc trees in a temp dir, for unit tests and the benchmark.
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export type Version = 'v1' | 'v2';

/** What one fake cgroup reports. */
export interface FakeCgroup {
  cpuUsageNs: number;
  userNs?: number;
  systemNs?: number;
  memoryUsage: number;
  inactiveFile: number;
  activeFile?: number;
  anon: number;
  file?: number;
  pgfault?: number;
  pgmajfault?: number;
  oomKills?: number;
  pids?: number;
  memoryLimit?: number;
  cpuQuotaUs?: number;
  procs?: number[];
  /** v2 only: writes `cpu.pressure`, `memory.pressure`, `io.pressure` with this `some` total (µs); full = half. */
  pressureTotalUs?: number;
}

export const MEM_TOTAL = 8 * 1024 * 1024 * 1024;
export const MEM_FREE = 5 * 1024 * 1024 * 1024;

export class FakeNode {
  readonly cgroupRoot: string;
  readonly procRoot: string;
  private constructor(
    readonly dir: string,
    readonly version: Version,
  ) {
    this.cgroupRoot = join(dir, 'cgroup');
    this.procRoot = join(dir, 'proc');
  }

  static async create(version: Version, base = tmpdir()): Promise<FakeNode> {
    const dir = await mkdtemp(join(base, 'nodeagent-stats-'));
    const n = new FakeNode(dir, version);
    if (version === 'v2') {
      await mkdir(n.cgroupRoot, { recursive: true });
      await writeFile(join(n.cgroupRoot, 'cgroup.controllers'), 'cpu memory pids\n');
    } else {
      for (const c of ['cpu', 'cpuacct', 'memory', 'pids'])
        await mkdir(join(n.cgroupRoot, c), { recursive: true });
    }
    await mkdir(join(n.procRoot, 'sys', 'kernel'), { recursive: true });
    await mkdir(join(n.procRoot, 'self'), { recursive: true });
    await writeFile(
      join(n.procRoot, 'meminfo'),
      `MemTotal:       ${MEM_TOTAL / 1024} kB\nMemFree:        ${MEM_FREE / 1024} kB\nSwapTotal:      0 kB\nSwapFree:       0 kB\n`,
    );
    await writeFile(join(n.procRoot, 'stat'), 'cpu  100 0 50 1000 0 0 0 0 0 0\n');
    await writeFile(join(n.procRoot, 'loadavg'), '0.00 0.01 0.05 1/321 4242\n');
    await writeFile(join(n.procRoot, 'uptime'), '1000.00 1800.00\n');
    await writeFile(join(n.procRoot, 'sys', 'kernel', 'pid_max'), '4194304\n');
    await writeFile(join(n.procRoot, 'self', 'mountinfo'), '22 1 8:1 / / rw - ext4 /dev/sda1 rw\n');
    await n.netDev(1, [['eth0', 1000, 2000]]);
    return n;
  }

  /** Writes `/proc/<pid>/net/dev` with (name, rxBytes, txBytes) interfaces plus `lo`. */
  async netDev(pid: number, ifaces: [string, number, number][]): Promise<void> {
    await mkdir(join(this.procRoot, String(pid), 'net'), { recursive: true });
    const head =
      'Inter-|   Receive                                                |  Transmit\n' +
      ' face |bytes    packets errs drop fifo frame compressed multicast|bytes    packets errs drop fifo colls carrier compressed\n';
    const line = (name: string, rx: number, tx: number) =>
      `${name.padStart(6)}: ${rx} 10 1 0 0 0 0 0 ${tx} 20 2 0 0 0 0 0\n`;
    await writeFile(
      join(this.procRoot, String(pid), 'net', 'dev'),
      head + line('lo', 5, 5) + ifaces.map(([n, rx, tx]) => line(n, rx, tx)).join(''),
    );
  }

  /** Creates or rewrites cgroup `path` (e.g. `/kubepods/burstable/pod<uid>/<id>`). */
  async cgroup(path: string, c: FakeCgroup): Promise<void> {
    const isRoot = path === '/';
    const files: [string, string, string][] = [];
    if (this.version === 'v2') {
      files.push(
        [
          '',
          'cpu.stat',
          `usage_usec ${c.cpuUsageNs / 1000}\nuser_usec ${(c.userNs ?? 0) / 1000}\nsystem_usec ${(c.systemNs ?? 0) / 1000}\nnr_periods 0\nnr_throttled 0\nthrottled_usec 0\n`,
        ],
        [
          '',
          'memory.stat',
          `anon ${c.anon}\nfile ${c.file ?? c.inactiveFile}\nfile_mapped 0\nkernel 4096\nactive_file ${c.activeFile ?? 0}\ninactive_file ${c.inactiveFile}\npgfault ${c.pgfault ?? 0}\npgmajfault ${c.pgmajfault ?? 0}\n`,
        ],
        ['', 'cgroup.procs', (c.procs ?? []).map((p) => `${p}\n`).join('')],
      );
      if (c.pressureTotalUs !== undefined) {
        const t = c.pressureTotalUs;
        const text = `some avg10=1.50 avg60=0.75 avg300=0.25 total=${t}\nfull avg10=0.50 avg60=0.25 avg300=0.10 total=${t / 2}\n`;
        files.push(['', 'cpu.pressure', text], ['', 'memory.pressure', text], ['', 'io.pressure', text]);
      }
      if (!isRoot) {
        files.push(
          ['', 'memory.current', `${c.memoryUsage}\n`],
          ['', 'memory.events', `low 0\nhigh 0\nmax 0\noom 0\noom_kill ${c.oomKills ?? 0}\n`],
          ['', 'memory.max', c.memoryLimit === undefined ? 'max\n' : `${c.memoryLimit}\n`],
          ['', 'cpu.max', c.cpuQuotaUs === undefined ? 'max 100000\n' : `${c.cpuQuotaUs} 100000\n`],
          ['', 'cpu.weight', '100\n'],
          ['', 'pids.current', `${c.pids ?? 1}\n`],
          ['', 'pids.max', 'max\n'],
        );
      }
    } else {
      files.push(
        ['cpuacct', 'cpuacct.usage', `${c.cpuUsageNs}\n`],
        ['cpuacct', 'cpuacct.stat', `user ${(c.userNs ?? 0) / 1e7}\nsystem ${(c.systemNs ?? 0) / 1e7}\n`],
        ['cpu', 'cpu.stat', 'nr_periods 0\nnr_throttled 0\nthrottled_time 0\n'],
        ['cpu', 'cpu.cfs_quota_us', `${c.cpuQuotaUs ?? -1}\n`],
        ['cpu', 'cpu.cfs_period_us', '100000\n'],
        ['cpu', 'cpu.shares', '1024\n'],
        ['memory', 'memory.usage_in_bytes', `${c.memoryUsage}\n`],
        ['memory', 'memory.max_usage_in_bytes', `${c.memoryUsage}\n`],
        ['memory', 'memory.limit_in_bytes', `${c.memoryLimit ?? '9223372036854771712'}\n`],
        ['memory', 'memory.failcnt', '0\n'],
        ['memory', 'memory.oom_control', `oom_kill_disable 0\nunder_oom 0\noom_kill ${c.oomKills ?? 0}\n`],
        [
          'memory',
          'memory.stat',
          `cache ${c.file ?? c.inactiveFile}\nrss ${c.anon}\npgfault ${c.pgfault ?? 0}\npgmajfault ${c.pgmajfault ?? 0}\ntotal_cache ${c.file ?? c.inactiveFile}\ntotal_rss ${c.anon}\ntotal_mapped_file 0\ntotal_inactive_file ${c.inactiveFile}\ntotal_active_file ${c.activeFile ?? 0}\ntotal_pgfault ${c.pgfault ?? 0}\ntotal_pgmajfault ${c.pgmajfault ?? 0}\n`,
        ],
        ['memory', 'cgroup.procs', (c.procs ?? []).map((p) => `${p}\n`).join('')],
      );
      if (!isRoot) files.push(['pids', 'pids.current', `${c.pids ?? 1}\n`], ['pids', 'pids.max', 'max\n']);
    }
    for (const [controller, file, text] of files) {
      const dir = join(this.cgroupRoot, controller, path);
      await mkdir(dir, { recursive: true });
      await writeFile(join(dir, file), text);
    }
  }

  /** Removes a cgroup (a container that vanished). */
  async removeCgroup(path: string): Promise<void> {
    const controllers = this.version === 'v2' ? [''] : ['cpu', 'cpuacct', 'memory', 'pids'];
    for (const c of controllers) await rm(join(this.cgroupRoot, c, path), { recursive: true, force: true });
  }

  /** Removes one file of a cgroup (a kernel without that controller / file). */
  async removeFile(path: string, controller: string, file: string): Promise<void> {
    await rm(join(this.cgroupRoot, this.version === 'v2' ? '' : controller, path, file), { force: true });
  }

  async cleanup(): Promise<void> {
    await rm(this.dir, { recursive: true, force: true });
  }
}
