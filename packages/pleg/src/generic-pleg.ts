/**
 * The relisting PLEG (upstream `pkg/kubelet/pleg/generic.go`).
 *
 * @module
 */
import {
  Channel,
  type Clock,
  formatGoDuration,
  type Lifecycle,
  type Logger,
  noopLogger,
  realClock,
  StartOnce,
  type Timer,
} from '@nodeagent/core';
import type {
  KnownRuntimeIds,
  PodStatus,
  PodStatusSource,
  RuntimeLister,
  RuntimePod,
} from '@nodeagent/kubecontainer';
import { EventEmitter } from 'eventemitter3';
import { computePodEvents } from './compute-events.js';
import type { PlegHealth, PodLifecycleEvent } from './events.js';
import { mapLimit } from './map-limit.js';
import { createPlegMetricsRecorder, type PlegMetricsOptions, type PlegMetricsRecorder } from './metrics.js';
import { type CachedPodStatus, PodStatusCache } from './pod-status-cache.js';
import { withPreservedPodIps } from './preserved-pod-ips.js';

/** The IDs of `last` (a pod as last listed) and of `known`, each once. */
function knownIds(last: RuntimePod | undefined, known: KnownRuntimeIds | undefined): KnownRuntimeIds {
  return {
    sandboxIds: [...new Set([...(last?.sandboxes ?? []).map((c) => c.id), ...(known?.sandboxIds ?? [])])],
    containerIds: [
      ...new Set([...(last?.containers ?? []).map((c) => c.id), ...(known?.containerIds ?? [])]),
    ],
  };
}

/** The kubelet's `plegChannelCapacity`: events buffered before new ones are dropped. */
export const DEFAULT_PLEG_CHANNEL_CAPACITY = 1000;

/**
 * A bounded event buffer for a PLEG ({@link DEFAULT_PLEG_CHANNEL_CAPACITY} by default), to share
 * between PLEGs through {@link GenericPlegOptions.channel}.
 */
export function newPlegEventChannel(capacity = DEFAULT_PLEG_CHANNEL_CAPACITY): Channel<PodLifecycleEvent> {
  return new Channel<PodLifecycleEvent>({ capacity });
}

/** The kubelet's generic PLEG relist period (`genericPlegRelistPeriod`), ms. */
export const GENERIC_PLEG_RELIST_PERIOD_MS = 1_000;
/** The kubelet's generic PLEG health threshold (`genericPlegRelistThreshold`), ms. */
export const GENERIC_PLEG_RELIST_THRESHOLD_MS = 180_000;

/** Options of {@link GenericPLEG}. */
export interface GenericPlegOptions {
  /** Lists the runtime's pods (`criRuntimeLister` of `@nodeagent/kubecontainer` over CRI). */
  readonly lister: RuntimeLister;
  /** Inspects changed pods (`criPodStatusSource` of `@nodeagent/kubecontainer` over CRI). */
  readonly statusSource: PodStatusSource;
  /** The cache to write. @default a new {@link PodStatusCache} */
  readonly cache?: PodStatusCache;
  /**
   * The event buffer to send to (share one between a generic and an evented PLEG); a bounded
   * channel drops and counts sends when full. @default a new one of `channelCapacity`
   */
  readonly channel?: Channel<PodLifecycleEvent>;
  /** Capacity of the event buffer when `channel` is not given. Minimum: 1. @default 1000 */
  readonly channelCapacity?: number;
  /** Time between the end of one relist and the start of the next, ms. @default 1000 */
  readonly relistPeriodMs?: number;
  /** Unhealthy when the last successful relist is older than this, ms. @default 180_000 */
  readonly relistThresholdMs?: number;
  /**
   * How many changed pods are inspected at once during a relist (upstream: one at a time).
   * Events are still sent in pod order. @default 4
   */
  readonly inspectConcurrency?: number;
  /** @default realClock */
  readonly clock?: Clock;
  /** @default noopLogger */
  readonly logger?: Logger;
  /** Kubelet PLEG metrics on your registry; none when omitted. */
  readonly metrics?: PlegMetricsOptions;
}

