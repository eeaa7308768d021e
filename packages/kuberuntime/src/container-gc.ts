/**
 * Container garbage collection as the kubelet's (`kuberuntime_gc.go`): exited containers
 * beyond the newest `maxPerPodContainer` per (pod, container name) are removed oldest first
 * (with their log files), all of a deleted pod's; dead sandboxes (not ready, no containers)
 * of deleted pods and all but the newest of live pods are removed; log directories of
 * deleted pods are removed. `deleteAllUnusedContainers` is the eviction manager's
 * node-level reclaim: the same pass, also removing the runtime parts of terminated pods.
 *
 * @module
 */
import { readdir, rm } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import {
  type Clock,
  InvalidOptionsError,
  type Logger,
  noopLogger,
  realClock,
  StartOnce,
  type Timer,
} from '@nodeagent/core';
import { ContainerState, type CriClient, isNotFound, PodSandboxState } from '@nodeagent/cri';
import { KUBERNETES_CONTAINER_NAME_LABEL, KUBERNETES_POD_UID_LABEL } from '@nodeagent/kubecontainer';
import { errorMessage } from './errors.js';
import { DEFAULT_POD_LOGS_ROOT } from './paths.js';

/** Period of the kubelet's container GC: 1 minute (`ContainerGCPeriod`). */
export const CONTAINER_GC_PERIOD_MS = 60_000;

/** The container GC policy (`kubecontainer.GCPolicy`) with the kubelet's defaults. */
export interface ContainerGCPolicy {
  /** `--minimum-container-ttl-duration`: minimum age of a dead container before removal, ms. Minimum: 0. @default 0 */
  readonly minAgeMs?: number;
  /** `--maximum-dead-containers-per-container`: dead containers kept per (pod, container); negative = unlimited. @default 1 */
  readonly maxPerPodContainer?: number;
  /** `--maximum-dead-containers`: dead containers kept in total; negative = unlimited. @default -1 */
  readonly maxContainers?: number;
}

/** What the GC asks about pods (the pod workers: `PodWorkers` implements it). */
export interface PodStateProvider {
  /** The pod's runtime parts may be removed (terminated). */
  shouldPodRuntimeBeRemoved(uid: string): boolean;
  /** The pod's content (logs, volumes) may be removed (deleted or evicted, and terminated). */
  shouldPodContentBeRemoved(uid: string): boolean;
}

/** The runtime calls the container GC makes. */
export type ContainerGCRuntime = Pick<
  CriClient['runtime'],
  | 'listContainers'
  | 'listPodSandbox'
  | 'containerStatus'
  | 'stopContainer'
  | 'removeContainer'
  | 'stopPodSandbox'
  | 'removePodSandbox'
>;

/** Options of {@link ContainerGC}. */
export interface ContainerGCOptions extends ContainerGCPolicy {
  /** The CRI runtime service. */
  readonly runtime: ContainerGCRuntime;
  /** Which pods are gone. */
  readonly podState: PodStateProvider;
  /** Whether all pod sources were seen (only then are deleted pods' containers and logs removed). @default () => true */
  readonly allSourcesReady?: () => boolean;
  /** Root of pod log directories. @default "/var/log/pods" */
  readonly podLogsRoot?: string;
  /** Called when a periodic pass fails (the kubelet records a `ContainerGCFailed` node event). @default none */
  readonly onError?: (error: Error) => void;
  /** Period of `start()`'s loop, ms. Minimum: 1. @default 60000 */
  readonly periodMs?: number;
  /** @default realClock */
  readonly clock?: Clock;
  /** @default noopLogger */
  readonly logger?: Logger;
}

interface GCContainer {
  readonly id: string;
  readonly name: string;
  readonly createdNs: bigint;
  readonly unknown: boolean;
}

interface GCSandbox {
  readonly id: string;
  readonly createdNs: bigint;
  readonly active: boolean;
}

/** Newest first (upstream `byCreated`). */
function newestFirst<T extends { createdNs: bigint }>(items: T[]): T[] {
  return items.sort((a, b) => (a.createdNs > b.createdNs ? -1 : a.createdNs < b.createdNs ? 1 : 0));
}

/** The pod UID of a `<namespace>_<name>_<uid>` log directory (upstream `parsePodUIDFromLogsDirectory`). */
export function podUidFromLogsDirectory(name: string): string {
  const parts = name.split('_');
  return parts[parts.length - 1] ?? '';
}

/** The container garbage collector. */
export class ContainerGC {
  readonly #o: ContainerGCOptions;
  readonly #clock: Clock;
  readonly #log: Logger;
  readonly #minAgeMs: number;
  readonly #maxPerPodContainer: number;
  readonly #maxContainers: number;
  readonly #podLogsRoot: string;
  readonly #once = new StartOnce('ContainerGC');
  #timer: Timer | undefined;
  #running: Promise<void> | undefined;

