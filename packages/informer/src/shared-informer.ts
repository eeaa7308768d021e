/**
 * One list/watch feeding a cache and many handlers (client-go's `SharedIndexInformer`).
 *
 * @module
 */
import {
  abortReason,
  type Clock,
  definedFields,
  type Lifecycle,
  type Logger,
  type MetricsOptions,
  noopLogger,
  realClock,
  StartOnce,
  type Timer,
} from '@nodeagent/core';
import { EventEmitter } from 'eventemitter3';
import { type Delta, DeltaFIFO, type PoppedDeltas } from './delta-fifo.js';
import { InformerStoppedError } from './errors.js';
import {
  type EventHandler,
  type HandlerOptions,
  type HandlerRegistration,
  type Notification,
  ProcessorListener,
} from './handler.js';
import { IndexedStore, type Indexers, type ReadonlyIndexer } from './indexed-store.js';
import { objectKey } from './keys.js';
import { Lister } from './lister.js';
import type { ListerWatcher } from './lister-watcher.js';
import { createInformerMetrics, type InformerMetrics, noopInformerMetrics } from './metrics.js';
import {
  Reflector,
  type ReflectorOptions,
  type WatchErrorContext,
  type WatchErrorHandler,
} from './reflector.js';
import type { KubeObject, Selectors } from './types.js';

/** Events a {@link SharedInformer} emits (eventemitter3, typed). */
export interface SharedInformerEvents {
  /** A handler threw or rejected; the handler keeps receiving. */
  handlerError: [
    error: Error,
    info: { readonly handler: string; readonly notification: 'add' | 'update' | 'delete' },
  ];
  /** A list or watch failed; the informer retries on its own. */
  watchError: [error: Error, context: WatchErrorContext];
  /** An object could not be stored (e.g. no `metadata.name`) and was skipped. */
  badObject: [error: Error, obj: unknown];
  /** The initial list has been stored. */
  synced: [];
  /** The informer stopped. */
  stopped: [];
}

/** Options of a {@link SharedInformer}. */
export interface SharedInformerOptions<T extends KubeObject = KubeObject>
  extends ReflectorOptions,
    Selectors {
  /** Name used in logs and metric labels. @default 'informer' */
  readonly name?: string;
  /** Extra indices (the `namespace` index is always present). */
  readonly indexers?: Indexers<T>;
  /**
   * Applied to every object before it is stored or delivered, e.g. to drop
   * `metadata.managedFields`. Must return a plain object with the same key.
   */
  readonly transform?: (obj: T) => T;
  /** @default noopLogger */
  readonly logger?: Logger;
  /** @default realClock */
  readonly clock?: Clock;
  /** Where the metrics go (see `INFORMER_METRIC_NAMES`); none when unset. */
  readonly metrics?: MetricsOptions;
  /** Called with every list/watch failure, in addition to the `watchError` event. */
  readonly watchErrorHandler?: WatchErrorHandler;
}

interface Waiter {
  resolve(): void;
  reject(err: Error): void;
}

/**
 * A shared, indexed informer; see the package documentation for an example.
 *
 * Lifecycle ({@link Lifecycle}): {@link SharedInformer.start | start(signal?)} resolves once
 * the initial list is stored, the signal bounding only that wait; the informer then runs
 * until {@link SharedInformer.stop | stop()}.
 */
