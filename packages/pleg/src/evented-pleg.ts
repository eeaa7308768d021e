/**
 * The event-streaming PLEG (upstream `pkg/kubelet/pleg/evented.go`, KEP-3386).
 *
 * @module
 */
import {
  Backoff,
  type Channel,
  type Clock,
  definedFields,
  type Lifecycle,
  type Logger,
  noopLogger,
  realClock,
  StartOnce,
  type Timer,
} from '@nodeagent/core';
import {
  type ContainerEventResponse,
  ContainerEventType,
  isUnimplemented,
  type RuntimeServiceApi,
} from '@nodeagent/cri';
import { nsToMs, podStatusFromContainerEvent } from '@nodeagent/kubecontainer';
import { EventEmitter } from 'eventemitter3';
import type { PlegHealth, PodLifecycleEvent } from './events.js';
import {
  GENERIC_PLEG_RELIST_PERIOD_MS,
  GENERIC_PLEG_RELIST_THRESHOLD_MS,
  GenericPLEG,
  type GenericPlegOptions,
  newPlegEventChannel,
} from './generic-pleg.js';
import { createPlegMetricsRecorder, type PlegMetricsRecorder } from './metrics.js';
import { PodStatusCache } from './pod-status-cache.js';
import { withPreservedPodIps } from './preserved-pod-ips.js';

/** The kubelet's safety-net relist period while events stream (`eventedPlegRelistPeriod`), ms. */
export const EVENTED_PLEG_RELIST_PERIOD_MS = 300_000;
/** The kubelet's health threshold while events stream (`eventedPlegRelistThreshold`), ms. */
export const EVENTED_PLEG_RELIST_THRESHOLD_MS = 600_000;
/** Consecutive stream failures before falling back to relisting (`eventedPlegMaxStreamRetries`). */
export const EVENTED_PLEG_MAX_STREAM_RETRIES = 5;

/** Options of {@link EventedPLEG}. */
export interface EventedPlegOptions extends GenericPlegOptions {
  /** The CRI client whose `GetContainerEvents` stream is consumed (a `CriClient` fits). */
  readonly cri: { readonly runtime: Pick<RuntimeServiceApi, 'getContainerEvents'> };
  /**
   * The cache; it should refuse older writes, as the two PLEGs race.
   * @default a new `PodStatusCache({ refuseOlderWrites: true })`
   */
  readonly cache?: PodStatusCache;
  /** Relist period after falling back, ms. @default 1000 */
  readonly relistPeriodMs?: number;
  /** Health threshold after falling back, ms. @default 180_000 */
  readonly relistThresholdMs?: number;
  /** Safety-net relist period while streaming, ms. @default 300_000 */
  readonly eventedRelistPeriodMs?: number;
  /** Health threshold while streaming, ms. @default 600_000 */
  readonly eventedRelistThresholdMs?: number;
  /** Consecutive stream failures before falling back. @default 5 */
  readonly maxStreamRetries?: number;
  /**
   * Wait between stream attempts (upstream master: 250 ms, ×2, jitter 0.2, cap 30 s).
   * @default { initialMs: 250, factor: 2, jitter: 0.2, capMs: 30_000 }
   */
  readonly retryBackoff?: {
    readonly initialMs?: number;
    readonly factor?: number;
    readonly jitter?: number;
    readonly capMs?: number;
  };
  /** Random source for the backoff jitter, in [0, 1). @default Math.random */
  readonly random?: () => number;
  /**
   * A stream counts as connected (resetting the failure count, `..._success_count`) at its
   * first event or after staying open this long, ms (gRPC reports nothing earlier). @default 1000
   */
  readonly streamEstablishedAfterMs?: number;
  /**
   * Period of the global cache stamp while streaming, ms, so `getNewerThan` readers cannot hang
   * when an event is lost. @default 5000
   */
  readonly globalCacheUpdatePeriodMs?: number;
}

/** Why an {@link EventedPLEG} fell back to relisting. */
export type FallbackReason = 'unimplemented' | 'max-retries';

/** Notifications of an {@link EventedPLEG}. */
export interface EventedPlegNotifications {
  /** A stream is connected (first event, or open for `streamEstablishedAfterMs`). */
  streamConnected: [];
  /** A stream attempt failed; `failures` is the consecutive count. */
  streamError: [error: Error, failures: number];
  /** Streaming was given up; the generic PLEG now relists at its normal period. */
  fallback: [reason: FallbackReason, error: Error];
  /** A CRI event was applied to the cache. */
  criEvent: [event: ContainerEventResponse];
}

