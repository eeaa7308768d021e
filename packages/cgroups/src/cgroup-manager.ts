/**
 * Creating, updating and removing one cgroup by name on v1 or v2 (upstream `cgroupManager`
 * with libcontainer's fs/fs2 writers): the directory in every hierarchy (v2: with the root's
 * controllers enabled in each ancestor's `cgroup.subtree_control`), the values of a
 * {@link ResourceConfig} in the files each version uses, and removal children first.
 *
 * @module
 */
import { join } from 'node:path';
import { type Clock, type Logger, noopLogger, realClock } from '@nodeagent/core';
import { type CgroupFs, subdirectoriesOf } from './cgroup-fs.js';
import type { CgroupLayout } from './cgroup-layout.js';
import { type CgroupDriver, type CgroupName, cgroupPath } from './cgroup-name.js';
import { CgroupError } from './errors.js';
import { cpuSharesToWeight, hugePageSizeName, type ResourceConfig } from './resource-config.js';

/** Controllers the kubelet checks a cgroup for (upstream `getSupportedUnifiedControllers` / v1 whitelist). */
const NEEDED_V2 = ['cpu', 'cpuset', 'memory', 'hugetlb', 'pids'];
const NEEDED_V1 = ['cpu', 'cpuacct', 'cpuset', 'memory', 'pids'];

/** What {@link CgroupManager} works with. */
export interface CgroupManagerDeps {
  /** Naming of cgroups. */
  readonly driver: CgroupDriver;
  /** Where the controllers are. */
  readonly layout: CgroupLayout;
  /** The filesystem calls. */
  readonly fs: CgroupFs;
  /** Huge page sizes of the machine, bytes (omitted sizes get limit 0 on pod cgroups). */
  readonly hugePageSizesBytes: readonly bigint[];
  /** @default realClock */
  readonly clock?: Clock;
  /** @default noopLogger */
  readonly logger?: Logger;
}

/** One-cgroup operations (upstream `CgroupManager`). */
export class CgroupManager {
  readonly #d: CgroupManagerDeps;
  readonly #clock: Clock;
  readonly #log: Logger;

  /** @param deps see {@link CgroupManagerDeps}. */
  constructor(deps: CgroupManagerDeps) {
    this.#d = deps;
    this.#clock = deps.clock ?? realClock;
    this.#log = deps.logger ?? noopLogger;
  }

  /** The cgroup version in use. */
  get version(): 1 | 2 {
    return this.#d.layout.version;
  }

  /** The literal cgroupfs-form path of `name` under the driver (upstream `Name`). */
  name(name: CgroupName): string {
    return cgroupPath(name, this.#d.driver);
  }

  /** Directories of `name` in every hierarchy it is created in. */
  paths(name: CgroupName): string[] {
    const rel = this.name(name);
    return this.#d.layout.hierarchies.map((h) => join(h, rel));
  }

  #controllerPath(controller: string, name: CgroupName): string | undefined {
    const h = this.#d.layout.controllers.get(controller);
    return h === undefined ? undefined : join(h, this.name(name));
  }

  /** Why `name` is not a usable cgroup, or `undefined` when it is (upstream `Validate`). */
  validate(name: CgroupName): string | undefined {
    const { fs, layout } = this.#d;
    if (layout.version === 2) {
      const dir = join(layout.mountRoot, this.name(name));
      const file = join(dir, 'cgroup.controllers');
      if (!fs.exists(file)) return `cgroup ${JSON.stringify(this.name(name))} does not exist (${dir})`;
      const enabled = new Set(fs.readFile(file).split(/\s+/).filter(Boolean));
      const missing = NEEDED_V2.filter((c) => layout.controllers.has(c) && !enabled.has(c));
      return missing.length > 0
        ? `cgroup ${JSON.stringify(this.name(name))} has some missing controllers: ${missing.join(', ')}`
        : undefined;
    }
    const missing = NEEDED_V1.map((c) => this.#controllerPath(c, name)).filter(
      (p): p is string => p !== undefined && !fs.isDirectory(p),
    );
    return missing.length > 0
      ? `cgroup ${JSON.stringify(this.name(name))} has some missing paths: ${missing.join(', ')}`
      : undefined;
  }

  /** Whether `name` exists with the needed controllers (upstream `Exists`). */
  exists(name: CgroupName): boolean {
    return this.validate(name) === undefined;
  }

