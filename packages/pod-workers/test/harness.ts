// Test doubles for the pod workers: a recording syncer that checks per-UID serialization,
// a fake pod status cache, a recording work queue, and pod builders.
import type { V1Pod } from '@kubernetes/client-node';
import { FakeClock, RecordingLogger } from '@nodeagent/core/testing';
import {
  type PodStatusProvider,
  type PodSyncer,
  PodWorkers,
  type PodWorkersOptions,
  type PodWorkQueue,
  type RunningPod,
  type SyncContext,
  type SyncPodType,
} from '../src/index.js';

export interface FakeStatus {
  readonly uid: string;
  readonly observedAt: number;
}

export type SyncMethod = 'syncPod' | 'syncTerminatingPod' | 'syncTerminatingRuntimePod' | 'syncTerminatedPod';

export interface SyncCall {
  readonly method: SyncMethod;
  readonly uid: string;
  readonly ctx: SyncContext;
  readonly updateType?: SyncPodType;
  readonly pod?: V1Pod;
  readonly mirrorPod?: V1Pod | undefined;
  readonly gracePeriodSeconds?: number | undefined;
  readonly podStatusFn?: unknown;
  readonly status?: FakeStatus;
  readonly at: number;
}

/** What a call does: resolve to a value (syncPod's isTerminal) or throw. Default: resolve at once. */
export type Behavior = (call: SyncCall) => Promise<boolean | undefined> | boolean | undefined;

/** Records every callback; fails the test (via `violations`) if two run at once for one UID. */
export class RecordingSyncer implements PodSyncer<FakeStatus> {
  readonly calls: SyncCall[] = [];
  readonly violations: string[] = [];
  readonly active = new Map<string, number>();
  behavior: Behavior = () => undefined;
  maxConcurrent = 0;
  private running = 0;

  constructor(private readonly clock: FakeClock) {}

  callsFor(uid: string, method?: SyncMethod): SyncCall[] {
    return this.calls.filter((c) => c.uid === uid && (method === undefined || c.method === method));
  }

  methodsFor(uid: string): SyncMethod[] {
    return this.callsFor(uid).map((c) => c.method);
  }

  private async run(call: SyncCall): Promise<boolean | undefined> {
    const n = (this.active.get(call.uid) ?? 0) + 1;
    if (n > 1) this.violations.push(`${n} concurrent callbacks for ${call.uid} (${call.method})`);
    this.active.set(call.uid, n);
    this.running++;
    this.maxConcurrent = Math.max(this.maxConcurrent, this.running);
    this.calls.push(call);
    try {
      return await this.behavior(call);
    } finally {
      this.running--;
      this.active.set(call.uid, (this.active.get(call.uid) ?? 1) - 1);
    }
  }

  async syncPod(
    ctx: SyncContext,
    updateType: SyncPodType,
    pod: V1Pod,
    mirrorPod: V1Pod | undefined,
    status: FakeStatus,
  ) {
    const uid = pod.metadata?.uid ?? '';
    const r = await this.run({
      method: 'syncPod',
      uid,
      ctx,
      updateType,
      pod,
      mirrorPod,
      status,
      at: this.clock.now(),
    });
    return { isTerminal: r === true };
  }

  async syncTerminatingPod(
    ctx: SyncContext,
    pod: V1Pod,
    status: FakeStatus,
    gracePeriodSeconds: number | undefined,
    podStatusFn: unknown,
  ) {
    const uid = pod.metadata?.uid ?? '';
    await this.run({
      method: 'syncTerminatingPod',
      uid,
      ctx,
      pod,
      status,
      gracePeriodSeconds,
      podStatusFn,
      at: this.clock.now(),
    });
  }

  async syncTerminatingRuntimePod(ctx: SyncContext, runningPod: RunningPod) {
    await this.run({ method: 'syncTerminatingRuntimePod', uid: runningPod.id, ctx, at: this.clock.now() });
  }

  async syncTerminatedPod(ctx: SyncContext, pod: V1Pod, status: FakeStatus) {
    const uid = pod.metadata?.uid ?? '';
    await this.run({ method: 'syncTerminatedPod', uid, ctx, pod, status, at: this.clock.now() });
  }
}

