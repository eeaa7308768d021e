/**
 * The global limit on sync callbacks running at once, over p-queue. Per-pod isolation
 * comes first: a callback that runs longer than `maxSlotHoldMs` keeps running but stops
 * counting against the limit, so hung pods can never starve the others for longer than that.
 *
 * @module
 * @internal
 */
import type { Clock, Timer } from '@nodeagent/core';
import PQueue from 'p-queue';

interface Slot {
  readonly uid: string;
  readonly startedAt: number;
  readonly release: () => void;
}

/** Runs callbacks under a concurrency limit. */
export class ConcurrencyLimiter {
  readonly #queue: PQueue | undefined;
  /** Running callbacks in start order, so the first one is the oldest. */
  readonly #slots = new Set<Slot>();
  /** One timer for the oldest slot, instead of one per callback. */
  #watchdog: Timer | undefined;

  readonly #clock: Clock;
  readonly #maxSlotHoldMs: number;
  readonly #onSlotReleased: (uid: string) => void;

  /**
   * @param concurrency the limit; `Infinity` runs everything at once without a queue.
   * @param maxSlotHoldMs after this long a running callback releases its slot.
   * @param onSlotReleased told when a long callback released its slot.
   */
  constructor(
    concurrency: number,
    clock: Clock,
    maxSlotHoldMs: number,
    onSlotReleased: (uid: string) => void,
  ) {
    this.#clock = clock;
    this.#maxSlotHoldMs = maxSlotHoldMs;
    this.#onSlotReleased = onSlotReleased;
    this.#queue = Number.isFinite(concurrency) ? new PQueue({ concurrency }) : undefined;
  }

  /** Callbacks waiting for a slot. */
  get waiting(): number {
    return this.#queue?.size ?? 0;
  }

  /**
   * Runs `fn` once a slot is free and resolves with its result. Rejects with the signal's
   * reason (without running `fn`) if `signal` aborts while waiting for a slot.
   */
  async run<T>(uid: string, signal: AbortSignal, fn: () => Promise<T>): Promise<T> {
    const queue = this.#queue;
    if (queue === undefined) return fn();
    let result: Promise<T> | undefined;
    const task = queue.add(
      async () => {
        const running = (async () => fn())();
        result = running;
        await this.#holdSlot(uid, running);
      },
      { signal },
    );
    try {
      await task;
    } catch (err) {
      // p-queue gives up on a running task when the signal aborts, but the callback may still
      // be running: the worker must wait for it, or two callbacks could overlap for one pod.
      if (result === undefined) throw err;
    }
    // The task started (it resolved, or was abandoned by p-queue after starting), so `result` is set.
    return result as Promise<T>;
  }

  /** Resolves when `running` settles or the slot is released for running too long. */
  #holdSlot(uid: string, running: Promise<unknown>): Promise<void> {
    if (!Number.isFinite(this.#maxSlotHoldMs)) return running.then(noop, noop);
    return new Promise<void>((resolve) => {
      const slot: Slot = { uid, startedAt: this.#clock.now(), release: resolve };
      this.#slots.add(slot);
      this.#armWatchdog();
      running.then(
        () => this.#settle(slot),
        () => this.#settle(slot),
      );
    });
  }

  #settle(slot: Slot): void {
    if (this.#slots.delete(slot)) slot.release();
  }

  #armWatchdog(): void {
    if (this.#watchdog !== undefined) return;
    const oldest = this.#slots.values().next().value;
    if (oldest === undefined) return;
    const dueInMs = oldest.startedAt + this.#maxSlotHoldMs - this.#clock.now();
    this.#watchdog = this.#clock.setTimeout(() => {
      this.#watchdog = undefined;
      const now = this.#clock.now();
      for (const slot of this.#slots) {
        if (now - slot.startedAt < this.#maxSlotHoldMs) break;
        this.#slots.delete(slot);
        slot.release();
        this.#onSlotReleased(slot.uid);
      }
      this.#armWatchdog();
    }, dueInMs);
    // A pending watchdog must not keep the process alive on its own.
    this.#watchdog.unref();
  }
}

function noop(): void {}
