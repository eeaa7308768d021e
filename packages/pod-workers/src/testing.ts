/**
 * Test doubles for code built on the pod workers: a {@link RecordingSyncer} that records every
 * callback (and flags two at once for one pod), a {@link FakeStatusCache}, a
 * {@link RecordingWorkQueue}, a pod builder ({@link makePod}) and
 * {@link createPodWorkersHarness}, which wires them to a `PodWorkers` on a fake clock.
 *
 * @example
 * ```ts
 * import { createPodWorkersHarness, makePod } from '@nodeagent/pod-workers/testing';
 *
 * const h = createPodWorkersHarness();
 * h.workers.updatePod({ updateType: 'create', pod: makePod('a') });
 * await h.settle();
 * console.log(h.syncer.methodsFor('a'), h.queue.lastFor('a')?.delayMs); // [ 'syncPod' ] 60000
 * ```
 *
 * @packageDocumentation
 */
import type { V1Pod } from '@kubernetes/client-node';
import type { Clock } from '@nodeagent/core';
import { FakeClock, RecordingLogger } from '@nodeagent/core/testing';
import {
  type PodStatusProvider,
  type PodSyncer,
  PodWorkers,
  type PodWorkersOptions,
  type PodWorkQueue,
  type RunningPod,
  type SyncContext,
  type SyncPodResult,
  type SyncPodType,
} from './index.js';

/** The status {@link FakeStatusCache} hands out: which pod, observed when. */
export interface FakeStatus {
  /** Pod UID. */
  readonly uid: string;
  /** When it was observed, ms (the fake clock). */
  readonly observedAt: number;
}

/** The four pod-worker callbacks. */
export type SyncMethod = 'syncPod' | 'syncTerminatingPod' | 'syncTerminatingRuntimePod' | 'syncTerminatedPod';

/** One recorded callback and its arguments. */
export interface SyncCall {
  /** Which callback. */
  readonly method: SyncMethod;
  /** Pod UID. */
  readonly uid: string;
  /** The sync context (its signal aborts when the sync is cancelled). */
  readonly ctx: SyncContext;
  /** `syncPod`'s update type. */
  readonly updateType?: SyncPodType;
  /** The pod. */
  readonly pod?: V1Pod;
  /** `syncPod`'s mirror pod. */
  readonly mirrorPod?: V1Pod | undefined;
  /** `syncTerminatingPod`'s grace period. */
  readonly gracePeriodSeconds?: number | undefined;
  /** `syncTerminatingPod`'s status function. */
  readonly podStatusFn?: unknown;
  /** The status read before the call. */
  readonly status?: FakeStatus;
  /** When the call started, ms (the fake clock). */
  readonly at: number;
}

/**
 * What a call does: resolve (for `syncPod`: `true` for `isTerminal`, or a whole
 * `SyncPodResult`) or throw. Default: resolve at once.
 */
export type Behavior = (
  call: SyncCall,
) => Promise<boolean | SyncPodResult | undefined> | boolean | SyncPodResult | undefined;

/** Records every callback; fails the test (via `violations`) if two run at once for one UID. */
export class RecordingSyncer implements PodSyncer<FakeStatus> {
  /** Every call, in order. */
  readonly calls: SyncCall[] = [];
  /** Serialization violations (two callbacks at once for one UID). */
  readonly violations: string[] = [];
  /** Callbacks running now per UID. */
  readonly active = new Map<string, number>();
  /** What each call does. */
  behavior: Behavior = () => undefined;
  /** Most callbacks that ran at once, over all pods. */
  maxConcurrent = 0;
  #running = 0;
  readonly #clock: Clock;

  /** @param clock stamps {@link SyncCall.at}. */
  constructor(clock: Clock) {
    this.#clock = clock;
  }

  /** The calls for `uid` (of `method`, if given). */
  callsFor(uid: string, method?: SyncMethod): SyncCall[] {
    return this.calls.filter((c) => c.uid === uid && (method === undefined || c.method === method));
  }

  /** The callback names called for `uid`, in order. */
  methodsFor(uid: string): SyncMethod[] {
    return this.callsFor(uid).map((c) => c.method);
  }

