/**
 * One read of the runtime's view through CRI: sandboxes, containers, `ListContainerStats`,
 * `ListPodSandboxStats` (only when asked for) and `ImageFsInfo`, with terminated pods and
 * containers removed the way the kubelet's CRI stats provider does (`removeTerminatedPods`,
 * `removeTerminatedContainers`): of several sandboxes of one pod keep the ready ones (or the
 * newest), of several containers of one name keep the running ones (or the newest).
 *
 * @module
 */
import type { CriClient } from '@nodeagent/cri';
import {
  type Container,
  ContainerState,
  type ContainerStats as CriContainerStats,
  type FilesystemUsage,
  type PodSandbox,
  PodSandboxState,
  type PodSandboxStats,
} from '@nodeagent/cri';
import type { StatsErrorRecorder } from './errors.js';

/** The runtime's view at one instant. */
export interface CriSnapshot {
  /** Sandboxes kept (one pod may keep several ready ones). */
  readonly sandboxes: readonly PodSandbox[];
  /** Containers kept, by sandbox id. */
  readonly containersBySandbox: ReadonlyMap<string, readonly Container[]>;
  /** `ListContainerStats` by container id. */
  readonly containerStats: ReadonlyMap<string, CriContainerStats>;
  /**
   * `ListPodSandboxStats` by sandbox id (empty when not asked for or when the runtime does not
   * implement it).
   */
  readonly sandboxStats: ReadonlyMap<string, PodSandboxStats>;
  /** `ImageFsInfo` image filesystems. */
  readonly imageFilesystems: readonly FilesystemUsage[];
  /** `ImageFsInfo` container filesystems (empty when shared with the image filesystem). */
  readonly containerFilesystems: readonly FilesystemUsage[];
  /** The first failure of `ListPodSandbox` or `ListContainers` (the pods are then missing). */
  readonly listError?: { readonly rpc: string; readonly error: unknown };
  /** False when the sandbox or container list failed. */
  readonly complete: boolean;
}

/** Keeps ready sandboxes per pod UID, or the newest when none is ready. */
export function removeTerminatedPods(sandboxes: readonly PodSandbox[]): PodSandbox[] {
  const byPod = new Map<string, PodSandbox[]>();
  for (const s of [...sandboxes].sort((a, b) =>
    a.createdAt < b.createdAt ? -1 : a.createdAt > b.createdAt ? 1 : 0,
  )) {
    const m = s.metadata;
    const key = m === undefined ? s.id : `${m.namespace}/${m.name}/${m.uid}`;
    const list = byPod.get(key) ?? [];
    list.push(s);
    byPod.set(key, list);
  }
  const out: PodSandbox[] = [];
  for (const list of byPod.values()) {
    const ready = list.filter((s) => s.state === PodSandboxState.SANDBOX_READY);
    if (ready.length > 0) out.push(...ready);
    else out.push(list[list.length - 1] as PodSandbox);
  }
  return out;
}

/** Keeps running containers per (sandbox, name), or the newest when none runs. */
export function removeTerminatedContainers(containers: readonly Container[]): Container[] {
  const byName = new Map<string, Container[]>();
  for (const c of [...containers].sort((a, b) =>
    a.createdAt < b.createdAt ? -1 : a.createdAt > b.createdAt ? 1 : 0,
  )) {
    const key = `${c.podSandboxId}/${c.metadata?.name ?? c.id}`;
    const list = byName.get(key) ?? [];
    list.push(c);
    byName.set(key, list);
  }
  const out: Container[] = [];
  for (const list of byName.values()) {
    const running = list.filter((c) => c.state === ContainerState.CONTAINER_RUNNING);
    if (running.length > 0) out.push(...running);
    else out.push(list[list.length - 1] as Container);
  }
  return out;
}

/** What {@link readCriSnapshot} reads besides `ImageFsInfo`. */
export interface CriSnapshotScope {
  /** `ListPodSandbox`, `ListContainers` and `ListContainerStats`; false leaves the pods out. */
  readonly pods: boolean;
  /**
   * `ListPodSandboxStats` too (with `pods`). The provider asks for it when it has no cgroups of
   * its own to read (the kubelet calls it only under the alpha `PodAndContainerStatsFromCRI`
   * gate; containerd 1.6 takes seconds to answer it at 110 pods).
   */
  readonly sandboxStats: boolean;
}

/** Reads what the Summary needs from the runtime; failures are counted, never thrown. */
export async function readCriSnapshot(
  cri: Pick<CriClient, 'runtime' | 'image'>,
  errors: StatsErrorRecorder,
  timeoutMs: number,
  scope: CriSnapshotScope,
): Promise<CriSnapshot> {
  const options = { timeoutMs };
  let listError: { rpc: string; error: unknown } | undefined;
  const failed =
    <T>(rpc: string, fallback: T) =>
    (err: unknown): T => {
      errors.record('cri', rpc, err instanceof Error ? err.message : String(err));
      if (rpc === 'ListPodSandbox' || rpc === 'ListContainers') listError ??= { rpc, error: err };
      return fallback;
    };
  const { pods } = scope;
  const [sandboxList, containerList, containerStats, sandboxStats, imageFs] = await Promise.all([
    pods
      ? cri.runtime.listPodSandbox({}, options).then((r) => r.items, failed('ListPodSandbox', undefined))
      : [],
    pods
      ? cri.runtime.listContainers({}, options).then((r) => r.containers, failed('ListContainers', undefined))
      : [],
    pods
      ? cri.runtime.listContainerStats({}, options).then((r) => r.stats, failed('ListContainerStats', []))
      : [],
    pods && scope.sandboxStats
      ? cri.runtime.listPodSandboxStats({}, options).then((r) => r.stats, failed('ListPodSandboxStats', []))
      : [],
    cri.image.imageFsInfo({}, options).then((r) => r, failed('ImageFsInfo', undefined)),
  ]);
  const sandboxes = removeTerminatedPods(sandboxList ?? []);
  const containersBySandbox = new Map<string, Container[]>();
  for (const c of removeTerminatedContainers(containerList ?? [])) {
    const list = containersBySandbox.get(c.podSandboxId) ?? [];
    list.push(c);
    containersBySandbox.set(c.podSandboxId, list);
  }
  const statsById = new Map<string, CriContainerStats>();
  for (const s of containerStats) if (s.attributes !== undefined) statsById.set(s.attributes.id, s);
  const sandboxStatsById = new Map<string, PodSandboxStats>();
  for (const s of sandboxStats) if (s.attributes !== undefined) sandboxStatsById.set(s.attributes.id, s);
  return {
    sandboxes,
    containersBySandbox,
    containerStats: statsById,
    sandboxStats: sandboxStatsById,
    imageFilesystems: imageFs?.imageFilesystems ?? [],
    containerFilesystems: imageFs?.containerFilesystems ?? [],
    complete: listError === undefined,
    ...(listError === undefined ? {} : { listError }),
  };
}