  /** @throws InvalidOptionsError for an option out of range */
  constructor(options: ContainerGCOptions) {
    const minAge = options.minAgeMs ?? 0;
    if (!(minAge >= 0)) throw new InvalidOptionsError('ContainerGC', `minAgeMs must be >= 0, got ${minAge}`);
    const period = options.periodMs ?? CONTAINER_GC_PERIOD_MS;
    if (!(period >= 1)) throw new InvalidOptionsError('ContainerGC', `periodMs must be >= 1, got ${period}`);
    this.#o = options;
    this.#clock = options.clock ?? realClock;
    this.#log = (options.logger ?? noopLogger).child({ component: 'container-gc' });
    this.#minAgeMs = minAge;
    this.#maxPerPodContainer = options.maxPerPodContainer ?? 1;
    this.#maxContainers = options.maxContainers ?? -1;
    this.#podLogsRoot = options.podLogsRoot ?? DEFAULT_POD_LOGS_ROOT;
  }

  /** Runs a pass now and then every period; a failing pass goes to `onError` and the log. */
  start(signal?: AbortSignal): Promise<void> {
    return this.#once.run(
      signal,
      async () => {
        const tick = (): void => {
          if (this.#running !== undefined) return;
          this.#running = this.garbageCollect()
            .catch((err: unknown) => {
              const e = err instanceof Error ? err : new Error(String(err));
              this.#log.error({ err: e.message }, 'Container garbage collection failed');
              this.#o.onError?.(e);
            })
            .finally(() => {
              this.#running = undefined;
            });
        };
        tick();
        this.#timer = this.#clock.setInterval(tick, this.#o.periodMs ?? CONTAINER_GC_PERIOD_MS);
      },
      () => this.stop(),
    );
  }

  /** Stops the loop and waits for a pass in progress. */
  async stop(): Promise<void> {
    this.#timer?.cancel();
    this.#timer = undefined;
    await this.#running;
  }

  /** The eviction manager's node-level reclaim: a pass that also removes terminated pods' containers and sandboxes. */
  deleteAllUnusedContainers(): Promise<void> {
    return this.garbageCollect(true);
  }