/**
 * A PLEG driven by the runtime's `GetContainerEvents` stream: each event carries the pod's
 * sandbox and container statuses, which go to the cache (stamped with the event time, newer
 * wins) with no further CRI call, and map to the same events as relisting (STARTED →
 * `ContainerStarted`, STOPPED → `ContainerDied`, DELETED → `ContainerDied` + `ContainerRemoved`,
 * CREATED → cache only). A {@link GenericPLEG} sharing the cache and buffer runs as a safety net
 * at 300 s / 10 min; after 5 consecutive stream failures, or at once when the runtime answers
 * UNIMPLEMENTED (containerd < 1.7), streaming stops and that PLEG relists every 1 s / 3 min.
 *
 * @example
 * ```ts
 * const cri = createCriClient('unix:///run/containerd/containerd.sock');
 * const pleg = new EventedPLEG({ cri, lister: criRuntimeLister(cri), statusSource: criPodStatusSource(cri) });
 * pleg.on('fallback', (reason) => console.warn('relisting instead of streaming:', reason));
 * await pleg.start();
 * for await (const event of pleg.events(signal)) console.log(event.type, event.id);
 * ```
 */
export class EventedPLEG extends EventEmitter<EventedPlegNotifications> implements Lifecycle {
  /** The relisting PLEG (safety net, then fallback); its `healthy()` is the kubelet's "PLEG" check. */
  readonly generic: GenericPLEG;
  /** The shared pod status cache. */
  readonly cache: PodStatusCache;
  /** The shared event buffer. */
  readonly channel: Channel<PodLifecycleEvent>;
  readonly #once = new StartOnce('EventedPLEG');
  readonly #cri: EventedPlegOptions['cri'];
  readonly #clock: Clock;
  readonly #log: Logger;
  readonly #metrics: PlegMetricsRecorder;
  readonly #fallbackTiming: { periodMs: number; thresholdMs: number };
  readonly #eventedTiming: { periodMs: number; thresholdMs: number };
  readonly #maxRetries: number;
  readonly #backoff: Backoff;
  readonly #establishedAfterMs: number;
  readonly #globalPeriodMs: number;
  #abort: AbortController | undefined;
  #streamLoop: Promise<void> | undefined;
  #globalTimer: Timer | undefined;
  #fellBack = false;
  #failures = 0;

