/**
 * A binary min-heap whose entries remember their position, so an entry can be removed or
 * re-positioned after its priority changes in O(log n). Backs the fake clock's timers and
 * the work queue's delayed adds.
 *
 * @internal
 * @module
 */

/** An entry that carries its own slot in the heap (-1 when not in a heap). */
export interface HeapEntry {
  heapIndex: number;
}

/** @internal */
export class IndexedHeap<T extends HeapEntry> {
  private readonly items: T[] = [];

  /** `less(a, b)` is true when `a` must come out before `b`. */
  constructor(private readonly less: (a: T, b: T) => boolean) {}

  get size(): number {
    return this.items.length;
  }

  peek(): T | undefined {
    return this.items[0];
  }

  push(entry: T): void {
    entry.heapIndex = this.items.length;
    this.items.push(entry);
    this.up(entry.heapIndex);
  }

  pop(): T | undefined {
    const top = this.items[0];
    if (top !== undefined) this.removeAt(0);
    return top;
  }

  /** Removes `entry` if it is in this heap; returns whether it was. */
  remove(entry: T): boolean {
    const i = entry.heapIndex;
    if (i < 0 || this.items[i] !== entry) return false;
    this.removeAt(i);
    return true;
  }

  /** Restores heap order after `entry`'s priority changed. */
  update(entry: T): void {
    const i = entry.heapIndex;
    if (i < 0 || this.items[i] !== entry) return;
    if (!this.down(i)) this.up(i);
  }

  clear(): void {
    for (const e of this.items) e.heapIndex = -1;
    this.items.length = 0;
  }

  values(): readonly T[] {
    return this.items;
  }

  private removeAt(i: number): void {
    const removed = this.items[i] as T;
    const last = this.items.pop() as T;
    removed.heapIndex = -1;
    if (i < this.items.length) {
      this.items[i] = last;
      last.heapIndex = i;
      if (!this.down(i)) this.up(i);
    }
  }

  private up(i: number): void {
    const items = this.items;
    const entry = items[i] as T;
    while (i > 0) {
      const parentIndex = (i - 1) >> 1;
      const parent = items[parentIndex] as T;
      if (!this.less(entry, parent)) break;
      items[i] = parent;
      parent.heapIndex = i;
      i = parentIndex;
    }
    items[i] = entry;
    entry.heapIndex = i;
  }

  /** Sifts down; returns whether the entry moved. */
  private down(start: number): boolean {
    const items = this.items;
    const n = items.length;
    const entry = items[start] as T;
    let i = start;
    for (;;) {
      const left = 2 * i + 1;
      if (left >= n) break;
      const right = left + 1;
      let child = left;
      if (right < n && this.less(items[right] as T, items[left] as T)) child = right;
      const c = items[child] as T;
      if (!this.less(c, entry)) break;
      items[i] = c;
      c.heapIndex = i;
      i = child;
    }
    items[i] = entry;
    entry.heapIndex = i;
    return i !== start;
  }
}
