/**
 * Event handlers and the per-handler delivery buffer (client-go's `processorListener`):
 * each handler receives its notifications strictly in order, one at a time, from its own
 * buffer. The buffer is unbounded unless the handler sets `maxPending`, in which case a
 * full buffer holds the watch (back-pressure) until the handler catches up. Delivery yields
 * to I/O every few milliseconds, so a slow synchronous handler cannot starve the watch.
 *
 * @module
 */
import type { Clock } from '@nodeagent/core';
import type { DeletedFinalStateUnknown } from './keys.js';
import type { KubeObject } from './types.js';

/**
 * Callbacks for cache changes. Any of them may return a promise: the next notification
 * for this handler waits until it settles. Throwing or rejecting is reported and does not
 * stop delivery.
 */
export interface EventHandler<T extends KubeObject = KubeObject> {
  /** A new object; `isInInitialList` is true for objects of the initial list (or already cached when the handler was added). */
  onAdd?(obj: T, isInInitialList: boolean): void | Promise<void>;
  /** A changed object (also a resync, where `oldObj === newObj`). */
  onUpdate?(oldObj: T, newObj: T): void | Promise<void>;
  /** A deleted object, or a tombstone when the delete happened while disconnected. */
  onDelete?(obj: T | DeletedFinalStateUnknown<T>): void | Promise<void>;
}

/** Options of one handler registration. */
export interface HandlerOptions {
  /**
   * Re-deliver every cached object as an update this often, in ms. 0 disables; values
   * below 1000 are raised to 1000 (client-go's minimum).
   * @default 0
   */
  readonly resyncPeriodMs?: number;
  /** Name used in logs, metrics and `handlerError` events. @default 'handler-<n>' */
  readonly name?: string;
  /**
   * Bound on this handler's undelivered notifications. When it has this many or more, the
   * informer stops reading the watch (the cache and every other handler wait too) until
   * the handler is below the bound again; nothing is dropped or merged. A (re)list is
   * queued whole, so the bound can be exceeded by one list. The API server ends a watch
   * it cannot write to for long, which the informer then resumes or relists like any
   * other ended watch. 0 means unbounded.
   * @default 0
   */
  readonly maxPending?: number;
}

/** The handle returned by `addEventHandler`. */
export interface HandlerRegistration {
  /** The handler's name. */
  readonly name: string;
  /**
   * Notifications queued for this handler and not yet processed (the one in progress
   * included); also exported as `informer_handler_pending{handler}`.
   */
  readonly pending: number;
  /** True once the informer synced and this handler processed every initial-list notification. */
  hasSynced(): boolean;
  /** Stops delivery to this handler (pending notifications are dropped). */
  remove(): void;
}

/** One queued notification. */
export type Notification<T extends KubeObject> =
  | { readonly kind: 'add'; readonly obj: T; readonly initial: boolean }
  | { readonly kind: 'update'; readonly oldObj: T; readonly newObj: T }
  | { readonly kind: 'delete'; readonly obj: T | DeletedFinalStateUnknown<T> };

/** The smallest resync period a handler may ask for, in ms. */
export const MINIMUM_RESYNC_PERIOD_MS = 1000;

/**
 * A handler's delivery loop runs at most this long (ms of wall time) before it yields to
 * I/O with `setImmediate`, so watch data, timers and other handlers get their turn.
 */
export const HANDLER_YIELD_AFTER_MS = 5;

/** Reports a handler failure. */
export type HandlerErrorSink = (
  error: Error,
  handler: string,
  kind: Notification<KubeObject>['kind'],
) => void;

/**
 * When the current uninterrupted run of deliveries began; undefined once a macrotask
 * boundary has passed. Shared by every handler of the process: a synchronous handler is
 * called from a chain of microtasks (watch event, store update, delivery, next event…)
 * that only a macrotask break lets I/O into.
 */
let turnStart: number | undefined;

/** True when deliveries have run for {@link HANDLER_YIELD_AFTER_MS} without a macrotask break. */
function deliveryBudgetSpent(): boolean {
  const now = performance.now();
  if (turnStart === undefined) {
    turnStart = now;
    // Runs at the next macrotask boundary: deliveries after it start a fresh budget.
    setImmediate(() => {
      turnStart = undefined;
    });
    return false;
  }
  return now - turnStart >= HANDLER_YIELD_AFTER_MS;
}

/** Called with a handler's pending count when it changes. */
export type PendingSink = (handler: string, pending: number) => void;

/** Delivers notifications to one handler from its own buffer. */
export class ProcessorListener<T extends KubeObject> {
  readonly name: string;
  readonly resyncPeriodMs: number;
  /** The bound of {@link HandlerOptions.maxPending}; 0 for none. */
  readonly maxPending: number;
  readonly #handler: EventHandler<T>;
  readonly #onError: HandlerErrorSink;
  readonly #onPending: PendingSink | undefined;
  readonly #clock: Clock;
  /** Resolved when the buffer is below `maxPending` again (or the listener stops). */
  #room: { promise: Promise<void>; resolve: () => void } | undefined;
  #buffer: Notification<T>[] = [];
  #head = 0;
  #scheduled = false;
  #stopped = false;
  #pendingInitial = 0;
  #nextResyncAt = 0;

