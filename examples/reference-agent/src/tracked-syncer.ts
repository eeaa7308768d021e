/**
 * A `PodSyncer` wrapper that lets shutdown wait for the callbacks in flight and refuses new
 * ones once it began, so no CRI call or API write outlives the agent's clients.
 *
 * @module
 */
import type { V1Pod } from '@kubernetes/client-node';
import type {
  PodStatusFunc,
  PodSyncer,
  RunningPod,
  SyncContext,
  SyncPodResult,
  SyncPodType,
} from '@nodeagent/pod-workers';

/**
 * Thrown to a callback that starts after shutdown began. Named `AbortError`, a cancellation:
 * the pod workers log it at debug level, as the kubelet logs a sync ended by `context.Canceled`.
 */
export class AgentStoppingError extends Error {
  override readonly name = 'AbortError';
}

/** Wraps a syncer; {@link TrackedSyncer.drain} stops new calls and waits for the running ones. */
export class TrackedSyncer<S> implements PodSyncer<S> {
  readonly #running = new Set<Promise<unknown>>();
  readonly #stopping = new AbortController();

  readonly #inner: PodSyncer<S>;

  /** @param inner the callbacks that do the work. */
  constructor(inner: PodSyncer<S>) {
    this.#inner = inner;
  }

  /** Callbacks running now. */
  get inFlight(): number {
    return this.#running.size;
  }

  #track<T>(ctx: SyncContext, fn: (ctx: SyncContext) => Promise<T>): Promise<T> {
    if (this.#stopping.signal.aborted)
      return Promise.reject(new AgentStoppingError('node agent is stopping'));
    const signal = AbortSignal.any([ctx.signal, this.#stopping.signal]);
    const p = fn({ signal });
    this.#running.add(p);
    const forget = () => this.#running.delete(p);
    p.then(forget, forget);
    return p;
  }

  /** See `PodSyncer.syncPod`. */
  syncPod(
    ctx: SyncContext,
    type: SyncPodType,
    pod: V1Pod,
    mirror: V1Pod | undefined,
    status: S,
  ): Promise<SyncPodResult> {
    return this.#track(ctx, (c) => this.#inner.syncPod(c, type, pod, mirror, status));
  }

  /** See `PodSyncer.syncTerminatingPod`. */
  syncTerminatingPod(
    ctx: SyncContext,
    pod: V1Pod,
    status: S,
    gracePeriodSeconds: number | undefined,
    podStatusFn: PodStatusFunc | undefined,
  ): Promise<void> {
    return this.#track(ctx, (c) =>
      this.#inner.syncTerminatingPod(c, pod, status, gracePeriodSeconds, podStatusFn),
    );
  }

  /** See `PodSyncer.syncTerminatingRuntimePod`. */
  syncTerminatingRuntimePod(ctx: SyncContext, runningPod: RunningPod): Promise<void> {
    return this.#track(ctx, (c) => this.#inner.syncTerminatingRuntimePod(c, runningPod));
  }

  /** See `PodSyncer.syncTerminatedPod`. */
  syncTerminatedPod(ctx: SyncContext, pod: V1Pod, status: S): Promise<void> {
    return this.#track(ctx, (c) => this.#inner.syncTerminatedPod(c, pod, status));
  }

  /** Refuses new callbacks, signals the running ones and waits for them (at most `timeoutMs`). */
  async drain(timeoutMs: number): Promise<void> {
    this.#stopping.abort(new AgentStoppingError('node agent is stopping'));
    if (this.#running.size === 0) return;
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<void>((resolve) => {
      timer = setTimeout(resolve, timeoutMs);
    });
    await Promise.race([Promise.allSettled([...this.#running]), timeout]);
    clearTimeout(timer);
  }
}
