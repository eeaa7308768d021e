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
import { sandboxIps, toContainerRuntimeStatus } from './cri-convert.js';
import { KUBERNETES_POD_UID_LABEL } from './labels.js';
import type { ContainerRuntimeStatus, PodStatus, PodStatusSource } from './pod-status.js';
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
 * A {@link PodStatusSource} over CRI: `ListPodSandbox` filtered by the pod UID label, then
 * `PodSandboxStatus` of each (newest first), `ListContainers` by the same label and
 * `ContainerStatus` of each. Sandboxes or containers removed between the list and the status
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
  return {
    async getPodStatus(uid, name, namespace, signal) {
      const call = callOptions(options.timeoutMs, signal);
      const timestamp = clock.now();
      const selector = { labelSelector: { [KUBERNETES_POD_UID_LABEL]: uid } };
      const [sandboxList, containerList] = await Promise.all([
        cri.runtime.listPodSandbox({ filter: selector }, call),
        cri.runtime.listContainers({ filter: selector }, call),
      ]);
      const sandboxes = [...sandboxList.items].sort(byCreatedDesc);
      const sandboxStatuses: PodSandboxStatus[] = [];
      let ips: string[] = [];
      for (const [index, sandbox] of sandboxes.entries()) {
        const status = await skipNotFound(cri.runtime.podSandboxStatus({ podSandboxId: sandbox.id }, call));
        if (status?.status === undefined) continue;
        sandboxStatuses.push(status.status);
        if (index === 0 && status.status.state === PodSandboxState.SANDBOX_READY)
          ips = sandboxIps(status.status);
      }
      const statuses = await Promise.all(
        containerList.containers.map(async (c): Promise<ContainerRuntimeStatus | undefined> => {
          const response = await skipNotFound(cri.runtime.containerStatus({ containerId: c.id }, call));
          const raw = response?.status;
          if (raw === undefined) return undefined;
          const converted = toContainerRuntimeStatus(raw);
          if (converted.state !== 'exited' || readTerminationMessage === undefined) return converted;
          const tmsg = await readTerminationMessage(raw, signal);
          if (tmsg === undefined || tmsg === '') return converted;
          const message = converted.message === '' ? tmsg : `${converted.message}: ${tmsg}`;
          return { ...converted, message };
        }),
      );
      const containerStatuses = sortContainerStatusesByCreationTime(
        statuses.filter((s): s is ContainerRuntimeStatus => s !== undefined),
      );
      return { id: uid, name, namespace, ips, containerStatuses, sandboxStatuses, timestamp };
    },
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