  constructor(
    name: string,
    handler: EventHandler<T>,
    resyncPeriodMs: number,
    clock: Clock,
    onError: HandlerErrorSink,
    options: { readonly maxPending?: number; readonly onPending?: PendingSink } = {},
  ) {
    const maxPending = options.maxPending ?? 0;
    if (!Number.isInteger(maxPending) || maxPending < 0)
      throw new RangeError(`handler ${name}: maxPending must be a non-negative integer, got ${maxPending}`);
    this.maxPending = maxPending;
    this.#onPending = options.onPending;
    this.name = name;
    this.#handler = handler;
    this.#clock = clock;
    this.#onError = onError;
    this.resyncPeriodMs = resyncPeriodMs > 0 ? Math.max(MINIMUM_RESYNC_PERIOD_MS, resyncPeriodMs) : 0;
    this.determineNextResync();
  }

  /** Notifications buffered and not yet delivered (the one being processed included). */
  get pending(): number {
    return this.#buffer.length - this.#head;
  }

  /** True when every initial-list notification has been processed. */
  initialDelivered(): boolean {
    return this.#pendingInitial === 0;
  }

  /** Queues a notification; delivery happens asynchronously, never inside the caller's stack. */
  add(n: Notification<T>): void {
    if (this.#stopped) return;
    if (n.kind === 'add' && n.initial) this.#pendingInitial++;
    this.#buffer.push(n);
    this.#onPending?.(this.name, this.pending);
    if (!this.#scheduled) {
      this.#scheduled = true;
      queueMicrotask(() => void this.#run());
    }
  }

  /**
   * When this handler is at its `maxPending` bound: a promise that resolves once it is
   * below it again (or stopped). Otherwise undefined.
   */
  roomFor(): Promise<void> | undefined {
    if (this.maxPending === 0 || this.#stopped || this.pending < this.maxPending) return undefined;
    if (!this.#room) {
      let resolve!: () => void;
      const promise = new Promise<void>((r) => {
        resolve = r;
      });
      this.#room = { promise, resolve };
    }
    return this.#room.promise;
  }

  /** Drops buffered notifications and delivers nothing more. */
  stop(): void {
    this.#stopped = true;
    this.#buffer = [];
    this.#head = 0;
    this.#pendingInitial = 0;
    this.#onPending?.(this.name, 0);
    this.#releaseRoom();
  }

  #releaseRoom(): void {
    const room = this.#room;
    this.#room = undefined;
    room?.resolve();
  }

  /** True when this handler's resync is due at `nowMs`. */
  shouldResync(nowMs: number): boolean {
    return this.resyncPeriodMs > 0 && nowMs >= this.#nextResyncAt;
  }

  /** Schedules the next resync one period from now. */
  determineNextResync(): void {
    if (this.resyncPeriodMs > 0) this.#nextResyncAt = this.#clock.now() + this.resyncPeriodMs;
  }

  async #run(): Promise<void> {
    while (!this.#stopped && this.#head < this.#buffer.length) {
      if (deliveryBudgetSpent()) {
        // Let I/O (the watch, timers) and other handlers run before the next batch.
        await new Promise<void>((resolve) => setImmediate(resolve));
        if (this.#stopped) break;
      }
      const n = this.#buffer[this.#head] as Notification<T>;
      try {
        const result = this.#deliver(n);
        if (result !== undefined && typeof (result as Promise<void>).then === 'function') await result;
      } catch (err) {
        this.#onError(err instanceof Error ? err : new Error(String(err)), this.name, n.kind);
      }
      if (this.#stopped) break;
      this.#buffer[this.#head] = undefined as unknown as Notification<T>;
      this.#head++;
      if (n.kind === 'add' && n.initial && this.#pendingInitial > 0) this.#pendingInitial--;
      this.#onPending?.(this.name, this.pending);
      if (this.#room && this.pending < this.maxPending) this.#releaseRoom();
      if (this.#head > 4096 && this.#head * 2 > this.#buffer.length) {
        this.#buffer = this.#buffer.slice(this.#head);
        this.#head = 0;
      }
    }
    this.#scheduled = false;
    if (this.#head === this.#buffer.length) {
      this.#buffer.length = 0;
      this.#head = 0;
    }
  }

  #deliver(n: Notification<T>): void | Promise<void> {
    switch (n.kind) {
      case 'add':
        return this.#handler.onAdd?.(n.obj, n.initial);
      case 'update':
        return this.#handler.onUpdate?.(n.oldObj, n.newObj);
      case 'delete':
        return this.#handler.onDelete?.(n.obj);
    }
  }
}
