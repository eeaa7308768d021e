/**
 * A fake cgroup tree for tests (`@nodeagent/cgroups/testing`): a temp directory laid out like
 * `/sys/fs/cgroup` on a v1 or v2 machine, with a {@link CgroupFs} that emulates what the
 * kernel does there — `mkdir` populates interface files (`cgroup.procs`; v2 `cgroup.controllers`
 * from the parent's `cgroup.subtree_control`, `cgroup.kill`; v1 cpuset files), `rmdir` removes a
 * cgroup with its files and refuses one with children or processes (EBUSY), `cgroup.kill` and
 * SIGKILL make processes leave — plus the procfs and sysfs files the manager reads.
 *
 * @module
 */

import { randomBytes } from 'node:crypto';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmdirSync,
  rmSync,
  statSync,
  unlinkSync,
  writeFileSync,
} from 'node:fs';
import os from 'node:os';
import { dirname, join } from 'node:path';
import { type CgroupFs, nodeCgroupFs } from './cgroup-fs.js';
import { detectCgroupLayout } from './cgroup-layout.js';
import { CgroupManager } from './cgroup-manager.js';

/** Options of {@link createFakeCgroupTree}. */
export interface FakeCgroupTreeOptions {
  /** cgroup v1 (one hierarchy per controller) or v2 (unified). */
  readonly version: 1 | 2;
  /** Controllers of the machine. @default cpuset, cpu, io (v2) / cpuacct, blkio (v1), memory, hugetlb, pids */
  readonly controllers?: readonly string[];
  /** v1 only: also a hybrid-mode `unified` hierarchy. @default false */
  readonly hybrid?: boolean;
  /** CPUs of the root cpuset. @default "0-3" */
  readonly cpus?: string;
  /** Huge page sizes in kB under `sys/kernel/mm/hugepages`. @default [] */
  readonly hugePagesKb?: readonly number[];
  /** `kernel/pid_max` and `kernel/threads-max`. @default [4194304, 126000] */
  readonly pidMax?: readonly [number, number];
}

/** A fake machine: cgroup mount root, procfs and sysfs under one temp dir. */
export interface FakeCgroupTree {
  /** The cgroup mount root (pass as `cgroupMountRoot`). */
  readonly mountRoot: string;
  /** Pass as `procRoot`. */
  readonly procRoot: string;
  /** Pass as `sysRoot`. */
  readonly sysRoot: string;
  /** The emulating filesystem (pass as `fs`). */
  readonly fs: CgroupFs;
  /** PIDs killed so far (SIGKILL or `cgroup.kill`), in order. */
  readonly killed: number[];
  /** Reads a file of the tree, relative to the mount root (`cpu/kubepods/cpu.shares`). */
  read(relative: string): string;
  /** Whether a path relative to the mount root exists. */
  exists(relative: string): boolean;
  /** Puts processes into a cgroup directory (relative to the mount root), creating it like mkdir -p. */
  addProcs(relative: string, pids: readonly number[]): void;
  /** Removes the temp dir. */
  remove(): void;
}

const V2_DEFAULT = ['cpuset', 'cpu', 'io', 'memory', 'hugetlb', 'pids'];
const V1_DEFAULT = ['cpuset', 'cpu', 'cpuacct', 'blkio', 'memory', 'hugetlb', 'pids'];

function errno(code: string, message: string): NodeJS.ErrnoException {
  const err = new Error(`${code}: ${message}`) as NodeJS.ErrnoException;
  err.code = code;
  return err;
}