  async #run(call: SyncCall): Promise<boolean | SyncPodResult | undefined> {
    const n = (this.active.get(call.uid) ?? 0) + 1;
    if (n > 1) this.violations.push(`${n} concurrent callbacks for ${call.uid} (${call.method})`);
    this.active.set(call.uid, n);
    this.#running++;
    this.maxConcurrent = Math.max(this.maxConcurrent, this.#running);
    this.calls.push(call);
    try {
      return await this.behavior(call);
    } finally {
      this.#running--;
      this.active.set(call.uid, (this.active.get(call.uid) ?? 1) - 1);
    }
  }

  /** Records a `syncPod`. */
  async syncPod(
    ctx: SyncContext,
    updateType: SyncPodType,
    pod: V1Pod,
    mirrorPod: V1Pod | undefined,
    status: FakeStatus,
  ) {
    const uid = pod.metadata?.uid ?? '';
    const r = await this.#run({
      method: 'syncPod',
      uid,
      ctx,
      updateType,
      pod,
      mirrorPod,
      status,
      at: this.#clock.now(),
    });
    return typeof r === 'object' ? r : { isTerminal: r === true };
  }

  /** Records a `syncTerminatingPod`. */
  async syncTerminatingPod(
    ctx: SyncContext,
    pod: V1Pod,
    status: FakeStatus,
    gracePeriodSeconds: number | undefined,
    podStatusFn: unknown,
  ) {
    const uid = pod.metadata?.uid ?? '';
    await this.#run({
      method: 'syncTerminatingPod',
      uid,
      ctx,
      pod,
      status,
      gracePeriodSeconds,
      podStatusFn,
      at: this.#clock.now(),
    });
  }

  /** Records a `syncTerminatingRuntimePod`. */
  async syncTerminatingRuntimePod(ctx: SyncContext, runningPod: RunningPod) {
    await this.#run({ method: 'syncTerminatingRuntimePod', uid: runningPod.id, ctx, at: this.#clock.now() });
  }

  /** Records a `syncTerminatedPod`. */
  async syncTerminatedPod(ctx: SyncContext, pod: V1Pod, status: FakeStatus) {
    const uid = pod.metadata?.uid ?? '';
    await this.#run({ method: 'syncTerminatedPod', uid, ctx, pod, status, at: this.#clock.now() });
  }
}

/**
 * A pod status cache. With `fresh` (default) every read resolves at once with a status
 * observed "now"; otherwise reads wait until {@link publish} makes a newer status available.
 */
export class FakeStatusCache implements PodStatusProvider<FakeStatus> {
  /** Every read resolves at once with a status observed now; false: reads wait for {@link FakeStatusCache.publish}. */
  fresh = true;
  /** Every read, in order. */
  readonly reads: { uid: string; minTimeMs: number }[] = [];
  /** UIDs {@link FakeStatusCache.isRuntimeTerminal} reports terminal. */
  readonly runtimeTerminal = new Set<string>();
  /** The next read rejects with this. */
  failNext: Error | undefined;
  readonly #latest = new Map<string, number>();
  readonly #waiters: { uid: string; minTimeMs: number; resolve: (s: FakeStatus) => void }[] = [];
  readonly #clock: Clock;

  /** @param clock stamps the statuses. */
  constructor(clock: Clock) {
    this.#clock = clock;
  }

