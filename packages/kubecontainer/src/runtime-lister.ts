/**
 * What a relist reads: every pod the runtime has, grouped by pod UID (upstream
 * `kubeGenericRuntimeManager.GetPods(all=true)`).
 *
 * @module
 */
import type { RuntimeServiceApi } from '@nodeagent/cri';
import { runtimePodsFromLists } from './cri-convert.js';
import { callOptions } from './cri-pod-status-source.js';
import { KUBERNETES_POD_UID_LABEL } from './labels.js';
import type { RuntimePod } from './pod-status.js';

/** Lists the runtime's pods for PLEG. */
export interface RuntimeLister {
  /** Every pod with at least one sandbox or container, in any state. */
  listPods(signal?: AbortSignal): Promise<RuntimePod[]>;
  /**
   * One pod, for an on-demand single-pod relist; `undefined` when the runtime has nothing of
   * it. Optional: without it a single-pod relist lists everything and picks the pod.
   */
  listPod?(uid: string, signal?: AbortSignal): Promise<RuntimePod | undefined>;
}

/** The CRI calls a {@link criRuntimeLister} makes (a `CriClient` fits). */
export interface CriListerRuntime {
  /** The runtime service (only `listPodSandbox` and `listContainers` are used). */
  readonly runtime: Pick<RuntimeServiceApi, 'listPodSandbox' | 'listContainers'>;
}

/** Options of {@link criRuntimeLister}. */
export interface CriRuntimeListerOptions {
  /** Deadline of each list call, ms. @default the client's deadline */
  readonly timeoutMs?: number;
}

/**
 * A {@link RuntimeLister} over CRI: `ListPodSandbox` and `ListContainers` (both unfiltered, in
 * parallel), grouped like upstream: sandboxes by their metadata UID, containers by the
 * `io.kubernetes.pod.uid` label; items without metadata are skipped. Pods come newest first.
 *
 * @example
 * ```ts
 * const lister = criRuntimeLister(createCriClient('unix:///run/containerd/containerd.sock'));
 * for (const pod of await lister.listPods()) console.log(pod.namespace, pod.name, pod.containers.length);
 * ```
 */
export function criRuntimeLister(
  cri: CriListerRuntime,
  options: CriRuntimeListerOptions = {},
): RuntimeLister {
  const list = async (uid: string | undefined, signal: AbortSignal | undefined): Promise<RuntimePod[]> => {
    const call = callOptions(options.timeoutMs, signal);
    const filter =
      uid === undefined ? {} : { filter: { labelSelector: { [KUBERNETES_POD_UID_LABEL]: uid } } };
    const [sandboxes, containers] = await Promise.all([
      cri.runtime.listPodSandbox(filter, call),
      cri.runtime.listContainers(filter, call),
    ]);
    return runtimePodsFromLists(sandboxes.items, containers.containers);
  };
  return {
    listPods: (signal) => list(undefined, signal),
    listPod: async (uid, signal) => (await list(uid, signal)).find((p) => p.id === uid),
  };
}