/** Creates a fake tree; call `remove()` when done. */
export function createFakeCgroupTree(options: FakeCgroupTreeOptions): FakeCgroupTree {
  const base = mkdtempSync(join(os.tmpdir(), 'nodeagent-fake-cgroup-'));
  const mountRoot = join(base, 'sys/fs/cgroup');
  const procRoot = join(base, 'proc');
  const sysRoot = join(base, 'sys');
  const v2 = options.version === 2;
  const controllers = options.controllers ?? (v2 ? V2_DEFAULT : V1_DEFAULT);
  const cpus = options.cpus ?? '0-3';
  const killed: number[] = [];
  mkdirSync(mountRoot, { recursive: true });
  mkdirSync(join(procRoot, 'sys/kernel'), { recursive: true });
  const [pidMax, threadsMax] = options.pidMax ?? [4_194_304, 126_000];
  writeFileSync(join(procRoot, 'sys/kernel/pid_max'), `${pidMax}\n`);
  writeFileSync(join(procRoot, 'sys/kernel/threads-max'), `${threadsMax}\n`);
  mkdirSync(join(sysRoot, 'kernel/mm/hugepages'), { recursive: true });
  for (const kb of options.hugePagesKb ?? [])
    mkdirSync(join(sysRoot, `kernel/mm/hugepages/hugepages-${kb}kB`));

  const cpusetHierarchy = join(mountRoot, 'cpuset');
  const populate = (dir: string, parent: string | undefined): void => {
    writeFileSync(join(dir, 'cgroup.procs'), '');
    if (v2) {
      const enabled =
        parent === undefined
          ? controllers.join(' ')
          : readFileSync(join(parent, 'cgroup.subtree_control'), 'utf8').trim();
      writeFileSync(join(dir, 'cgroup.controllers'), `${enabled}\n`);
      writeFileSync(join(dir, 'cgroup.subtree_control'), '');
      writeFileSync(join(dir, 'cgroup.kill'), '');
    } else if (dir.startsWith(cpusetHierarchy)) {
      writeFileSync(join(dir, 'cpuset.cpus'), parent === undefined ? `${cpus}\n` : '\n');
      writeFileSync(join(dir, 'cpuset.mems'), parent === undefined ? '0\n' : '\n');
    }
  };
  if (v2) {
    populate(mountRoot, undefined);
    writeFileSync(join(mountRoot, 'cpuset.cpus.effective'), `${cpus}\n`);
  } else {
    for (const c of [...controllers, 'systemd', ...(options.hybrid ? ['unified'] : [])]) {
      mkdirSync(join(mountRoot, c));
      populate(join(mountRoot, c), undefined);
    }
  }

  const isDir = (p: string) => {
    try {
      return statSync(p).isDirectory();
    } catch {
      return false;
    }
  };
  const subdirs = (p: string) => readdirSync(p).filter((e) => isDir(join(p, e)));
  const procsOf = (p: string) =>
    existsSync(join(p, 'cgroup.procs'))
      ? readFileSync(join(p, 'cgroup.procs'), 'utf8')
          .split('\n')
          .filter((l) => l.trim() !== '')
          .map(Number)
      : [];
  const allCgroupDirs = (p: string): string[] => [p, ...subdirs(p).flatMap((d) => allCgroupDirs(join(p, d)))];
  const exitProcs = (under: string, which?: ReadonlySet<number>): void => {
    for (const dir of allCgroupDirs(under)) {
      const procs = procsOf(dir);
      const leaving = procs.filter((pid) => which === undefined || which.has(pid));
      if (leaving.length === 0) continue;
      for (const pid of leaving) if (!killed.includes(pid)) killed.push(pid);
      writeFileSync(
        join(dir, 'cgroup.procs'),
        procs
          .filter((pid) => !leaving.includes(pid))
          .map((p) => `${p}\n`)
          .join(''),
      );
    }
  };

  const fs: CgroupFs = {
    exists: (p) => existsSync(p),
    isDirectory: isDir,
    mkdir: (p) => {
      if (isDir(p)) return;
      if (!isDir(dirname(p))) throw errno('ENOENT', `no such directory ${dirname(p)}`);
      mkdirSync(p);
      populate(p, dirname(p));
    },
    rmdir: (p) => {
      if (!isDir(p)) throw errno('ENOENT', p);
      if (subdirs(p).length > 0 || procsOf(p).length > 0) throw errno('EBUSY', `cgroup ${p} is busy`);
      for (const f of readdirSync(p)) unlinkSync(join(p, f));
      rmdirSync(p);
    },
    readdir: (p) => readdirSync(p),
    subdirectories: (p) =>
      readdirSync(p, { withFileTypes: true })
        .filter((e) => e.isDirectory())
        .map((e) => e.name),
    readFile: (p) => readFileSync(p, 'utf8'),
    writeFile: (p, value) => {
      if (!isDir(dirname(p))) throw errno('ENOENT', p);
      const name = p.slice(dirname(p).length + 1);
      if (v2 && name === 'cgroup.kill') {
        if (value.trim() === '1') exitProcs(dirname(p));
        return;
      }
      if (v2 && name === 'cgroup.subtree_control') {
        const have = new Set(readFileSync(p, 'utf8').split(/\s+/).filter(Boolean));
        const available = new Set(
          readFileSync(join(dirname(p), 'cgroup.controllers'), 'utf8')
            .split(/\s+/)
            .filter(Boolean),
        );
        for (const tok of value.split(/\s+/).filter(Boolean)) {
          const c = tok.slice(1);
          if (!available.has(c)) throw errno('EINVAL', `controller ${c} not available in ${dirname(p)}`);
          if (tok.startsWith('+')) have.add(c);
          else have.delete(c);
        }
        writeFileSync(p, [...have].join(' '));
        return;
      }
      writeFileSync(p, value);
    },
    kill: (pid) => {
      exitProcs(mountRoot, new Set([pid]));
      return true;
    },
  };

  return {
    mountRoot,
    procRoot,
    sysRoot,
    fs,
    killed,
    read: (rel) => readFileSync(join(mountRoot, rel), 'utf8').trim(),
    exists: (rel) => existsSync(join(mountRoot, rel)),
    addProcs: (rel, pids) => {
      const parts = rel.split('/').filter(Boolean);
      let dir = mountRoot;
      for (const part of parts) {
        dir = join(dir, part);
        fs.mkdir(dir);
      }
      writeFileSync(join(dir, 'cgroup.procs'), [...procsOf(dir), ...pids].map((p) => `${p}\n`).join(''));
    },
    remove: () => rmSync(base, { recursive: true, force: true }),
  };
}

