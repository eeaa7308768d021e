/**
 * {@link PodStatusSource} over CRI (upstream `kubeGenericRuntimeManager.GetPodStatus`).
 *
 * @module
 */

import { type Clock, definedFields, realClock } from '@nodeagent/core';
import {
  type CallOptions,
  type Container,
  type ContainerStatus,
  isNotFound,
  type PodSandbox,
  PodSandboxState,
  type PodSandboxStatus,
  type RuntimeServiceApi,
} from '@nodeagent/cri';
import { runtimePodsFromLists, sandboxIps, toContainerRuntimeStatus } from './cri-convert.js';
import { KUBERNETES_POD_UID_LABEL } from './labels.js';
import type {
  ContainerRuntimeStatus,
  KnownRuntimeIds,
  PodStatus,
  PodStatusSource,
  RuntimePod,
} from './pod-status.js';
import { byCreatedDesc, sortContainerStatusesByCreationTime } from './status-order.js';

/** The CRI calls a {@link criPodStatusSource} makes (a `CriClient` fits). */
export interface CriPodStatusRuntime {
  /** The runtime service (only `listPodSandbox`, `podSandboxStatus`, `listContainers`, `containerStatus` are used). */
  readonly runtime: Pick<
    RuntimeServiceApi,
    'listPodSandbox' | 'podSandboxStatus' | 'listContainers' | 'containerStatus'
  >;
}

/**
 * Reads the termination message of an exited container (upstream reads the file mounted at
 * `terminationMessagePath`, or the log tail under `FallbackToLogsOnError`). Returns `''` or
 * `undefined` when there is none.
 */
export type TerminationMessageReader = (
  status: ContainerStatus,
  signal?: AbortSignal,
) => Promise<string | undefined>;

/** Options of {@link criPodStatusSource}. */
export interface CriPodStatusSourceOptions {
  /** Stamps {@link PodStatus.timestamp}. @default realClock */
  readonly clock?: Clock;
  /** Deadline of each CRI call, ms. @default the client's deadline */
  readonly timeoutMs?: number;
  /**
   * Appends an exited container's termination message to its `message` (`"<message>: <tmsg>"`
   * as upstream). @default none (messages are the runtime's only)
   */
  readonly terminationMessage?: TerminationMessageReader;
}

/**
 * A {@link PodStatusSource} over CRI: `ListPodSandbox` and `ListContainers` filtered by the pod
 * UID label, then `PodSandboxStatus` of each sandbox (newest first) and `ContainerStatus` of
 * each container, all at once. Its `listPodAndGetStatus` also returns the pod grouped from the
 * same two lists (as {@link criRuntimeLister}'s `listPod`). Sandboxes or containers removed between the list and the status
 * call (NOT_FOUND) are skipped, as upstream; any other error rejects. The IPs come from the
 * newest sandbox while it is READY.
 *
 * @example
 * ```ts
 * const source = criPodStatusSource(createCriClient('unix:///run/containerd/containerd.sock'));
 * const status = await source.getPodStatus(uid, 'web', 'default');
 * ```
 */
