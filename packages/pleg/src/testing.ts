/**
 * In-memory doubles for testing code around a PLEG without a CRI runtime: a
 * {@link FakeRuntimeLister} whose pods you set (and whose calls you count) and a
 * {@link fakePodStatusSource}. For a PLEG over a real socket, use `startFakeRuntime` of
 * `@nodeagent/kubecontainer/testing`.
 *
 * @example
 * ```ts
 * import { FakeClock } from '@nodeagent/core/testing';
 * import { GenericPLEG } from '@nodeagent/pleg';
 * import { FakeRuntimeLister, fakePodStatusSource } from '@nodeagent/pleg/testing';
 *
 * const clock = new FakeClock();
 * const lister = new FakeRuntimeLister();
 * const pleg = new GenericPLEG({ lister, statusSource: fakePodStatusSource(), clock });
 * await pleg.start();
 * await clock.advance(0); // the first relist
 * ```
 *
 * @packageDocumentation
 */
import {
  emptyPodStatus,
  type PodStatus,
  type PodStatusSource,
  type RuntimeLister,
  type RuntimePod,
} from '@nodeagent/kubecontainer';

/** A {@link RuntimeLister} over a settable list of pods, recording each call. */
export class FakeRuntimeLister implements RuntimeLister {
  /** What the next `listPods` returns. */
  pods: RuntimePod[];
  /** When set, `listPods` rejects with it (a runtime that is down). */
  failWith: Error | undefined;
  /** One entry per `listPods` call (its index), to count relists. */
  readonly calls: number[] = [];

  /** @param pods the initial listing. */
  constructor(pods: RuntimePod[] = []) {
    this.pods = pods;
  }

  /** The current {@link FakeRuntimeLister.pods}, or the {@link FakeRuntimeLister.failWith} error. */
  async listPods(): Promise<RuntimePod[]> {
    this.calls.push(this.calls.length);
    if (this.failWith !== undefined) throw this.failWith;
    return [...this.pods];
  }
}

/**
 * A {@link PodStatusSource} answering from `statusOf` (by default an empty status of the
 * asked pod, as a runtime that has nothing of it).
 */
export function fakePodStatusSource(
  statusOf: (uid: string, name: string, namespace: string) => PodStatus = emptyPodStatus,
): PodStatusSource {
  return {
    async getPodStatus(uid, name, namespace) {
      return statusOf(uid, name, namespace);
    },
  };
}
