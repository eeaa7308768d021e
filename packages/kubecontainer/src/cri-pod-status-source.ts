/**
 * {@link PodStatusSource} over CRI (upstream `kubeGenericRuntimeManager.GetPodStatus`).
 *
 * @module
 */

import { type Clock, definedFields, realClock } from '@nodeagent/core';
import {
  type CallOptions,
  type ContainerStatus,
  isNotFound,
  PodSandboxState,
  type PodSandboxStatus,
  type RuntimeServiceApi,
} from '@nodeagent/cri';
import { runtimePodsFromLists, sandboxIps, toContainerRuntimeStatus } from './cri-convert.js';
import { KUBERNETES_POD_UID_LABEL } from './labels.js';
import type { ContainerRuntimeStatus, PodStatus, PodStatusSource, RuntimePod } from './pod-status.js';
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
  const read = async (
    uid: string,
    name: string,
    namespace: string,
    signal: AbortSignal | undefined,
    withPod: boolean,
  ): Promise<{ pod: RuntimePod | undefined; status: PodStatus; listedAt: number }> => {
    const call = callOptions(options.timeoutMs, signal);
    const timestamp = clock.now();
    const selector = { labelSelector: { [KUBERNETES_POD_UID_LABEL]: uid } };
    const [sandboxList, containerList] = await Promise.all([
      cri.runtime.listPodSandbox({ filter: selector }, call),
      cri.runtime.listContainers({ filter: selector }, call),
    ]);
    const listedAt = clock.now();
    const sandboxes = [...sandboxList.items].sort(byCreatedDesc);
    const containerStatus = async (id: string): Promise<ContainerRuntimeStatus | undefined> => {
      const raw = (await skipNotFound(cri.runtime.containerStatus({ containerId: id }, call)))?.status;
      if (raw === undefined) return undefined;
      const converted = toContainerRuntimeStatus(raw);
      if (converted.state !== 'exited' || readTerminationMessage === undefined) return converted;
      const tmsg = await readTerminationMessage(raw, signal);
      if (tmsg === undefined || tmsg === '') return converted;
      const message = converted.message === '' ? tmsg : `${converted.message}: ${tmsg}`;
      return { ...converted, message };
    };
    // Every status call at once (upstream makes them one after the other; same result).
    const [sandboxResponses, statuses] = await Promise.all([
      Promise.all(
        sandboxes.map((s) => skipNotFound(cri.runtime.podSandboxStatus({ podSandboxId: s.id }, call))),
      ),
      Promise.all(containerList.containers.map((c) => containerStatus(c.id))),
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
  return {
    async getPodStatus(uid, name, namespace, signal) {
      return (await read(uid, name, namespace, signal, false)).status;
    },
    listPodAndGetStatus: (uid, name, namespace, signal) => read(uid, name, namespace, signal, true),
  };
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
