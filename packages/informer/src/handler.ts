/**
 * Event handlers and the per-handler delivery buffer (client-go's `processorListener`):
 * each handler receives its notifications strictly in order, one at a time, from its own
 * unbounded buffer, so a slow (async) handler never delays the watch or other handlers.
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
}

/** The handle returned by `addEventHandler`. */
export interface HandlerRegistration {
  /** The handler's name. */
  readonly name: string;
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

/** Reports a handler failure. */
export type HandlerErrorSink = (
  error: Error,
  handler: string,
  kind: Notification<KubeObject>['kind'],
) => void;

/** Delivers notifications to one handler from its own buffer. */
export class ProcessorListener<T extends KubeObject> {
  readonly name: string;
  readonly resyncPeriodMs: number;
  readonly #handler: EventHandler<T>;
  readonly #onError: HandlerErrorSink;
  readonly #clock: Clock;
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
  ) {
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
    if (!this.#scheduled) {
      this.#scheduled = true;
      queueMicrotask(() => void this.#run());
    }
  }

  /** Drops buffered notifications and delivers nothing more. */
  stop(): void {
    this.#stopped = true;
    this.#buffer = [];
    this.#head = 0;
    this.#pendingInitial = 0;
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