/**
 * A pod status cache. With `fresh` (default) every read resolves at once with a status
 * observed "now"; otherwise reads wait until {@link publish} makes a newer status available.
 */
export class FakeStatusCache implements PodStatusProvider<FakeStatus> {
  fresh = true;
  readonly reads: { uid: string; minTimeMs: number }[] = [];
  readonly runtimeTerminal = new Set<string>();
  failNext: Error | undefined;
  private readonly latest = new Map<string, number>();
  private readonly waiters: { uid: string; minTimeMs: number; resolve: (s: FakeStatus) => void }[] = [];

  constructor(private readonly clock: FakeClock) {}

  getNewerThan(uid: string, minTimeMs: number, signal: AbortSignal): Promise<FakeStatus> {
    this.reads.push({ uid, minTimeMs });
    if (this.failNext) {
      const err = this.failNext;
      this.failNext = undefined;
      return Promise.reject(err);
    }
    if (this.fresh) return Promise.resolve({ uid, observedAt: this.clock.now() });
    const at = this.latest.get(uid);
    if (at !== undefined && at >= minTimeMs) return Promise.resolve({ uid, observedAt: at });
    return new Promise((resolve, reject) => {
      const waiter = { uid, minTimeMs, resolve };
      this.waiters.push(waiter);
      signal.addEventListener('abort', () => {
        this.waiters.splice(this.waiters.indexOf(waiter), 1);
        reject(signal.reason);
      });
    });
  }

  /** Records a status of `uid` observed now, waking readers it satisfies. */
  publish(uid: string): void {
    const now = this.clock.now();
    this.latest.set(uid, now);
    for (const w of [...this.waiters]) {
      if (w.uid === uid && now >= w.minTimeMs) {
        this.waiters.splice(this.waiters.indexOf(w), 1);
        w.resolve({ uid, observedAt: now });
      }
    }
  }

  isRuntimeTerminal(uid: string): boolean {
    return this.runtimeTerminal.has(uid);
  }
}

/** Records requeues instead of scheduling them. */
export class RecordingWorkQueue implements PodWorkQueue {
  readonly adds: { uid: string; delayMs: number; at: number }[] = [];
  constructor(private readonly clock: FakeClock) {}
  addAfter(uid: string, delayMs: number): void {
    this.adds.push({ uid, delayMs, at: this.clock.now() });
  }
  lastFor(uid: string): { uid: string; delayMs: number; at: number } | undefined {
    return this.adds.filter((a) => a.uid === uid).at(-1);
  }
}

export interface PodOptions {
  readonly name?: string;
  readonly namespace?: string;
  readonly phase?: string;
  readonly deletionGracePeriodSeconds?: number;
  readonly deleted?: boolean;
  readonly terminationGracePeriodSeconds?: number;
  readonly source?: string;
}

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

export interface Harness {
  readonly clock: FakeClock;
  readonly syncer: RecordingSyncer;
  readonly cache: FakeStatusCache;
  readonly queue: RecordingWorkQueue;
  readonly logger: RecordingLogger;
  readonly workers: PodWorkers<FakeStatus>;
  /** Lets pending promise callbacks run (no time passes). */
  settle(): Promise<void>;
}

export function createHarness(
  options: Partial<Omit<PodWorkersOptions<FakeStatus>, 'syncer' | 'statusProvider' | 'clock'>> = {},
): Harness {
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

/** A promise the test resolves or rejects by hand. */
export function deferred<T = void>(): { promise: Promise<T>; resolve(v: T): void; reject(e: unknown): void } {
  let resolve!: (v: T) => void;
  let reject!: (e: unknown) => void;
  const promise = new Promise<T>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

/** Resolves when the signal aborts (rejecting like an abortable operation would). */
export function untilAborted(signal: AbortSignal): Promise<never> {
  return new Promise((_, reject) => {
    if (signal.aborted) reject(signal.reason);
    signal.addEventListener('abort', () => reject(signal.reason), { once: true });
  });
}