/** What one successful relist did (the `relist` notification). */
export interface RelistResult {
  /** When the relist started, ms since the epoch (the cache's new global stamp). */
  readonly timestamp: number;
  /** How long it took, ms. */
  readonly durationMs: number;
  /** Pods listed. */
  readonly pods: number;
  /** Pods inspected (changed or re-inspected). */
  readonly inspected: number;
  /** Events sent (not counting dropped ones). */
  readonly sent: number;
  /** Events dropped because the buffer was full. */
  readonly dropped: number;
}

/** Notifications of a {@link GenericPLEG} (observability; events themselves go through {@link GenericPLEG.events}). */
export interface GenericPlegNotifications {
  /** A relist finished. */
  relist: [result: RelistResult];
  /** A relist could not list the runtime's pods (the relist time is not advanced). */
  relistError: [error: Error];
  /** Inspecting a pod failed; it is re-inspected on the next relist. */
  inspectError: [podUid: string, error: Error];
}

/** The outcome of {@link GenericPLEG.updateCache}. */
export interface UpdateCacheResult {
  /** The inspected status (`undefined` for a pod gone from the runtime, or on error). */
  readonly status: PodStatus | undefined;
  /** Whether the cache took the write. */
  readonly updated: boolean;
  /** Why the inspection failed. */
  readonly error: Error | undefined;
}

interface PodRecord {
  old: RuntimePod | undefined;
  current: RuntimePod | undefined;
}

interface PodPlan {
  readonly uid: string;
  readonly record: PodRecord;
  readonly pod: RuntimePod | undefined;
  readonly events: PodLifecycleEvent[];
  readonly reinspect: boolean;
}

/**
 * The relisting pod lifecycle event generator. Every `relistPeriodMs` (after the previous
 * relist ends) it lists the runtime, diffs every pod against the previous listing, inspects
 * only the pods that changed (or whose last inspection failed) into the {@link PodStatusCache},
 * sends their events to a bounded buffer (dropping and counting when full) and finally stamps
 * the cache fresh (`updateTime`), releasing `getNewerThan` readers.
 *
 * Events are consumed with {@link GenericPLEG.events} (an async iterator over the shared
 * buffer). The instance is also an `eventemitter3` emitter of {@link GenericPlegNotifications}.
 *
 * @example
 * ```ts
 * const cri = createCriClient('unix:///run/containerd/containerd.sock');
 * const pleg = new GenericPLEG({ lister: criRuntimeLister(cri), statusSource: criPodStatusSource(cri) });
 * await pleg.start();
 * for await (const event of pleg.events(signal)) console.log(event.type, event.id, event.data);
 * ```
 */
export class GenericPLEG extends EventEmitter<GenericPlegNotifications> implements Lifecycle {
  /** The pod status cache this PLEG writes. */
  readonly cache: PodStatusCache;
  /** The event buffer this PLEG sends to. */
  readonly channel: Channel<PodLifecycleEvent>;
  readonly #once = new StartOnce('GenericPLEG');
  readonly #lister: RuntimeLister;
  readonly #statusSource: PodStatusSource;
  readonly #clock: Clock;
  readonly #log: Logger;
  readonly #metrics: PlegMetricsRecorder;
  readonly #inspectConcurrency: number;
  #periodMs: number;
  #thresholdMs: number;
  readonly #records = new Map<string, PodRecord>();
  #podsToReinspect = new Map<string, RuntimePod | undefined>();
  #relistTime: number | undefined;
  #relistSeq = 0;
  #tail: Promise<unknown> = Promise.resolve();
  #timer: Timer | undefined;
  #loopAbort: AbortController | undefined;
  #inFlight: Promise<unknown> | undefined;
  /** @internal Set by the evented PLEG while its stream is in use (cache writes may be refused). */
  eventedInUse = false;

  constructor(options: GenericPlegOptions) {
    super();
    this.#lister = options.lister;
    this.#statusSource = options.statusSource;
    this.cache = options.cache ?? new PodStatusCache();
    this.channel = options.channel ?? newPlegEventChannel(options.channelCapacity);
    this.#clock = options.clock ?? realClock;
    this.#log = (options.logger ?? noopLogger).child({ component: 'pleg' });
    this.#metrics = createPlegMetricsRecorder(options.metrics);
    this.#periodMs = options.relistPeriodMs ?? GENERIC_PLEG_RELIST_PERIOD_MS;
    this.#inspectConcurrency = Math.max(1, Math.floor(options.inspectConcurrency ?? 4));
    this.#thresholdMs = options.relistThresholdMs ?? GENERIC_PLEG_RELIST_THRESHOLD_MS;
  }

