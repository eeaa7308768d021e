/**
 * A cgroup hierarchy on disk: which version it is, the children of a cgroup, the processes in
 * it, and the discovery of pod and container cgroups below the pods root (cgroupfs names
 * `kubepods/burstable/pod<uid>/<container-id>` and systemd names
 * `kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod<uid_>.slice/cri-containerd-<id>.scope`).
 *
 * @module
 */
import { readdirSync, readFileSync } from 'node:fs';
import { stat } from 'node:fs/promises';
import { join } from 'node:path';
import { type CgroupReadResult, type CgroupVersion, readCgroupV1, readCgroupV2 } from './cgroup-reader.js';

/** Decides the hierarchy version of `root`; undefined when it holds no cgroup hierarchy. */
export async function detectCgroupVersion(root: string): Promise<CgroupVersion | undefined> {
  if (await exists(join(root, 'cgroup.controllers'))) return 'v2';
  if ((await exists(join(root, 'memory'))) || (await exists(join(root, 'cpuacct')))) return 'v1';
  return undefined;
}

async function exists(path: string): Promise<boolean> {
  try {
    await stat(path);
    return true;
  } catch {
    return false;
  }
}

/** Cgroups found for one pod. */
export interface PodCgroups {
  /** The pod cgroup, relative to the hierarchy root, with a leading `/`. */
  readonly path: string;
  /** Container (and sandbox) id → its cgroup path. */
  readonly containers: ReadonlyMap<string, string>;
}

/** What discovery finds below the pods roots. */
export interface CgroupLayout {
  /** The first pods root that exists (`/kubepods`), if any. */
  readonly podsRoot?: string;
  /** Intermediate cgroups between the pods root and the pods (QoS classes). */
  readonly intermediate: readonly string[];
  /** Pod UID → its cgroups. */
  readonly pods: ReadonlyMap<string, PodCgroups>;
}

const POD_DIR =
  /pod([0-9a-fA-F]{8}[-_][0-9a-fA-F]{4}[-_][0-9a-fA-F]{4}[-_][0-9a-fA-F]{4}[-_][0-9a-fA-F]{12})/;
const CONTAINER_ID = /([0-9a-f]{64})/;

/** One cgroup hierarchy (v1: its controllers below one root; v2: the unified tree). */
export class CgroupTree {
  /**
   * @param root where the hierarchy is mounted (`/sys/fs/cgroup`).
   * @param version as {@link detectCgroupVersion} found.
   */
  constructor(
    readonly root: string,
    readonly version: CgroupVersion,
  ) {}

  /** Where the directory structure is read (v1: the memory controller). */
  private dirOf(cgroup: string): string {
    return this.version === 'v2' ? join(this.root, cgroup) : join(this.root, 'memory', cgroup);
  }

  /** Reads one cgroup's counters. */
  read(
    cgroup: string,
    timeMs: number,
    rootMeminfo?: () => Promise<Map<string, number> | undefined>,
  ): Promise<CgroupReadResult> {
    return this.version === 'v2'
      ? readCgroupV2(this.root, cgroup, timeMs, rootMeminfo)
      : readCgroupV1(this.root, cgroup, timeMs);
  }

  /** Names of the child cgroups of `cgroup`; empty when it does not exist. */
  async children(cgroup: string): Promise<string[]> {
    try {
      const entries = readdirSync(this.dirOf(cgroup), { withFileTypes: true });
      return entries.filter((e) => e.isDirectory()).map((e) => e.name);
    } catch {
      return [];
    }
  }

  /** The first PID in `cgroup` or any descendant (v2 interior cgroups hold none); undefined when empty. */
  async firstPid(cgroup: string, depth = 2): Promise<number | undefined> {
    try {
      const text = readFileSync(join(this.dirOf(cgroup), 'cgroup.procs'), 'utf8');
      const first = text.split('\n', 1)[0];
      if (first) return Number(first);
    } catch {
      return undefined;
    }
    if (depth === 0) return undefined;
    for (const child of await this.children(cgroup)) {
      const pid = await this.firstPid(join(cgroup, child), depth - 1);
      if (pid !== undefined) return pid;
    }
    return undefined;
  }

  /**
   * Finds the pod and container cgroups below the first existing root of `podsRoots`. The reads
   * are synchronous; `pause` is awaited after each pod (housekeeping yields to the event loop
   * there).
   */
  async discover(
    podsRoots: readonly string[],
    pause: () => Promise<void> = async () => {},
  ): Promise<CgroupLayout> {
    const pods = new Map<string, PodCgroups>();
    const intermediate: string[] = [];
    for (const candidate of podsRoots) {
      const podsRoot = `/${candidate.replace(/^\/+|\/+$/g, '')}`;
      const top = await this.children(podsRoot);
      if (top.length === 0 && !(await exists(this.dirOf(podsRoot)))) continue;
      const visit = async (cgroup: string, names: string[], depth: number): Promise<void> => {
        for (const name of names) {
          const path = `${cgroup}/${name}`;
          const m = POD_DIR.exec(name);
          if (m?.[1] !== undefined) {
            const uid = m[1].replaceAll('_', '-');
            const containers = new Map<string, string>();
            for (const child of await this.children(path)) {
              const id = CONTAINER_ID.exec(child)?.[1];
              if (id !== undefined) containers.set(id, `${path}/${child}`);
            }
            pods.set(uid, { path, containers });
            await pause();
          } else if (depth > 0) {
            intermediate.push(path);
            await visit(path, await this.children(path), depth - 1);
          }
        }
      };
      await visit(podsRoot, top, 2);
      intermediate.sort();
      return { podsRoot, intermediate, pods };
    }
    return { intermediate, pods };
  }
}