  /**
   * One pass (upstream `GarbageCollect`): containers, then sandboxes, then log directories.
   * Errors of single removals are logged and the pass goes on.
   * @param evictNonDeletedPods also remove the runtime parts of terminated pods not yet deleted.
   */
  async garbageCollect(evictNonDeletedPods = false): Promise<void> {
    const allSourcesReady = this.#o.allSourcesReady?.() ?? true;
    const errors: string[] = [];
    for (const [what, step] of [
      ['containers', () => this.#evictContainers(allSourcesReady, evictNonDeletedPods)],
      ['sandboxes', () => this.#evictSandboxes(evictNonDeletedPods)],
      ['pod log directories', () => this.#evictPodLogsDirectories(allSourcesReady)],
    ] as const) {
      try {
        await step();
      } catch (err) {
        errors.push(`${what}: ${errorMessage(err)}`);
      }
    }
    if (errors.length > 0) throw new Error(`container garbage collection failed: ${errors.join('; ')}`);
  }

  #removable(uid: string, evictNonDeletedPods: boolean): boolean {
    const s = this.#o.podState;
    return s.shouldPodContentBeRemoved(uid) || (evictNonDeletedPods && s.shouldPodRuntimeBeRemoved(uid));
  }

  async #evictContainers(allSourcesReady: boolean, evictNonDeletedPods: boolean): Promise<void> {
    const { containers } = await this.#o.runtime.listContainers({});
    const newestGcNs = BigInt(this.#clock.now() - this.#minAgeMs) * 1_000_000n;
    const units = new Map<string, { uid: string; containers: GCContainer[] }>();
    for (const c of containers) {
      if (c.state === ContainerState.CONTAINER_RUNNING) continue;
      if (c.createdAt > newestGcNs) continue;
      const uid = c.labels[KUBERNETES_POD_UID_LABEL] ?? '';
      const name = c.metadata?.name ?? c.labels[KUBERNETES_CONTAINER_NAME_LABEL] ?? '';
      const key = `${uid}/${name}`;
      const unit = units.get(key) ?? { uid, containers: [] };
      unit.containers.push({
        id: c.id,
        name,
        createdNs: c.createdAt,
        unknown: c.state === ContainerState.CONTAINER_UNKNOWN,
      });
      units.set(key, unit);
    }
    if (allSourcesReady) {
      for (const [key, unit] of units) {
        if (this.#removable(unit.uid, evictNonDeletedPods)) {
          await this.#removeOldestN(unit.containers, unit.containers.length);
          units.delete(key);
        }
      }
    }
    if (this.#maxPerPodContainer >= 0) await this.#enforceMaxPerUnit(units, this.#maxPerPodContainer);
    const count = (): number => [...units.values()].reduce((n, u) => n + u.containers.length, 0);
    if (this.#maxContainers >= 0 && count() > this.#maxContainers) {
      const perUnit = Math.max(1, Math.floor(this.#maxContainers / units.size));
      await this.#enforceMaxPerUnit(units, perUnit);
      const n = count();
      if (n > this.#maxContainers) {
        const flat = newestFirst([...units.values()].flatMap((u) => u.containers));
        await this.#removeOldestN(flat, n - this.#maxContainers);
      }
    }
  }

  async #enforceMaxPerUnit(
    units: Map<string, { uid: string; containers: GCContainer[] }>,
    max: number,
  ): Promise<void> {
    for (const unit of units.values()) {
      const toRemove = unit.containers.length - max;
      if (toRemove > 0) unit.containers = await this.#removeOldestN(unit.containers, toRemove);
    }
  }

  /** Removes the `toRemove` oldest; returns those kept (assumed removed even on error, as upstream). */
  async #removeOldestN(containers: GCContainer[], toRemove: number): Promise<GCContainer[]> {
    const keep = containers.length - toRemove;
    const sorted = keep > 0 ? newestFirst(containers) : containers;
    for (let i = sorted.length - 1; i >= keep; i--) {
      const c = sorted[i] as GCContainer;
      if (c.unknown) {
        try {
          await this.#o.runtime.stopContainer({ containerId: c.id, timeout: 0n });
        } catch (err) {
          this.#log.error({ containerId: c.id, err: errorMessage(err) }, 'Failed to stop container');
          continue;
        }
      }
      await this.removeContainer(c.id);
    }
    return sorted.slice(0, Math.max(keep, 0));
  }

  /**
   * Removes a container and its log files (upstream `removeContainer` + the log manager's
   * `Clean`: every file `<logPath>*`, so rotated and compressed logs too).
   */
  async removeContainer(id: string): Promise<void> {
    try {
      const status = (await this.#o.runtime.containerStatus({ containerId: id })).status;
      const logPath = status?.logPath ?? '';
      if (logPath !== '') await removeLogFiles(logPath);
      await this.#o.runtime.removeContainer({ containerId: id });
      this.#log.debug({ containerId: id }, 'Removed container');
    } catch (err) {
      if (!isNotFound(err))
        this.#log.error({ containerId: id, err: errorMessage(err) }, 'Failed to remove container');
    }
  }

  async #evictSandboxes(evictNonDeletedPods: boolean): Promise<void> {
    const { containers } = await this.#o.runtime.listContainers({});
    const { items } = await this.#o.runtime.listPodSandbox({});
    const withContainers = new Set(containers.map((c) => c.podSandboxId));
    const byPod = new Map<string, GCSandbox[]>();
    for (const s of items) {
      const uid = s.metadata?.uid ?? '';
      const list = byPod.get(uid) ?? [];
      list.push({
        id: s.id,
        createdNs: s.createdAt,
        active: s.state === PodSandboxState.SANDBOX_READY || withContainers.has(s.id),
      });
      byPod.set(uid, list);
    }
    for (const [uid, sandboxes] of byPod) {
      const toRemove = this.#removable(uid, evictNonDeletedPods) ? sandboxes.length : sandboxes.length - 1;
      const keep = sandboxes.length - toRemove;
      const sorted = keep > 0 ? newestFirst(sandboxes) : sandboxes;
      for (let i = sorted.length - 1; i >= keep; i--) {
        const s = sorted[i] as GCSandbox;
        if (!s.active) await this.#removeSandbox(s.id);
      }
    }
  }

  async #removeSandbox(id: string): Promise<void> {
    try {
      await this.#o.runtime.stopPodSandbox({ podSandboxId: id });
    } catch (err) {
      this.#log.error({ sandboxId: id, err: errorMessage(err) }, 'Failed to stop sandbox before removing');
      return;
    }
    try {
      await this.#o.runtime.removePodSandbox({ podSandboxId: id });
      this.#log.debug({ sandboxId: id }, 'Removed sandbox');
    } catch (err) {
      this.#log.error({ sandboxId: id, err: errorMessage(err) }, 'Failed to remove sandbox');
    }
  }

  async #evictPodLogsDirectories(allSourcesReady: boolean): Promise<void> {
    if (!allSourcesReady) return;
    let names: string[];
    try {
      names = await readdir(this.#podLogsRoot);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return;
      throw err;
    }
    for (const name of names) {
      const uid = podUidFromLogsDirectory(name);
      if (!this.#o.podState.shouldPodContentBeRemoved(uid)) continue;
      await rm(join(this.#podLogsRoot, name), { recursive: true, force: true });
      this.#log.debug({ podUID: uid }, 'Removed pod logs');
    }
  }
}

/** Removes `<logPath>*` (the live log, rotated and compressed ones). */
async function removeLogFiles(logPath: string): Promise<void> {
  let names: string[];
  try {
    names = await readdir(dirname(logPath));
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return;
    throw err;
  }
  const prefix = basename(logPath);
  for (const n of names) {
    if (n.startsWith(prefix)) await rm(join(dirname(logPath), n), { force: true });
  }
}