  /** A status of `uid` at least as new as `minTimeMs` (see {@link FakeStatusCache.fresh}). */
  getNewerThan(uid: string, minTimeMs: number, signal: AbortSignal): Promise<FakeStatus> {
    this.reads.push({ uid, minTimeMs });
    if (this.failNext) {
      const err = this.failNext;
      this.failNext = undefined;
      return Promise.reject(err);
    }
    if (this.fresh) return Promise.resolve({ uid, observedAt: this.#clock.now() });
    const at = this.#latest.get(uid);
    if (at !== undefined && at >= minTimeMs) return Promise.resolve({ uid, observedAt: at });
    return new Promise((resolve, reject) => {
      const waiter = { uid, minTimeMs, resolve };
      this.#waiters.push(waiter);
      signal.addEventListener('abort', () => {
        this.#waiters.splice(this.#waiters.indexOf(waiter), 1);
        reject(signal.reason);
      });
    });
  }

  /** Records a status of `uid` observed now, waking readers it satisfies. */
  publish(uid: string): void {
    const now = this.#clock.now();
    this.#latest.set(uid, now);
    for (const w of [...this.#waiters]) {
      if (w.uid === uid && now >= w.minTimeMs) {
        this.#waiters.splice(this.#waiters.indexOf(w), 1);
        w.resolve({ uid, observedAt: now });
      }
    }
  }

  /** Whether `uid` is in {@link FakeStatusCache.runtimeTerminal}. */
  isRuntimeTerminal(uid: string): boolean {
    return this.runtimeTerminal.has(uid);
  }
}

/** Records requeues instead of scheduling them. */
export class RecordingWorkQueue implements PodWorkQueue {
  /** Every requeue, in order. */
  readonly adds: { uid: string; delayMs: number; at: number }[] = [];
  readonly #clock: Clock;

  /** @param clock stamps the requeues. */
  constructor(clock: Clock) {
    this.#clock = clock;
  }

  /** Records a requeue of `uid` after `delayMs`. */
  addAfter(uid: string, delayMs: number): void {
    this.adds.push({ uid, delayMs, at: this.#clock.now() });
  }
  /** The last requeue of `uid`. */
  lastFor(uid: string): { uid: string; delayMs: number; at: number } | undefined {
    return this.adds.filter((a) => a.uid === uid).at(-1);
  }
}

/** Options of {@link makePod}. */
export interface PodOptions {
  /** @default `pod-<uid>` */
  readonly name?: string;
  /** @default 'default' */
  readonly namespace?: string;
  /** `status.phase`. @default none */
  readonly phase?: string;
  /** Marks the pod deleted with this grace period. */
  readonly deletionGracePeriodSeconds?: number;
  /** Marks the pod deleted. */
  readonly deleted?: boolean;
  /** `spec.terminationGracePeriodSeconds`. */
  readonly terminationGracePeriodSeconds?: number;
  /** The `kubernetes.io/config.source` annotation (`file` makes a static pod). */
  readonly source?: string;
}

/** A one-container pod with UID `uid`. */
export function makePod(uid: string, options: PodOptions = {}): V1Pod {
  return {
    metadata: {
      uid,
      name: options.name ?? `pod-${uid}`,
      namespace: options.namespace ?? 'default',
      ...(options.source ? { annotations: { 'kubernetes.io/config.source': options.source } } : {}),
      ...(options.deleted || options.deletionGracePeriodSeconds !== undefined
        ? { deletionTimestamp: new Date(0) }
        : {}),
      ...(options.deletionGracePeriodSeconds !== undefined
        ? { deletionGracePeriodSeconds: options.deletionGracePeriodSeconds }
        : {}),
    },
    spec: {
      containers: [{ name: 'c', image: 'busybox' }],
      ...(options.terminationGracePeriodSeconds !== undefined
        ? { terminationGracePeriodSeconds: options.terminationGracePeriodSeconds }
        : {}),
    },
    ...(options.phase ? { status: { phase: options.phase } } : {}),
  };
}

/** What {@link createPodWorkersHarness} wires. */
export interface PodWorkersHarness {
  /** The fake clock (starts at 1_000_000). */
  readonly clock: FakeClock;
  /** The recording syncer. */
  readonly syncer: RecordingSyncer;
  /** The status cache. */
  readonly cache: FakeStatusCache;
  /** The work queue. */
  readonly queue: RecordingWorkQueue;
  /** The logger. */
  readonly logger: RecordingLogger;
  /** The pod workers under test. */
  readonly workers: PodWorkers<FakeStatus>;
  /** Lets pending promise callbacks run (no time passes). */
  settle(): Promise<void>;
}

/** `PodWorkers` over the doubles above on a fake clock, with no jitter (`random: () => 0`). */
export function createPodWorkersHarness(
  options: Partial<Omit<PodWorkersOptions<FakeStatus>, 'syncer' | 'statusProvider' | 'clock'>> = {},
): PodWorkersHarness {
  const clock = new FakeClock({ startMs: 1_000_000 });
  const syncer = new RecordingSyncer(clock);
  const cache = new FakeStatusCache(clock);
  const queue = new RecordingWorkQueue(clock);
  const logger = new RecordingLogger();
  const workers = new PodWorkers<FakeStatus>({
    syncer,
    statusProvider: cache,
    workQueue: queue,
    clock,
    logger,
    random: () => 0,
    ...options,
  });
  return { clock, syncer, cache, queue, logger, workers, settle: () => clock.advance(0) };
}