  constructor(options: EventedPlegOptions) {
    super();
    this.#cri = options.cri;
    this.#clock = options.clock ?? realClock;
    this.#log = (options.logger ?? noopLogger).child({ component: 'evented-pleg' });
    this.#metrics = createPlegMetricsRecorder(options.metrics);
    this.cache = options.cache ?? new PodStatusCache({ refuseOlderWrites: true });
    this.channel = options.channel ?? newPlegEventChannel(options.channelCapacity);
    this.#fallbackTiming = {
      periodMs: options.relistPeriodMs ?? GENERIC_PLEG_RELIST_PERIOD_MS,
      thresholdMs: options.relistThresholdMs ?? GENERIC_PLEG_RELIST_THRESHOLD_MS,
    };
    this.#eventedTiming = {
      periodMs: options.eventedRelistPeriodMs ?? EVENTED_PLEG_RELIST_PERIOD_MS,
      thresholdMs: options.eventedRelistThresholdMs ?? EVENTED_PLEG_RELIST_THRESHOLD_MS,
    };
    this.generic = new GenericPLEG({
      ...options,
      cache: this.cache,
      channel: this.channel,
      relistPeriodMs: this.#eventedTiming.periodMs,
      relistThresholdMs: this.#eventedTiming.thresholdMs,
    });
    this.#maxRetries = options.maxStreamRetries ?? EVENTED_PLEG_MAX_STREAM_RETRIES;
    this.#backoff = new Backoff({
      initialMs: options.retryBackoff?.initialMs ?? 250,
      factor: options.retryBackoff?.factor ?? 2,
      jitter: options.retryBackoff?.jitter ?? 0.2,
      capMs: options.retryBackoff?.capMs ?? 30_000,
      clock: this.#clock,
      ...definedFields({ random: options.random }),
    });
    this.#establishedAfterMs = options.streamEstablishedAfterMs ?? 1_000;
    this.#globalPeriodMs = options.globalCacheUpdatePeriodMs ?? 5_000;
  }

  /** True once streaming was given up for relisting. */
  get fallenBack(): boolean {
    return this.#fellBack;
  }

  /** Consecutive stream failures so far. */
  get streamFailures(): number {
    return this.#failures;
  }

  /**
   * Starts streaming and the safety-net relisting (which relists once at once). Resolves as
   * soon as both are scheduled; `signal` only matters when it is already aborted. A second
   * call rejects.
   */
  start(signal?: AbortSignal): Promise<void> {
    return this.#once.run(
      signal,
      () => this.#startStreaming(),
      () => this.stop(),
    );
  }

  async #startStreaming(): Promise<void> {
    const abort = new AbortController();
    this.#abort = abort;
    this.generic.eventedInUse = true;
    this.generic.setRelistTiming(this.#eventedTiming);
    await this.generic.start();
    this.#globalTimer = this.#clock.setInterval(
      () => this.cache.updateTime(this.#clock.now()),
      this.#globalPeriodMs,
    );
    this.#streamLoop = this.#runStream(abort.signal);
  }

  /** Stops streaming and relisting and waits for both to end. */
  async stop(): Promise<void> {
    const abort = this.#abort;
    if (abort === undefined) return;
    this.#abort = undefined;
    abort.abort();
    this.#globalTimer?.cancel();
    this.#globalTimer = undefined;
    await Promise.all([this.#streamLoop, this.generic.stop()]);
    this.#streamLoop = undefined;
  }

  /** Events as they are sent by either PLEG, until `signal` aborts. */
  events(signal?: AbortSignal): AsyncIterable<PodLifecycleEvent> {
    return this.channel.receiveAll(signal);
  }

  /**
   * Health: unhealthy when the event buffer is full (upstream's evented check, with its
   * message), else the generic PLEG's check at the current threshold (10 min while streaming,
   * 3 min after fallback).
   */
  healthy(): PlegHealth {
    if (this.channel.full) {
      return {
        ok: false,
        message: `EventedPLEG: pleg event channel capacity is full with ${this.channel.length} events`,
      };
    }
    this.#metrics.lastSeen(Math.floor(this.#clock.now() / 1000));
    return this.generic.healthy();
  }

  /** Relists one pod now through the generic PLEG (see {@link GenericPLEG.relistPod}). */
  relistPod(uid: string, signal?: AbortSignal): Promise<void> {
    return this.generic.relistPod(uid, signal);
  }

  async #runStream(signal: AbortSignal): Promise<void> {
    while (!signal.aborted) {
      const error = await this.#streamOnce(signal);
      if (signal.aborted) return;
      this.#failures++;
      this.#metrics.eventedConnectionError();
      this.#log.debug(
        { err: error, failures: this.#failures },
        'Evented PLEG: failed to get container events',
      );
      this.emit('streamError', error, this.#failures);
      if (isUnimplemented(error)) return this.#fallBack('unimplemented', error);
      if (this.#failures >= this.#maxRetries) return this.#fallBack('max-retries', error);
      // Catch up on whatever the broken stream missed.
      await this.generic.relist(signal).catch(() => false);
      try {
        await this.#backoff.sleep(signal);
      } catch {
        return;
      }
    }
  }

  /** One stream attempt; resolves with why it ended (a clean end counts as a failure, as upstream's EOF). */
  async #streamOnce(signal: AbortSignal): Promise<Error> {
    let connected = false;
    const markConnected = (): void => {
      if (connected) return;
      connected = true;
      this.#failures = 0;
      this.#backoff.reset();
      this.#metrics.eventedConnectionSuccess();
      this.emit('streamConnected');
    };
    const timer = this.#clock.setTimeout(markConnected, this.#establishedAfterMs);
    try {
      for await (const event of this.#cri.runtime.getContainerEvents({}, { signal })) {
        markConnected();
        this.#processCriEvent(event);
      }
      return new Error('container events stream is closed');
    } catch (error) {
      return error instanceof Error ? error : new Error(String(error));
    } finally {
      timer.cancel();
    }
  }

  #fallBack(reason: FallbackReason, error: Error): void {
    this.#fellBack = true;
    this.#globalTimer?.cancel();
    this.#globalTimer = undefined;
    this.#log.info(
      { reason, err: error },
      'Fall back to Generic PLEG relisting since Evented PLEG is not working',
    );
    // The safety-net loop is replaced by normal relisting (upstream: Stop, Update, Start).
    void this.generic
      .restartLoop(() => {
        this.generic.eventedInUse = false;
        this.generic.setRelistTiming(this.#fallbackTiming);
      })
      .then(() => {
        this.emit('fallback', reason, error);
      });
  }

  #processCriEvent(event: ContainerEventResponse): void {
    const generated = podStatusFromContainerEvent(event);
    if (generated === undefined) {
      // The sandbox may already be gone; a relist catches up (as upstream).
      this.#log.error({ containerId: event.containerId }, 'Evented PLEG: event without pod sandbox status');
      return;
    }
    const uid = generated.id;
    const status = withPreservedPodIps(this.cache, uid, generated);
    this.#metrics.eventedLatency(Math.max(0, this.#clock.now() - nsToMs(event.createdAt)) / 1000);
    let send: boolean;
    if (event.containerEventType === ContainerEventType.CONTAINER_DELETED_EVENT) {
      // Deleting the sandbox means every container is gone: forget the pod.
      if (status.sandboxStatuses.some((s) => s.id === event.containerId)) this.cache.delete(uid);
      send = true;
    } else {
      send = this.cache.set(uid, status, undefined, status.timestamp);
    }
    this.emit('criEvent', event);
    if (!send) return;
    const lifecycle = (type: PodLifecycleEvent['type']): void => {
      if (this.channel.send({ id: uid, type, data: event.containerId })) return;
      this.#metrics.discardEvent();
      this.#log.error({ podUid: uid, event: type }, 'Evented PLEG: event channel is full, discarding event');
    };
    switch (event.containerEventType) {
      case ContainerEventType.CONTAINER_STARTED_EVENT:
        lifecycle('ContainerStarted');
        break;
      case ContainerEventType.CONTAINER_STOPPED_EVENT:
        lifecycle('ContainerDied');
        break;
      case ContainerEventType.CONTAINER_DELETED_EVENT:
        lifecycle('ContainerDied');
        lifecycle('ContainerRemoved');
        break;
      default:
        // CREATED: the status is cached; relisting does not report creation either.
        break;
    }
  }
}