export function criPodStatusSource(
  cri: CriPodStatusRuntime,
  options: CriPodStatusSourceOptions = {},
): PodStatusSource {
  const clock = options.clock ?? realClock;
  const readTerminationMessage = options.terminationMessage;
  // NOT_FOUND (removed since it was named) reads as undefined.
  const sandboxStatus = (id: string, call: CallOptions) =>
    skipNotFound(cri.runtime.podSandboxStatus({ podSandboxId: id }, call));
  const rawContainerStatus = async (id: string, call: CallOptions) =>
    (await skipNotFound(cri.runtime.containerStatus({ containerId: id }, call)))?.status;
  /** The kubelet's model of `raw`, an exited container's termination message appended. */
  const withTerminationMessage = async (
    raw: ContainerStatus,
    signal: AbortSignal | undefined,
  ): Promise<ContainerRuntimeStatus> => {
    const converted = toContainerRuntimeStatus(raw);
    if (converted.state !== 'exited' || readTerminationMessage === undefined) return converted;
    const tmsg = await readTerminationMessage(raw, signal);
    if (tmsg === undefined || tmsg === '') return converted;
    const message = converted.message === '' ? tmsg : `${converted.message}: ${tmsg}`;
    return { ...converted, message };
  };
  const read = async (
    uid: string,
    name: string,
    namespace: string,
    signal: AbortSignal | undefined,
    withPod: boolean,
    known: KnownRuntimeIds | undefined,
  ): Promise<{ pod: RuntimePod | undefined; status: PodStatus; listedAt: number }> => {
    const call = callOptions(options.timeoutMs, signal);
    const timestamp = clock.now();
    const selector = { labelSelector: { [KUBERNETES_POD_UID_LABEL]: uid } };
    // Status reads of the IDs the caller already knows go out with the lists (settled either
    // way: an ID the lists no longer show is dropped unread).
    const early = {
      sandboxes: new Map((known?.sandboxIds ?? []).map((id) => [id, settle(sandboxStatus(id, call))])),
      containers: new Map(
        (known?.containerIds ?? []).map((id) => [id, settle(rawContainerStatus(id, call))]),
      ),
    };
    const [sandboxList, containerList] = await Promise.all([
      cri.runtime.listPodSandbox({ filter: selector }, call),
      cri.runtime.listContainers({ filter: selector }, call),
    ]);
    const listedAt = clock.now();
    const sandboxes = [...sandboxList.items].sort(byCreatedDesc);
    // An early read is kept only when it shows the state the list shows: states only move
    // forward, so a difference means the read predates the list, and it is made again. Every
    // status is thus at least as new as the lists, as when it is read after them.
    const sandboxRead = async (s: PodSandbox) => {
      const read = await early.sandboxes.get(s.id);
      if (read?.ok === true && read.value?.status?.state === s.state) return read.value;
      return sandboxStatus(s.id, call);
    };
    const containerRead = async (c: Container) => {
      const read = await early.containers.get(c.id);
      if (read?.ok === true && read.value?.state === c.state) return read.value;
      return rawContainerStatus(c.id, call);
    };
    const containerStatus = async (c: Container): Promise<ContainerRuntimeStatus | undefined> => {
      const raw = await containerRead(c);
      return raw === undefined ? undefined : withTerminationMessage(raw, signal);
    };
    // Every status call at once (upstream makes them one after the other; same result).
    const [sandboxResponses, statuses] = await Promise.all([
      Promise.all(sandboxes.map(sandboxRead)),
      Promise.all(containerList.containers.map(containerStatus)),
    ]);
    const sandboxStatuses: PodSandboxStatus[] = [];
    let ips: string[] = [];
    for (const [index, response] of sandboxResponses.entries()) {
      if (response?.status === undefined) continue;
      sandboxStatuses.push(response.status);
      if (index === 0 && response.status.state === PodSandboxState.SANDBOX_READY)
        ips = sandboxIps(response.status);
    }
    const containerStatuses = sortContainerStatusesByCreationTime(
      statuses.filter((s): s is ContainerRuntimeStatus => s !== undefined),
    );
    return {
      pod: withPod
        ? runtimePodsFromLists(sandboxList.items, containerList.containers).find((p) => p.id === uid)
        : undefined,
      status: { id: uid, name, namespace, ips, containerStatuses, sandboxStatuses, timestamp },
      listedAt,
    };
  };
  const readByIds = async (
    uid: string,
    name: string,
    namespace: string,
    ids: KnownRuntimeIds,
    signal: AbortSignal | undefined,
  ): Promise<{ pod: RuntimePod | undefined; status: PodStatus; readAt: number }> => {
    const call = callOptions(options.timeoutMs, signal);
    const timestamp = clock.now();
    const [sandboxResponses, containerResponses] = await Promise.all([
      Promise.all([...new Set(ids.sandboxIds ?? [])].map((id) => sandboxStatus(id, call))),
      Promise.all([...new Set(ids.containerIds ?? [])].map((id) => rawContainerStatus(id, call))),
    ]);
    const sandboxStatuses = sandboxResponses
      .map((r) => r?.status)
      .filter((s): s is PodSandboxStatus => s !== undefined)
      .sort(byCreatedDesc);
    const raw = containerResponses.filter((s): s is ContainerStatus => s !== undefined);
    const converted = await Promise.all(raw.map((c) => withTerminationMessage(c, signal)));
    const readAt = clock.now();
    // Grouped as a listing groups them: the statuses carry the list items' fields.
    const pod = runtimePodsFromLists(sandboxStatuses, raw).find((p) => p.id === uid);
    const newest = sandboxStatuses[0];
    return {
      pod,
      status: {
        id: uid,
        name: pod?.name ?? name,
        namespace: pod?.namespace ?? namespace,
        ips: newest?.state === PodSandboxState.SANDBOX_READY ? sandboxIps(newest) : [],
        containerStatuses: sortContainerStatusesByCreationTime(converted),
        sandboxStatuses,
        timestamp,
      },
      readAt,
    };
  };
  return {
    getPodAndStatusByIds: readByIds,
    async getPodStatus(uid, name, namespace, signal) {
      return (await read(uid, name, namespace, signal, false, undefined)).status;
    },
    listPodAndGetStatus: (uid, name, namespace, signal, known) =>
      read(uid, name, namespace, signal, true, known),
  };
}

/** A call's outcome without rejecting (a rejection nobody awaits would be unhandled). */
function settle<T>(call: Promise<T>): Promise<{ ok: true; value: T } | { ok: false }> {
  return call.then(
    (value) => ({ ok: true as const, value }),
    () => ({ ok: false as const }),
  );
}

async function skipNotFound<T>(call: Promise<T>): Promise<T | undefined> {
  try {
    return await call;
  } catch (err) {
    if (isNotFound(err)) return undefined;
    throw err;
  }
}

/** CRI call options without `undefined` members (exactOptionalPropertyTypes). */
export function callOptions(timeoutMs: number | undefined, signal: AbortSignal | undefined): CallOptions {
  return definedFields({ timeoutMs, signal });
}
