/**
 * The delaying part of the work queue (client-go's `delaying_queue.go`): keys waiting for
 * their ready time in a heap, one clock timer armed for the earliest, and earliest-wins when
 * a key is added again while it waits.
 *
 * @internal
 * @module
 */
import type { Clock, Timer } from '../clock.js';
import { type HeapEntry, IndexedHeap } from './indexed-heap.js';

interface Waiting<K> extends HeapEntry {
  readonly key: K;
  readyAt: number;
  /** Breaks ties between keys ready at the same instant: the earlier call goes first. */
  seq: number;
}

/** @internal */
export class WaitingAdds<K> {
  private readonly byKey = new Map<K, Waiting<K>>();
  private readonly heap = new IndexedHeap<Waiting<K>>(
    (a, b) => a.readyAt < b.readyAt || (a.readyAt === b.readyAt && a.seq < b.seq),
  );
  private nextSeq = 0;
  private timer: Timer | undefined;
  private timerAt = 0;

  constructor(
    private readonly clock: Clock,
    private readonly onReady: (key: K) => void,
  ) {}

  get size(): number {
    return this.heap.size;
  }

  /** Schedules `key` at `now + delayMs`; a key already waiting keeps the earlier time. */
  addAfter(key: K, delayMs: number): void {
    const readyAt = this.clock.now() + delayMs;
    const existing = this.byKey.get(key);
    if (existing) {
      if (readyAt >= existing.readyAt) return;
      existing.readyAt = readyAt;
      this.heap.update(existing);
    } else {
      const entry: Waiting<K> = { key, readyAt, seq: this.nextSeq++, heapIndex: -1 };
      this.byKey.set(key, entry);
      this.heap.push(entry);
    }
    this.arm();
  }

  /** Drops every waiting key and the timer. */
  clear(): void {
    this.timer?.cancel();
    this.timer = undefined;
    this.heap.clear();
    this.byKey.clear();
  }

  private arm(): void {
    const top = this.heap.peek();
    if (top === undefined) return;
    if (this.timer !== undefined) {
      if (this.timerAt <= top.readyAt) return;
      this.timer.cancel();
    }
    this.timerAt = top.readyAt;
    this.timer = this.clock.setTimeout(() => this.fire(), top.readyAt - this.clock.now());
  }

  private fire(): void {
    this.timer = undefined;
    const now = this.clock.now();
    for (let top = this.heap.peek(); top !== undefined && top.readyAt <= now; top = this.heap.peek()) {
      this.heap.pop();
      this.byKey.delete(top.key);
      this.onReady(top.key);
    }
    // A real timer can fire a hair early by the wall clock; arming again covers that too.
    this.arm();
  }
}