  /** Creates `name` (and missing parents) and writes `config` (upstream `Create`). @throws CgroupError */
  create(name: CgroupName, config: ResourceConfig = {}): void {
    const { fs, layout } = this.#d;
    const rel = this.name(name);
    const parts = rel.split('/').filter(Boolean);
    try {
      if (layout.version === 2) {
        const available = [...layout.controllers.keys()];
        let dir = layout.mountRoot;
        for (const part of parts) {
          this.#enableControllers(dir, available);
          dir = join(dir, part);
          fs.mkdir(dir);
        }
      } else {
        const cpusetRoot = layout.controllers.get('cpuset');
        for (const h of layout.hierarchies) {
          let dir = h;
          for (const part of parts) {
            const parent = dir;
            dir = join(dir, part);
            if (fs.exists(dir)) continue;
            fs.mkdir(dir);
            // A new cpuset cgroup starts empty and cannot take tasks: copy the parent's (libcontainer).
            if (h === cpusetRoot) this.#inheritCpuset(parent, dir);
          }
        }
      }
    } catch (err) {
      if (err instanceof CgroupError) throw err;
      throw new CgroupError(
        'create-failed',
        rel,
        `failed to create cgroup ${rel}: ${(err as Error).message}`,
        {
          cause: err,
        },
      );
    }
    this.update(name, config);
    this.#log.debug({ cgroup: rel }, 'Created cgroup');
  }