/** A test-private cgroup on the real machine (see {@link createTestCgroupRoot}). */
export interface TestCgroupRoot {
  /** The cgroup in cgroupfs form, e.g. `/nodeagent-test-1a2b3c4d`: pass it as `cgroupRoot`. */
  readonly cgroupRoot: string;
  /** Its directory in each hierarchy it was created in. */
  readonly paths: readonly string[];
  /** Kills what still runs below it and removes it with everything below (idempotent). */
  remove(): Promise<void>;
}

/**
 * Creates `/<prefix>-<random>` in every hierarchy of the real cgroup mount (root needed), for
 * tests that run real pods under a private `cgroupRoot` and must leave every existing cgroup alone.
 */
export async function createTestCgroupRoot(
  prefix = 'nodeagent-test',
  mountRoot = '/sys/fs/cgroup',
): Promise<TestCgroupRoot> {
  const name = `${prefix}-${randomBytes(4).toString('hex')}`;
  const layout = detectCgroupLayout(mountRoot);
  const cgroups = new CgroupManager({ driver: 'cgroupfs', layout, fs: nodeCgroupFs, hugePageSizesBytes: [] });
  cgroups.create([name]);
  let removed = false;
  return {
    cgroupRoot: `/${name}`,
    paths: cgroups.paths([name]),
    remove: async () => {
      if (removed) return;
      for (const pid of cgroups.pids([name])) cgroups.killPid(pid);
      for (let i = 0; i < 50 && cgroups.pids([name]).length > 0; i++)
        await new Promise((r) => setTimeout(r, 20));
      await cgroups.destroy([name]);
      removed = true;
    },
  };
}