  /** Current relist period, ms. */
  get relistPeriodMs(): number {
    return this.#periodMs;
  }

  /** Current health threshold, ms. */
  get relistThresholdMs(): number {
    return this.#thresholdMs;
  }

  /** Start time of the last successful relist, ms since the epoch; `undefined` before the first. */
  get lastRelistTime(): number | undefined {
    return this.#relistTime;
  }

  /** Whether the relist loop is running. */
  get running(): boolean {
    return this.#loopAbort !== undefined;
  }

  /**
   * Changes the period and threshold (upstream `Update(RelistDuration)`); a running loop uses
   * the new period from its next wait.
   */
  setRelistTiming(timing: { readonly periodMs: number; readonly thresholdMs: number }): void {
    this.#periodMs = timing.periodMs;
    this.#thresholdMs = timing.thresholdMs;
  }

  /**
   * Starts relisting: the first relist at once, then `relistPeriodMs` after each one ends.
   * Resolves as soon as the loop is scheduled (readiness is {@link GenericPLEG.healthy});
   * `signal` only matters when it is already aborted. A second call rejects.
   */
  start(signal?: AbortSignal): Promise<void> {
    return this.#once.run(
      signal,
      async () => this.#startLoop(),
      () => this.stop(),
    );
  }

  /** Stops the loop and waits for a relist in progress to end (its CRI calls are cancelled). */
  stop(): Promise<void> {
    return this.#stopLoop();
  }

  /**
   * @internal Stops the loop, runs `update`, and starts the loop again if it was running: the
   * evented PLEG's fallback (upstream: Stop, Update, Start).
   */
  async restartLoop(update: () => void): Promise<void> {
    const running = this.#loopAbort !== undefined;
    await this.#stopLoop();
    update();
    if (running) this.#startLoop();
  }

  #startLoop(): void {
    if (this.#loopAbort !== undefined) return;
    const abort = new AbortController();
    this.#loopAbort = abort;
    this.#schedule(0, abort.signal);
  }

  async #stopLoop(): Promise<void> {
    const abort = this.#loopAbort;
    if (abort === undefined) return;
    this.#loopAbort = undefined;
    this.#timer?.cancel();
    this.#timer = undefined;
    abort.abort();
    await this.#inFlight?.catch(() => {});
  }

  /** Events as they are sent, until `signal` aborts (the shared buffer: each event goes to one reader). */
  events(signal?: AbortSignal): AsyncIterable<PodLifecycleEvent> {
    return this.channel.receiveAll(signal);
  }

  /**
   * Health (upstream `Healthy`): unhealthy before the first successful relist, and when the
   * last one is older than the threshold, with the kubelet's message. Sets `pleg_last_seen_seconds`.
   */
  healthy(): PlegHealth {
    if (this.#relistTime === undefined) return { ok: false, message: 'pleg has yet to be successful' };
    this.#metrics.lastSeen(Math.floor(this.#relistTime / 1000));
    const elapsedMs = this.#clock.now() - this.#relistTime;
    if (elapsedMs > this.#thresholdMs) {
      return {
        ok: false,
        message: `pleg was last seen active ${formatGoDuration(elapsedMs)} ago; threshold is ${formatGoDuration(this.#thresholdMs)}`,
      };
    }
    return { ok: true, message: '' };
  }

  /**
   * One relist now (serialized with the loop's). Resolves false when listing failed (the
   * relist time is not advanced, which eventually makes the PLEG unhealthy).
   */
  relist(signal?: AbortSignal): Promise<boolean> {
    return this.#serialize(() => this.#doRelist(signal));
  }

  /**
   * Relists one pod now (master's `RequestRelist`): lists only that pod, sends its events and
   * inspects it into the cache (waking its `getNewerThan` readers) even when nothing changed.
   * With a status source that has `listPodAndGetStatus`, the listing and the inspection come
   * from one read (one round of list calls); the status reads of the sandboxes and containers
   * the PLEG last listed for the pod, and of those in `known` (say, the ones a sync just
   * made), then go out with the lists instead of after them.
   * Skipped when a full relist starts after the request and before its turn (it covers the pod).
   */
  relistPod(uid: string, signal?: AbortSignal, known?: KnownRuntimeIds): Promise<void> {
    const source = this.#statusSource;
    const listAndGet = source.listPodAndGetStatus?.bind(source);
    return this.#readOnePod(uid, signal, async (last) => {
      if (listAndGet === undefined) {
        const pod = this.#lister.listPod
          ? await this.#lister.listPod(uid, signal)
          : (await this.#lister.listPods(signal)).find((p) => p.id === uid);
        return { pod, read: undefined };
      }
      // One round of list calls for both the listing and the inspection. The cache time is
      // when the lists had returned, as the separate listing's end stamped the inspection.
      const both = await listAndGet(
        uid,
        last?.name ?? '',
        last?.namespace ?? '',
        signal,
        knownIds(last, known),
      );
      const status = both.pod && { ...both.status, name: both.pod.name, namespace: both.pod.namespace };
      return { pod: both.pod, read: status && { status, timestamp: both.listedAt } };
    });
  }

  /**
   * Reads one pod now from its known sandboxes and containers alone — those of the PLEG's last
   * listing of it and `known` (say, the ones a sync just made) — with no list calls, as the
   * evented PLEG takes a pod's status from a runtime event; then sends its events and writes
   * the cache, as {@link GenericPLEG.relistPod} does. What was made outside the kubelet since
   * the last relist shows up at the next one. Falls back to `relistPod` when the status source
   * has no `getPodAndStatusByIds`. Serialized with relists, and skipped like `relistPod`.
   */
  inspectPod(uid: string, known: KnownRuntimeIds, signal?: AbortSignal): Promise<void> {
    const source = this.#statusSource;
    if (source.getPodAndStatusByIds === undefined) return this.relistPod(uid, signal, known);
    const byIds = source.getPodAndStatusByIds.bind(source);
    return this.#readOnePod(uid, signal, async (last) => {
      const both = await byIds(uid, last?.name ?? '', last?.namespace ?? '', knownIds(last, known), signal);
      // Stamped when the reads had returned, as relistPod stamps the end of its lists.
      return { pod: both.pod, read: both.pod && { status: both.status, timestamp: both.readAt } };
    });
  }

  /**
   * One pod's turn, serialized with relists (skipped when a full relist began after the
   * request): `readPod` gives the pod as the runtime has it now (from the pod as last listed)
   * and, when it read it, its status; then the record, events and cache as a relist does.
   */
  #readOnePod(
    uid: string,
    signal: AbortSignal | undefined,
    readPod: (
      last: RuntimePod | undefined,
    ) => Promise<{ pod: RuntimePod | undefined; read: { status: PodStatus; timestamp: number } | undefined }>,
  ): Promise<void> {
    const requestedAt = this.#relistSeq;
    return this.#serialize(async () => {
      if (this.#relistSeq !== requestedAt) return;
      const record = this.#records.get(uid) ?? { old: undefined, current: undefined };
      const { pod, read } = await readPod(record.current ?? record.old);
      record.current = pod;
      this.#records.set(uid, record);
      const plan = this.#plan(uid, true) as PodPlan;
      const result = await this.#inspect(plan.pod, uid, signal, read);
      this.#finish(plan, result, this.#podsToReinspect, signal);
    });
  }

  /**
   * The cache's `getNewerThan` for a pod worker that would otherwise wait for the next relist:
   * when the cached entry is not newer than `minTimeMs`, the pod is relisted at once
   * ({@link GenericPLEG.relistPod}) and the reader is released by that write. A difference from
   * upstream's generic PLEG, whose workers wait up to a relist period (an update that arrives
   * while or right after the pod synced: a deletion, a spec change); no CRI call is made when
   * the cache is already newer. Pass the PLEG itself as `PodWorkers`' `statusProvider`.
   */
  getNewerThan(uid: string, minTimeMs: number, signal?: AbortSignal): Promise<CachedPodStatus> {
    const reader = this.cache.getNewerThan(uid, minTimeMs, signal);
    if (!this.#cacheNewerThan(uid, minTimeMs) && this.#relistTime !== undefined) {
      this.relistPod(uid, signal).catch((error: unknown) => {
        // The periodic relist still releases the reader.
        if (!signal?.aborted)
          this.#log.debug({ err: error, podUid: uid }, 'GenericPLEG: relist of one pod failed');
      });
    }
    return reader;
  }

  #cacheNewerThan(uid: string, minTimeMs: number): boolean {
    const global = this.cache.timestamp;
    if (global !== undefined && global > minTimeMs) return true;
    const modified = this.cache.modifiedAt(uid);
    return modified !== undefined && modified > minTimeMs;
  }

  /** Flags a pod for inspection at the next relist, which then sends it a `PodSync` (master's `RequestReinspect`). */
  requestReinspect(uid: string): void {
    this.#podsToReinspect.set(uid, this.#records.get(uid)?.current ?? this.#records.get(uid)?.old);
  }

  /**
   * Inspects `pod` and writes the cache (upstream `UpdateCache`); serialized with relists.
   * A pod whose inspection fails is cached with the error.
   */
  updateCache(pod: RuntimePod, uid: string = pod.id, signal?: AbortSignal): Promise<UpdateCacheResult> {
    return this.#serialize(() => this.#inspect(pod, uid, signal));
  }

  #schedule(delayMs: number, signal: AbortSignal): void {
    this.#timer = this.#clock.setTimeout(() => {
      this.#timer = undefined;
      if (signal.aborted) return;
      const run = this.relist(signal).catch((error: unknown) => {
        this.#log.error({ err: error }, 'GenericPLEG: relist failed');
      });
      this.#inFlight = run;
      void run.then(() => {
        if (this.#inFlight === run) this.#inFlight = undefined;
        if (!signal.aborted) this.#schedule(this.#periodMs, signal);
      });
    }, delayMs);
  }

  #serialize<T>(fn: () => Promise<T>): Promise<T> {
    const run = this.#tail.then(fn, fn);
    this.#tail = run.catch(() => {});
    return run;
  }

  async #doRelist(signal: AbortSignal | undefined): Promise<boolean> {
    this.#relistSeq++;
    const timestamp = this.#clock.now();
    if (this.#relistTime !== undefined) this.#metrics.relistInterval((timestamp - this.#relistTime) / 1000);
    try {
      let pods: RuntimePod[];
      try {
        pods = await this.#lister.listPods(signal);
      } catch (error) {
        const err = asError(error);
        if (!signal?.aborted) {
          this.#log.error({ err }, 'GenericPLEG: Unable to retrieve pods');
          this.emit('relistError', err);
        }
        return false;
      }
      this.#relistTime = timestamp;
      this.#metrics.runningPodsAndContainers(pods);
      this.#setCurrent(pods);
      const needsReinspection = new Map<string, RuntimePod | undefined>();
      let inspected = 0;
      let sent = 0;
      let dropped = 0;
      // Diff every pod first, inspect the changed ones (bounded concurrency), then send their
      // events in pod order.
      const plans = [...this.#records.keys()]
        .map((uid) => this.#plan(uid, false))
        .filter((p): p is PodPlan => p !== undefined);
      const results = await mapLimit(plans, this.#inspectConcurrency, (p) =>
        this.#inspect(p.pod, p.uid, signal),
      );
      // Stopped mid-relist: leave the records as they are, the next relist sees the same diff.
      if (signal?.aborted) return false;
      for (const [i, p] of plans.entries()) {
        const r = this.#finish(p, results[i] as UpdateCacheResult, needsReinspection, signal);
        inspected++;
        sent += r.sent;
        dropped += r.dropped;
      }
      // Pods flagged for re-inspection that no record covers any more.
      for (const [uid, pod] of this.#podsToReinspect) {
        if (this.#records.has(uid) || pod === undefined) continue;
        inspected++;
        const result = await this.#inspect(pod, uid, signal);
        if (result.error !== undefined) needsReinspection.set(uid, pod);
      }
      this.#podsToReinspect = needsReinspection;
      // Only after every changed pod is written: the whole cache is now as fresh as `timestamp`.
      this.cache.updateTime(timestamp);
      const durationMs = this.#clock.now() - timestamp;
      this.emit('relist', { timestamp, durationMs, pods: pods.length, inspected, sent, dropped });
      return true;
    } finally {
      this.#metrics.relistDuration((this.#clock.now() - timestamp) / 1000);
    }
  }

  /** Marks every record absent, then sets the listed pods as current. */
  #setCurrent(pods: readonly RuntimePod[]): void {
    for (const record of this.#records.values()) record.current = undefined;
    for (const pod of pods) {
      const record = this.#records.get(pod.id);
      if (record === undefined) this.#records.set(pod.id, { old: undefined, current: pod });
      else record.current = pod;
    }
  }

  /** The diff of one pod, or `undefined` when it needs no inspection. */
  #plan(uid: string, forceInspect: boolean): PodPlan | undefined {
    const record = this.#records.get(uid);
    if (record === undefined) return undefined;
    const events = computePodEvents(uid, record.old, record.current);
    const reinspect = this.#podsToReinspect.has(uid);
    // Nothing changed: the old view stays (it equals the current one as far as states go).
    if (events.length === 0 && !reinspect && !forceInspect) return undefined;
    return { uid, record, pod: record.current, events, reinspect };
  }

  /** Applies an inspection: advances the record and sends the events, or flags a re-inspection. */
  #finish(
    plan: PodPlan,
    result: UpdateCacheResult,
    needsReinspection: Map<string, RuntimePod | undefined>,
    signal: AbortSignal | undefined,
  ): { sent: number; dropped: number } {
    const { uid, record } = plan;
    if (result.error !== undefined) {
      // Keep the old record so the same diff is seen (and sent) after a later successful inspection.
      needsReinspection.set(uid, plan.pod);
      if (!signal?.aborted) this.emit('inspectError', uid, result.error);
      return { sent: 0, dropped: 0 };
    }
    this.#podsToReinspect.delete(uid);
    if (this.eventedInUse && !result.updated) return { sent: 0, dropped: 0 };
    this.#updateRecord(uid, record);
    const events =
      plan.events.length === 0 && plan.reinspect
        ? [{ id: uid, type: 'PodSync' as const, data: '' }]
        : plan.events;
    let sent = 0;
    let dropped = 0;
    for (const event of events) {
      // ContainerChanged is not reliable and nothing consumes it (as upstream).
      if (event.type === 'ContainerChanged') continue;
      if (this.channel.send(event)) sent++;
      else {
        dropped++;
        this.#metrics.discardEvent();
        this.#log.error(
          { podUid: uid, event: event.type },
          'Event channel is full, discard this relist() cycle event',
        );
      }
    }
    return { sent, dropped };
  }

  #updateRecord(uid: string, record: PodRecord): void {
    if (record.current === undefined) {
      this.#records.delete(uid);
      return;
    }
    record.old = record.current;
    record.current = undefined;
  }

  /** `read`: the pod's status already read, with the time to stamp it in the cache. */
  async #inspect(
    pod: RuntimePod | undefined,
    uid: string,
    signal?: AbortSignal,
    read?: { readonly status: PodStatus; readonly timestamp: number },
  ): Promise<UpdateCacheResult> {
    if (pod === undefined) {
      // Gone from the runtime: no visible container or sandbox is left.
      this.cache.delete(uid);
      return { status: undefined, updated: true, error: undefined };
    }
    let timestamp = read?.timestamp ?? this.#clock.now();
    let status: PodStatus | undefined;
    let error: Error | undefined;
    try {
      const fresh =
        read?.status ?? (await this.#statusSource.getPodStatus(pod.id, pod.name, pod.namespace, signal));
      status = withPreservedPodIps(this.cache, uid, fresh);
      if (this.eventedInUse) timestamp = status.timestamp;
    } catch (err) {
      error = asError(err);
      // A cancelled inspection (stop) says nothing about the pod: keep what is cached.
      if (signal?.aborted) return { status: undefined, updated: false, error };
      this.#log.debug(
        { err: error, podUid: uid, pod: `${pod.namespace}/${pod.name}` },
        'PLEG: inspecting pod failed',
      );
    }
    const updated = this.cache.set(uid, status, error, timestamp);
    return { status, updated, error };
  }
}

function asError(error: unknown): Error {
  return error instanceof Error ? error : new Error(String(error));
}