  #enableControllers(dir: string, controllers: readonly string[]): void {
    const file = join(dir, 'cgroup.subtree_control');
    const all = controllers.map((c) => `+${c}`);
    try {
      this.#d.fs.writeFile(file, all.join(' '));
    } catch {
      // As runc: one by one, a controller the parent cannot delegate is left out.
      for (const c of all) {
        try {
          this.#d.fs.writeFile(file, c);
        } catch {}
      }
    }
  }

  #inheritCpuset(parent: string, dir: string): void {
    const { fs } = this.#d;
    for (const file of ['cpuset.cpus', 'cpuset.mems']) {
      const own = fs.exists(join(dir, file)) ? fs.readFile(join(dir, file)).trim() : '';
      if (own !== '') continue;
      const fromParent = fs.exists(join(parent, file)) ? fs.readFile(join(parent, file)).trim() : '';
      if (fromParent !== '') fs.writeFile(join(dir, file), fromParent);
    }
  }

  /** Writes `config` into `name`'s files (upstream `Update`). @throws CgroupError `update-failed` */
  update(name: CgroupName, config: ResourceConfig): void {
    if (this.#d.layout.version === 2) this.#setV2(name, config);
    else this.#setV1(name, config);
  }

  #write(dir: string | undefined, file: string, value: string): void {
    if (dir === undefined) return;
    const path = join(dir, file);
    try {
      this.#d.fs.writeFile(path, value);
    } catch (err) {
      throw new CgroupError(
        'update-failed',
        dir,
        `failed to write ${JSON.stringify(value)} to ${path}: ${(err as Error).message}`,
        {
          cause: err,
        },
      );
    }
  }

  #setV2(name: CgroupName, c: ResourceConfig): void {
    const { layout } = this.#d;
    const dir = join(layout.mountRoot, this.name(name));
    const has = (ctrl: string) => layout.controllers.has(ctrl);
    if (c.cpuSet !== undefined && has('cpuset')) this.#write(dir, 'cpuset.cpus', c.cpuSet);
    if (c.cpuShares !== undefined && c.cpuShares !== 0n)
      this.#write(dir, 'cpu.weight', String(cpuSharesToWeight(c.cpuShares)));
    const quota = c.cpuQuota ?? 0n;
    const period = c.cpuPeriod ?? 0n;
    if (quota !== 0n || period !== 0n) {
      this.#write(
        dir,
        'cpu.max',
        `${quota > 0n ? String(quota) : 'max'}${period !== 0n ? ` ${period}` : ''}`,
      );
    }
    if (c.memory !== undefined && c.memory !== 0n)
      this.#write(dir, 'memory.max', c.memory < 0n ? 'max' : String(c.memory));
    if (c.pidsLimit !== undefined && c.pidsLimit !== 0n)
      this.#write(dir, 'pids.max', c.pidsLimit > 0n ? String(c.pidsLimit) : 'max');
    if (c.hugePageLimits !== undefined && has('hugetlb')) {
      for (const size of this.#d.hugePageSizesBytes) {
        this.#write(dir, `hugetlb.${hugePageSizeName(size)}.max`, String(c.hugePageLimits.get(size) ?? 0n));
      }
    }
    for (const [file, value] of Object.entries(c.unified ?? {})) this.#write(dir, file, value);
  }

  #setV1(name: CgroupName, c: ResourceConfig): void {
    const cpu = this.#controllerPath('cpu', name);
    if (c.cpuSet !== undefined) this.#write(this.#controllerPath('cpuset', name), 'cpuset.cpus', c.cpuSet);
    if (c.cpuShares !== undefined && c.cpuShares !== 0n) this.#write(cpu, 'cpu.shares', String(c.cpuShares));
    const quota = c.cpuQuota ?? 0n;
    const period = c.cpuPeriod ?? 0n;
    // libcontainer's order: the period first; if the kernel refuses it against the old quota,
    // write the quota and then the period again.
    let retryPeriod = false;
    if (period !== 0n) {
      try {
        this.#write(cpu, 'cpu.cfs_period_us', String(period));
      } catch (err) {
        if (quota === 0n) throw err;
        retryPeriod = true;
      }
    }
    if (quota !== 0n) {
      this.#write(cpu, 'cpu.cfs_quota_us', String(quota));
      if (retryPeriod) this.#write(cpu, 'cpu.cfs_period_us', String(period));
    }
    if (c.memory !== undefined && c.memory !== 0n) {
      this.#write(
        this.#controllerPath('memory', name),
        'memory.limit_in_bytes',
        c.memory < 0n ? '-1' : String(c.memory),
      );
    }
    if (c.pidsLimit !== undefined && c.pidsLimit !== 0n) {
      this.#write(
        this.#controllerPath('pids', name),
        'pids.max',
        c.pidsLimit > 0n ? String(c.pidsLimit) : 'max',
      );
    }
    const hugetlb = this.#controllerPath('hugetlb', name);
    if (c.hugePageLimits !== undefined && hugetlb !== undefined) {
      for (const size of this.#d.hugePageSizesBytes) {
        this.#write(
          hugetlb,
          `hugetlb.${hugePageSizeName(size)}.limit_in_bytes`,
          String(c.hugePageLimits.get(size) ?? 0n),
        );
      }
    }
  }

  /** Every process in `name` and its descendants, in every hierarchy (upstream `Pids`). */
  pids(name: CgroupName): number[] {
    const { fs, layout } = this.#d;
    const rel = this.name(name);
    const out = new Set<number>();
    const walk = (dir: string): void => {
      let children: string[];
      try {
        children = subdirectoriesOf(fs, dir);
      } catch {
        return;
      }
      const procs = join(dir, 'cgroup.procs');
      if (fs.exists(procs)) {
        for (const line of fs.readFile(procs).split('\n')) {
          const pid = Number(line.trim());
          if (line.trim() !== '' && Number.isInteger(pid)) out.add(pid);
        }
      }
      for (const c of children) walk(join(dir, c));
    };
    for (const h of [...layout.hierarchies, ...layout.cleanupOnly]) walk(join(h, rel));
    return [...out].sort((a, b) => a - b);
  }

  /**
   * Removes `name` and every cgroup below it from every hierarchy, children first (upstream
   * `Destroy`, libcontainer `RemovePath`); a busy cgroup is retried a few times as the kernel
   * may need a moment after its last task exited. @throws CgroupError `destroy-failed`
   */
  async destroy(name: CgroupName): Promise<void> {
    const { fs, layout } = this.#d;
    const rel = this.name(name);
    const remove = async (dir: string): Promise<void> => {
      if (!fs.isDirectory(dir)) return;
      for (const c of subdirectoriesOf(fs, dir)) await remove(join(dir, c));
      let delayMs = 10;
      for (let attempt = 0; ; attempt++) {
        try {
          fs.rmdir(dir);
          return;
        } catch (err) {
          const code = (err as NodeJS.ErrnoException).code;
          if (code === 'ENOENT') return;
          if (code !== 'EBUSY' || attempt >= 5) {
            throw new CgroupError(
              'destroy-failed',
              rel,
              `unable to destroy cgroup paths for cgroup ${rel}: ${(err as Error).message}`,
              {
                cause: err,
              },
            );
          }
          await this.#clock.sleep(delayMs);
          delayMs *= 2;
        }
      }
    };
    for (const h of [...layout.hierarchies, ...layout.cleanupOnly]) await remove(join(h, rel));
    this.#log.debug({ cgroup: rel }, 'Removed cgroup');
  }

  /** Writes `1` to `cgroup.kill` (cgroup v2, kernel ≥ 5.14); false when the file is absent. */
  killAll(name: CgroupName): boolean {
    const { fs, layout } = this.#d;
    if (layout.version !== 2) return false;
    const file = join(layout.mountRoot, this.name(name), 'cgroup.kill');
    if (!fs.exists(file)) return false;
    this.#write(join(layout.mountRoot, this.name(name)), 'cgroup.kill', '1');
    return true;
  }

  /** Sends SIGKILL to `pid`; false when it is gone. */
  killPid(pid: number): boolean {
    return this.#d.fs.kill(pid);
  }
}
