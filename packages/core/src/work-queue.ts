/**
 * A client-go grade work queue (`k8s.io/client-go/util/workqueue`): the queue, delaying
 * queue and rate-limiting queue in one class.
 *
 * The rules, as in client-go:
 * - A key waiting to be processed is held once: adding it again is a no-op (dirty set).
 * - A key is handed to one worker at a time (processing set). Adding a key that is being
 *   processed marks it dirty, and it is queued again when the worker calls `done(key)`.
 * - `addAfter` waits on the injected clock; a key already waiting keeps the earlier time.
 * - After `shutDown` new adds are ignored; workers still get the keys already queued, then
 *   learn of the shutdown.
 *
 * @module
 */
import { abortReason, type Clock, realClock } from './clock.js';
import { Fifo } from './internal/fifo.js';
import { WaitingAdds } from './internal/waiting-adds.js';
import { type Logger, noopLogger } from './logger.js';
import { InvalidOptionsError } from './options-error.js';
import { defaultControllerRateLimiter, type RateLimiter } from './rate-limiters.js';
import { QueueMetricsRecorder, type WorkQueueMetricsProvider } from './work-queue-metrics.js';

/**
 * The key types a {@link WorkQueue} accepts. Keys are compared by value (`Map`/`Set`
 * semantics), which is why objects are not allowed: use a string such as `namespace/name`.
 */
export type WorkQueueKey = string | number;

/** A key handed to a worker by {@link WorkQueue.get}. */
export interface WorkQueueKeyItem<K> {
  /** The key to process; pass it to {@link WorkQueue.done} afterwards. */
  readonly key: K;
  /** `false`: the queue is running. */
  readonly shutdown: false;
}

/** What {@link WorkQueue.get} resolves to once the queue is shut down and empty. */
export interface WorkQueueShutdownItem {
  /** No key. */
  readonly key: undefined;
  /** `true`: the worker should stop. */
  readonly shutdown: true;
}

/** What {@link WorkQueue.get} resolves to: a key to process, or the news that the queue shut down. */
export type WorkQueueItem<K> = WorkQueueKeyItem<K> | WorkQueueShutdownItem;

/** Options for {@link WorkQueue}. */
export interface WorkQueueOptions<K extends WorkQueueKey> {
  /**
   * The queue's name: the `name` label of its metrics and a field of its logs.
   * Required when `metrics` is given.
   * @default '' (unnamed)
   */
  readonly name?: string;
  /**
   * The source of time for delays, rate limits and metrics.
   * @default realClock
   */
  readonly clock?: Clock;
  /**
   * Decides the delay of {@link WorkQueue.addRateLimited} and counts retries.
   * @default defaultControllerRateLimiter(clock): per-key 5 ms doubling to 1000 s, at most 10 qps after a burst of 100
   */
  readonly rateLimiter?: RateLimiter<K>;
  /**
   * Where the queue reports client-go's workqueue metrics, e.g.
   * `createPromMetricsProvider({ registry, promClient })`.
   * @default no metrics
   */
  readonly metrics?: WorkQueueMetricsProvider;
  /**
   * Where the queue logs misuse (such as `done` for a key that is not being processed).
   * @default noopLogger
   */
  readonly logger?: Logger;
}

/** Thrown by the {@link WorkQueue} constructor for options that cannot work. */
interface Waiter<K> {
  resolve(item: WorkQueueItem<K>): void;
  detach(): void;
}

const SHUTDOWN: WorkQueueShutdownItem = Object.freeze({ key: undefined, shutdown: true });

/**
 * A rate-limited, delaying, deduplicating work queue for controllers: many adds of one key
 * collapse into one pending entry, and no key is processed by two workers at once.
 *
 * @example
 * ```ts
 * const queue = new WorkQueue<string>({ name: 'pods' });
 * queue.add('default/web-0');
 * for await (const key of queue) {
 *   try { await sync(key); queue.forget(key); }
 *   catch { queue.addRateLimited(key); }
 *   finally { queue.done(key); }
 * }
 * ```
 */
export class WorkQueue<K extends WorkQueueKey = string> implements AsyncIterable<K> {
  /** The queue's name (the `name` metric label), `''` when unnamed. */
  readonly name: string;
  private readonly clock: Clock;
  private readonly rateLimiter: RateLimiter<K>;
  private readonly log: Logger;
  private readonly metrics: QueueMetricsRecorder<K> | undefined;
  private readonly queue = new Fifo<K>();
  private readonly dirty = new Set<K>();
  private readonly processing = new Set<K>();
  private readonly waiters = new Set<Waiter<K>>();
  private readonly waiting: WaitingAdds<K>;
  private shutting = false;
  private draining = false;
  private drainWaiters: (() => void)[] = [];

  /** @param options see {@link WorkQueueOptions}; every field is optional. */
  constructor(options: WorkQueueOptions<K> = {}) {
    this.name = options.name ?? '';
    this.clock = options.clock ?? realClock;
    this.rateLimiter = options.rateLimiter ?? defaultControllerRateLimiter<K>(this.clock);
    this.log = (options.logger ?? noopLogger).child({ component: 'workqueue', queue: this.name });
    if (options.metrics && this.name === '') {
      throw new InvalidOptionsError(
        'WorkQueue',
        'WorkQueue: `metrics` needs a non-empty `name` for the metric label',
      );
    }
    this.metrics = options.metrics
      ? new QueueMetricsRecorder<K>(this.name, options.metrics, this.clock)
      : undefined;
    this.waiting = new WaitingAdds<K>(this.clock, (key) => this.add(key));
  }