export class SharedInformer<T extends KubeObject = KubeObject>
  extends EventEmitter<SharedInformerEvents>
  implements Lifecycle
{
  /** The informer's name (logs, metrics). */
  readonly name: string;
  readonly #listerWatcher: ListerWatcher<T>;
  readonly #options: SharedInformerOptions<T>;
  readonly #store: IndexedStore<T>;
  readonly #fifo: DeltaFIFO<T>;
  readonly #clock: Clock;
  readonly #log: Logger;
  readonly #transform: ((obj: T) => T) | undefined;
  readonly #handlerListeners: ProcessorListener<T>[] = [];
  #syncingListeners: ProcessorListener<T>[] = [];
  #metrics: InformerMetrics = noopInformerMetrics;
  #reflector: Reflector<T> | undefined;
  readonly #once: StartOnce;
  #controller: AbortController | undefined;
  #running: Promise<void> | undefined;
  #synced = false;
  #stopped = false;
  #waiters: Waiter[] = [];
  #resyncTimer: Timer | undefined;
  #resyncCheckPeriodMs = 0;
  #handlerCount = 0;

  constructor(listerWatcher: ListerWatcher<T>, options: SharedInformerOptions<T> = {}) {
    super();
    this.#listerWatcher = listerWatcher;
    this.#options = options;
    this.name = options.name ?? 'informer';
    this.#store = new IndexedStore<T>(options.indexers);
    this.#fifo = new DeltaFIFO<T>({ knownObjects: this.#store });
    this.#clock = options.clock ?? realClock;
    this.#log = (options.logger ?? noopLogger).child({ component: 'informer', informer: this.name });
    this.#transform = options.transform;
    this.#once = new StartOnce(`informer ${this.name}`);
  }

  /** The cache, read-only. */
  get indexer(): ReadonlyIndexer<T> {
    return this.#store;
  }

  /** A typed read-only lister over the cache. */
  get lister(): Lister<T> {
    return new Lister(this.#store);
  }

  /** The resource version of the last list, event or bookmark seen. */
  get lastSyncResourceVersion(): string {
    return this.#reflector?.lastSyncResourceVersion ?? '';
  }

  /** True once {@link start} was called. */
  get isStarted(): boolean {
    return this.#once.started;
  }

  /** True once stopped. */
  get isStopped(): boolean {
    return this.#stopped;
  }

  /** True once the initial list has been stored. */
  hasSynced(): boolean {
    return this.#synced;
  }

  /** Adds indices (allowed at any time; existing objects are indexed at once). */
  addIndexers(indexers: Indexers<T>): void {
    this.#store.addIndexers(indexers);
  }

  /**
   * Registers a handler. Added after the initial sync, it first receives every cached
   * object as `onAdd(obj, true)`.
   */
  addEventHandler(handler: EventHandler<T>, options: HandlerOptions = {}): HandlerRegistration {
    if (this.#stopped) throw new InformerStoppedError(`informer ${this.name}`);
    const name = options.name ?? `handler-${++this.#handlerCount}`;
    const listener = new ProcessorListener<T>(
      name,
      handler,
      options.resyncPeriodMs ?? 0,
      this.#clock,
      (err, h, kind) => this.#reportHandlerError(err, h, kind),
      {
        ...definedFields({ maxPending: options.maxPending }),
        onPending: (h, n) => this.#metrics.handlerPending(h, n),
      },
    );
    this.#handlerListeners.push(listener);
    if (this.#synced) for (const obj of this.#store.list()) listener.add({ kind: 'add', obj, initial: true });
    this.#updateResyncTimer();
    return {
      name,
      get pending() {
        return listener.pending;
      },
      hasSynced: () => this.#synced && listener.initialDelivered(),
      remove: () => this.#removeHandlerListener(listener),
    };
  }

  /** Removes a handler registered with {@link addEventHandler}. */
  removeHandler(registration: HandlerRegistration): void {
    registration.remove();
  }

  /**
   * Starts listing and watching; resolves once the initial list is stored. While the list
   * keeps failing it keeps retrying (with backoff, reporting `watchError`). `signal` bounds
   * only that wait: when it aborts first, the informer stops and `start` rejects with the
   * signal's reason; aborting it after `start` resolved does nothing. Rejects with
   * {@link InformerStoppedError} when {@link stop} is called first, and with
   * `AlreadyStartedError` when called twice.
   */
  start(signal?: AbortSignal): Promise<void> {
    return this.#once.run(
      signal,
      () => this.#run(),
      () => this.stop(),
    );
  }

  async #run(): Promise<void> {
    const controller = new AbortController();
    this.#controller = controller;
    if (this.#stopped) throw new InformerStoppedError(`informer ${this.name}`);
    if (this.#options.metrics) this.#metrics = createInformerMetrics(this.#options.metrics, this.name);
    this.#metrics.synced(false);
    this.#reflector = new Reflector<T>({
      ...this.#options,
      ...definedFields({
        selectors:
          this.#options.labelSelector !== undefined || this.#options.fieldSelector !== undefined
            ? selectorsOf(this.#options)
            : undefined,
      }),
      listerWatcher: this.#listerWatcher,
      clock: this.#clock,
      logger: this.#log,
      metrics: this.#metrics,
      sink: {
        replace: (items) => this.#onReplace(items),
        add: (obj) => this.#push((o) => this.#fifo.add(o), obj),
        update: (obj) => this.#push((o) => this.#fifo.update(o), obj),
        delete: (obj) => this.#push((o) => this.#fifo.delete(o), obj),
      },
      watchErrorHandler: (err, ctx) => {
        this.#options.watchErrorHandler?.(err, ctx);
        this.#emitSafely('watchError', err, ctx);
      },
      onBadObject: (err, obj) => this.#reportBadObject(err, obj),
    });
    this.#log.info(
      { labelSelector: this.#options.labelSelector, fieldSelector: this.#options.fieldSelector },
      'starting',
    );
    this.#running = this.#reflector.run(controller.signal).catch((err: unknown) => {
      this.#log.error({ err }, 'reflector loop failed unexpectedly');
    });
    this.#updateResyncTimer();
    await this.waitForSync();
  }

  /**
   * Resolves when synced; rejects with {@link InformerStoppedError} if the informer stops
   * first, or with the abort reason if `signal` aborts.
   */
  waitForSync(signal?: AbortSignal): Promise<void> {
    if (this.#synced) return Promise.resolve();
    if (this.#stopped) return Promise.reject(new InformerStoppedError(`informer ${this.name}`));
    if (signal?.aborted) return Promise.reject(abortReason(signal));
    return new Promise<void>((resolve, reject) => {
      const onAbort = (): void => {
        this.#waiters = this.#waiters.filter((w) => w !== waiter);
        reject(abortReason(signal as AbortSignal));
      };
      const waiter: Waiter = {
        resolve: () => {
          signal?.removeEventListener('abort', onAbort);
          resolve();
        },
        reject: (err) => {
          signal?.removeEventListener('abort', onAbort);
          reject(err);
        },
      };
      this.#waiters.push(waiter);
      signal?.addEventListener('abort', onAbort, { once: true });
    });
  }

  /** Stops the informer; resolves when the list/watch loop has exited. Idempotent. */
  async stop(): Promise<void> {
    if (!this.#stopped) {
      this.#stopped = true;
      this.#controller?.abort(new InformerStoppedError(`informer ${this.name}`));
      this.#resyncTimer?.cancel();
      this.#resyncTimer = undefined;
      for (const l of this.#handlerListeners) l.stop();
      const waiters = this.#waiters;
      this.#waiters = [];
      for (const w of waiters) w.reject(new InformerStoppedError(`informer ${this.name}`));
      this.#metrics.synced(false);
      this.#log.info('stopped');
      this.#emitSafely('stopped');
    }
    await this.#running;
  }

  #onReplace(items: readonly T[]): void {
    const good: T[] = [];
    for (const item of items) {
      try {
        const obj = this.#transform ? this.#transform(item) : item;
        objectKey(obj);
        good.push(obj);
      } catch (err) {
        this.#reportBadObject(err instanceof Error ? err : new Error(String(err)), item);
      }
    }
    this.#fifo.replace(good);
    this.#drain();
  }

  /** Applies one watch event; returns a promise while a handler is at its `maxPending` bound. */
  #push(op: (obj: T) => void, obj: T): void | Promise<void> {
    op(this.#transform ? this.#transform(obj) : obj);
    this.#drain();
    return this.#roomForAll();
  }

  /** Resolves once every bounded handler is below its bound; undefined when none is full. */
  #roomForAll(): Promise<void> | undefined {
    let waits: Promise<void>[] | undefined;
    for (const l of this.#handlerListeners) {
      const room = l.roomFor();
      if (!room) continue;
      if (!waits) waits = [];
      waits.push(room);
    }
    if (!waits) return undefined;
    // Re-checked after each wait: a handler may fill up again while another drains.
    return Promise.all(waits).then(() => this.#roomForAll());
  }

  /** Pops every pending key and applies it to the store and the handlers. */
  #drain(): void {
    for (let p = this.#fifo.pop(); p !== undefined; p = this.#fifo.pop()) this.#process(p);
    if (!this.#synced && this.#fifo.hasSynced()) {
      this.#synced = true;
      this.#metrics.synced(true);
      this.#log.info({ objects: this.#store.size, resourceVersion: this.lastSyncResourceVersion }, 'synced');
      const waiters = this.#waiters;
      this.#waiters = [];
      for (const w of waiters) w.resolve();
      this.#emitSafely('synced');
    }
  }

  #process({ key, deltas, isInInitialList }: PoppedDeltas<T>): void {
    for (const delta of deltas as Delta<T>[]) {
      if (delta.type === 'Deleted') {
        this.#store.delete(key);
        this.#distribute({ kind: 'delete', obj: delta.object }, false);
        continue;
      }
      const obj = delta.object as T;
      const old = this.#store.getByKey(key);
      this.#store.set(key, obj);
      if (old === undefined) {
        this.#distribute({ kind: 'add', obj, initial: isInInitialList }, false);
        continue;
      }
      // A resync, or a relist that found the object unchanged, goes only to handlers due for resync.
      const isSync =
        delta.type === 'Sync' ||
        (delta.type === 'Replaced' &&
          old.metadata?.resourceVersion !== undefined &&
          old.metadata.resourceVersion === obj.metadata?.resourceVersion);
      this.#distribute({ kind: 'update', oldObj: old, newObj: obj }, isSync);
    }
  }

  #distribute(n: Notification<T>, isSync: boolean): void {
    const targets = isSync ? this.#syncingListeners : this.#handlerListeners;
    for (const l of targets) l.add(n);
  }

  #removeHandlerListener(listener: ProcessorListener<T>): void {
    const i = this.#handlerListeners.indexOf(listener);
    if (i >= 0) this.#handlerListeners.splice(i, 1);
    this.#syncingListeners = this.#syncingListeners.filter((l) => l !== listener);
    listener.stop();
    this.#updateResyncTimer();
  }

  /** Re-arms the resync check at the smallest handler resync period. */
  #updateResyncTimer(): void {
    if (!this.#controller || this.#stopped) return;
    const periods = this.#handlerListeners.map((l) => l.resyncPeriodMs).filter((p) => p > 0);
    const period = periods.length > 0 ? Math.min(...periods) : 0;
    if (period === this.#resyncCheckPeriodMs && (this.#resyncTimer !== undefined || period === 0)) return;
    this.#resyncTimer?.cancel();
    this.#resyncTimer = undefined;
    this.#resyncCheckPeriodMs = period;
    if (period > 0) this.#resyncTimer = this.#clock.setInterval(() => this.#resyncCheck(), period).unref();
  }

  #resyncCheck(): void {
    if (!this.#synced || this.#stopped) return;
    const now = this.#clock.now();
    this.#syncingListeners = this.#handlerListeners.filter((l) => l.shouldResync(now));
    if (this.#syncingListeners.length === 0) return;
    this.#fifo.resync();
    this.#drain();
    for (const l of this.#syncingListeners) l.determineNextResync();
    this.#syncingListeners = [];
  }

  #reportHandlerError(err: Error, handler: string, kind: 'add' | 'update' | 'delete'): void {
    this.#metrics.handlerError(handler);
    this.#log.error({ err, handler, notification: kind }, 'event handler failed');
    this.#emitSafely('handlerError', err, { handler, notification: kind });
  }

  #reportBadObject(err: Error, obj: unknown): void {
    this.#log.warn({ err }, 'skipping object that cannot be stored');
    this.#emitSafely('badObject', err, obj);
  }

  /** Emits without letting a throwing listener break the informer. */
  #emitSafely<E extends keyof SharedInformerEvents>(event: E, ...args: SharedInformerEvents[E]): void {
    try {
      (this.emit as (e: E, ...a: unknown[]) => boolean)(event, ...(args as unknown[]));
    } catch (err) {
      this.#log.error({ err, event }, 'informer event listener threw');
    }
  }
}

function selectorsOf(s: Selectors): Selectors {
  return definedFields({ labelSelector: s.labelSelector, fieldSelector: s.fieldSelector });
}
