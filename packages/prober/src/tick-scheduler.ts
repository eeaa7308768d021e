/**
 * One timer for all of a manager's probe workers: a min-heap of due times and a single
 * {@link Clock} timer armed for the earliest. A worker's tick costs a heap move and no
 * allocation; with a timer per worker and per tick (thousands a second), every timer object
 * lives a whole period, outlives young-generation garbage collection and is promoted, so the
 * old generation — and the length of its collections' pauses — grows with the number of
 * workers.
 *
 * Semantics are a timer per entry's: an entry fires once at or after its due time, entries
 * due at the same instant fire in the order they were scheduled, and an entry scheduled while
 * others fire (for an instant already reached) fires in a later turn, as a new timer would.
 *
 * @module
 */
import type { Clock, Logger, Timer } from '@nodeagent/core';

/** Something the scheduler fires (one per worker, kept for its life). @internal */
export abstract class TickEntry {
  /** When it is due (clock ms); meaningful while scheduled. */
  dueMs = 0;
  /** Scheduling order, for ties. */
  seq = 0;
  /** Position in the heap; -1 when not scheduled. */
  heapIndex = -1;

  /** Called once when due (it may schedule itself again). */
  abstract fire(): void;
}

/** A single-timer scheduler of {@link TickEntry}s on `clock`. @internal */
export class TickScheduler {
  readonly #clock: Clock;
  readonly #logger: Logger;
  readonly #heap: TickEntry[] = [];
  #nextSeq = 0;
  #timer: Timer | undefined;
  /** The due time the timer is armed for. */
  #armedFor = 0;
  #firing = false;
  readonly #onTimer = (): void => this.#fireDue();

  constructor(clock: Clock, logger: Logger) {
    this.#clock = clock;
    this.#logger = logger;
  }

  /** Number of scheduled entries. */
  get size(): number {
    return this.#heap.length;
  }

  /** Schedules `entry` at `dueMs` (moves it when already scheduled). */
  schedule(entry: TickEntry, dueMs: number): void {
    entry.dueMs = dueMs;
    entry.seq = this.#nextSeq++;
    if (entry.heapIndex >= 0 && this.#heap[entry.heapIndex] === entry) {
      if (!this.#down(entry.heapIndex)) this.#up(entry.heapIndex);
    } else {
      entry.heapIndex = this.#heap.length;
      this.#heap.push(entry);
      this.#up(entry.heapIndex);
    }
    if (!this.#firing) this.#arm();
  }

  /** Unschedules `entry` (a no-op when it is not scheduled). */
  cancel(entry: TickEntry): void {
    const i = entry.heapIndex;
    if (i < 0 || this.#heap[i] !== entry) return;
    this.#removeAt(i);
    // A timer armed for an entry that went away fires, finds nothing due and re-arms; only an
    // empty heap cancels it, so nothing stays pending.
    if (this.#heap.length === 0 && !this.#firing) this.#disarm();
  }

  #fireDue(): void {
    this.#timer = undefined;
    this.#firing = true;
    // The timer fires for the entry it was armed for even when the clock reads a little
    // earlier (Node arms timers from its cached loop time): that entry is due.
    const now = Math.max(this.#clock.now(), this.#armedFor);
    // Entries scheduled from here on (for an instant already reached) wait for the next turn.
    const lastSeq = this.#nextSeq;
    try {
      for (;;) {
        const top = this.#heap[0];
        if (top === undefined || top.dueMs > now || top.seq >= lastSeq) break;
        this.#removeAt(0);
        try {
          top.fire();
        } catch (error) {
          this.#logger.error({ err: error }, 'probe worker tick failed');
        }
      }
    } finally {
      this.#firing = false;
      this.#arm();
    }
  }

  #arm(): void {
    const top = this.#heap[0];
    if (top === undefined) {
      this.#disarm();
      return;
    }
    if (this.#timer !== undefined && this.#armedFor <= top.dueMs) {
      // Armed for this instant or earlier: that firing re-arms for the rest.
      return;
    }
    this.#timer?.cancel();
    this.#armedFor = top.dueMs;
    this.#timer = this.#clock.setTimeout(this.#onTimer, top.dueMs - this.#clock.now());
  }

  #disarm(): void {
    this.#timer?.cancel();
    this.#timer = undefined;
  }

  #less(a: TickEntry, b: TickEntry): boolean {
    return a.dueMs < b.dueMs || (a.dueMs === b.dueMs && a.seq < b.seq);
  }

  #removeAt(i: number): void {
    const heap = this.#heap;
    const removed = heap[i] as TickEntry;
    const last = heap.pop() as TickEntry;
    removed.heapIndex = -1;
    if (i < heap.length) {
      heap[i] = last;
      last.heapIndex = i;
      if (!this.#down(i)) this.#up(i);
    }
  }

  #up(i: number): void {
    const heap = this.#heap;
    const entry = heap[i] as TickEntry;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      const p = heap[parent] as TickEntry;
      if (!this.#less(entry, p)) break;
      heap[i] = p;
      p.heapIndex = i;
      i = parent;
    }
    heap[i] = entry;
    entry.heapIndex = i;
  }

  /** Moves the entry at `i` down; returns whether it moved. */
  #down(i: number): boolean {
    const heap = this.#heap;
    const n = heap.length;
    const entry = heap[i] as TickEntry;
    const start = i;
    for (;;) {
      const l = 2 * i + 1;
      if (l >= n) break;
      const r = l + 1;
      const child = r < n && this.#less(heap[r] as TickEntry, heap[l] as TickEntry) ? r : l;
      const c = heap[child] as TickEntry;
      if (!this.#less(c, entry)) break;
      heap[i] = c;
      c.heapIndex = i;
      i = child;
    }
    heap[i] = entry;
    entry.heapIndex = i;
    return i !== start;
  }
}