  /** Queues `key` unless it is already pending; ignored after shutdown. */
  add(key: K): void {
    if (this.shutting || this.dirty.has(key)) return;
    this.metrics?.add(key);
    this.dirty.add(key);
    // A key being processed is queued again by done().
    if (!this.processing.has(key)) this.enqueue(key);
  }

  /**
   * Adds `key` after `delayMs` milliseconds on the queue's clock. If `key` is already waiting,
   * the earlier of the two times wins. A delay <= 0 (or NaN) adds at once. Counts as a retry
   * in the metrics, as in client-go.
   */
  addAfter(key: K, delayMs: number): void {
    if (this.shutting) return;
    this.metrics?.retry();
    if (!(delayMs > 0)) {
      this.add(key);
      return;
    }
    this.waiting.addAfter(key, delayMs);
  }

  /** Adds `key` after the delay the rate limiter gives it (a failed key's retry). */
  addRateLimited(key: K): void {
    if (this.shutting) return;
    this.addAfter(key, this.rateLimiter.when(key));
  }

  /** Tells the rate limiter `key` succeeded, resetting its backoff. Does not remove it from the queue. */
  forget(key: K): void {
    this.rateLimiter.forget(key);
  }

  /** How many rate-limited retries `key` has had since it was last forgotten. */
  numRequeues(key: K): number {
    return this.rateLimiter.numRequeues(key);
  }

  /**
   * Waits for a key to process. The key is the caller's until it calls {@link done}.
   * Resolves `{ shutdown: true }` once the queue is shut down and empty. Rejects with the
   * signal's reason if `signal` aborts first (no key is taken then).
   */
  get(signal?: AbortSignal): Promise<WorkQueueItem<K>> {
    if (signal?.aborted) return Promise.reject(abortReason(signal));
    const key = this.queue.shift();
    if (key !== undefined) return Promise.resolve(this.take(key));
    if (this.shutting) return Promise.resolve(SHUTDOWN);
    return new Promise<WorkQueueItem<K>>((resolve, reject) => {
      const onAbort = (): void => {
        this.waiters.delete(waiter);
        reject(abortReason(signal as AbortSignal));
      };
      const waiter: Waiter<K> = {
        resolve,
        detach: () => signal?.removeEventListener('abort', onAbort),
      };
      this.waiters.add(waiter);
      signal?.addEventListener('abort', onAbort, { once: true });
    });
  }

  /**
   * Marks `key` as processed. If it was added again meanwhile, it is queued again now.
   * Calling it for a key that is not being processed is logged and ignored.
   */
  done(key: K): void {
    if (!this.processing.has(key)) {
      this.log.warn({ key }, 'done() called for a key that is not being processed');
      return;
    }
    this.metrics?.done(key);
    this.processing.delete(key);
    if (this.dirty.has(key)) this.enqueue(key);
    else if (this.processing.size === 0) this.releaseDrainWaiters();
  }

  /** Keys waiting for a worker (not those being processed or waiting for a delay). */
  len(): number {
    return this.queue.length;
  }

  /**
   * Stops accepting keys and drops those waiting for a delay. Workers still get the keys
   * already queued, then `{ shutdown: true }`. Also ends a pending {@link shutDownWithDrain}.
   */
  shutDown(): void {
    this.draining = false;
    this.beginShutdown();
    this.releaseDrainWaiters();
  }

  /**
   * Like {@link shutDown}, and resolves once no key is being processed (every key handed
   * out has been `done`), as client-go's `ShutDownWithDrain`. Calling {@link shutDown}
   * meanwhile resolves it early.
   */
  shutDownWithDrain(): Promise<void> {
    this.draining = true;
    this.beginShutdown();
    if (this.processing.size === 0) return Promise.resolve();
    return new Promise<void>((resolve) => this.drainWaiters.push(resolve));
  }

  /** Whether {@link shutDown} or {@link shutDownWithDrain} was called. */
  shuttingDown(): boolean {
    return this.shutting;
  }

  /**
   * Yields keys until the queue is shut down and empty; each key must be passed to
   * {@link done} by the loop body. Rejects with the signal's reason if `signal` aborts.
   */
  async *keys(signal?: AbortSignal): AsyncGenerator<K, void, undefined> {
    for (;;) {
      const item = await this.get(signal);
      if (item.shutdown) return;
      yield item.key;
    }
  }

  /** `for await (const key of queue)`: the same as {@link keys} without a signal. */
  [Symbol.asyncIterator](): AsyncGenerator<K, void, undefined> {
    return this.keys();
  }

  private enqueue(key: K): void {
    // Hand the key straight to the longest waiting worker, if any: no wake-up race.
    for (const waiter of this.waiters) {
      this.waiters.delete(waiter);
      waiter.detach();
      waiter.resolve(this.take(key));
      return;
    }
    this.queue.push(key);
  }

  private take(key: K): WorkQueueItem<K> {
    this.metrics?.get(key);
    this.processing.add(key);
    this.dirty.delete(key);
    return { key, shutdown: false };
  }

  private beginShutdown(): void {
    if (!this.shutting) this.log.debug({ draining: this.draining }, 'shutting down');
    this.shutting = true;
    this.waiting.clear();
    // Waiters exist only while the queue is empty, so they all learn of the shutdown.
    for (const waiter of this.waiters) {
      waiter.detach();
      waiter.resolve(SHUTDOWN);
    }
    this.waiters.clear();
  }

  private releaseDrainWaiters(): void {
    if (this.drainWaiters.length === 0) return;
    if (this.draining && this.processing.size > 0) return;
    const release = this.drainWaiters;
    this.drainWaiters = [];
    for (const resolve of release) resolve();
  }
}
