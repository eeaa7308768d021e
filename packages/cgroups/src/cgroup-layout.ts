/**
 * Which cgroup version the machine runs and where each controller lives (upstream
 * `GetCgroupSubsystems`): cgroup v2 when `<mountRoot>/cgroup.controllers` exists (the unified
 * hierarchy, every controller at the mount root), else one v1 hierarchy per directory under the
 * mount root (`cpu`, `memory`, `cpu,cpuacct`, the named `systemd` one, ...).
 *
 * @module
 */
import { join } from 'node:path';
import { type CgroupFs, nodeCgroupFs } from './cgroup-fs.js';
import { CgroupError } from './errors.js';

/** Where the cgroup controllers of a machine are. */
export interface CgroupLayout {
  /** 2 for the unified hierarchy, 1 for the legacy (or hybrid) layout. */
  readonly version: 1 | 2;
  /** The cgroup mount root, e.g. `/sys/fs/cgroup`. */
  readonly mountRoot: string;
  /** Controller → the directory its hierarchy is mounted on (v2: the mount root for each). */
  readonly controllers: ReadonlyMap<string, string>;
  /** The hierarchies cgroups are created in (v1: every mounted one but `unified`; v2: the mount root). */
  readonly hierarchies: readonly string[];
  /** Hierarchies only scanned and cleaned (the hybrid layout's `unified`), never created in. */
  readonly cleanupOnly: readonly string[];
}

/** Reads the layout under `mountRoot`. @throws CgroupError `mounts-unreadable` */
export function detectCgroupLayout(mountRoot = '/sys/fs/cgroup', fs: CgroupFs = nodeCgroupFs): CgroupLayout {
  const controllersFile = join(mountRoot, 'cgroup.controllers');
  if (fs.exists(controllersFile)) {
    const controllers = new Map<string, string>();
    for (const c of fs.readFile(controllersFile).split(/\s+/).filter(Boolean)) controllers.set(c, mountRoot);
    return { version: 2, mountRoot, controllers, hierarchies: [mountRoot], cleanupOnly: [] };
  }
  let entries: string[];
  try {
    entries = fs.readdir(mountRoot).sort();
  } catch (err) {
    throw new CgroupError(
      'mounts-unreadable',
      mountRoot,
      `cannot read cgroup mounts under ${mountRoot}: ${(err as Error).message}`,
      {
        cause: err,
      },
    );
  }
  const dirs = entries.filter((e) => fs.isDirectory(join(mountRoot, e)));
  // `cpu` and `cpuacct` are often symlinks to a co-mounted `cpu,cpuacct`: keep the real one.
  const coMounted = new Set(dirs.filter((d) => d.includes(',')).flatMap((d) => d.split(',')));
  const controllers = new Map<string, string>();
  const hierarchies: string[] = [];
  const cleanupOnly: string[] = [];
  for (const d of dirs) {
    if (!d.includes(',') && coMounted.has(d)) continue;
    const path = join(mountRoot, d);
    if (d === 'unified') {
      cleanupOnly.push(path);
      continue;
    }
    hierarchies.push(path);
    for (const c of d.split(',')) controllers.set(c, path);
  }
  if (hierarchies.length === 0) {
    throw new CgroupError('mounts-unreadable', mountRoot, `no cgroup hierarchies found under ${mountRoot}`);
  }
  return { version: 1, mountRoot, controllers, hierarchies, cleanupOnly };
}
