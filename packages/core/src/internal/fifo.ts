/**
 * A first-in first-out queue with O(1) amortised push and shift (Array#shift is O(n)).
 *
 * @internal
 * @module
 */

/** @internal */
export class Fifo<T> {
  private items: (T | undefined)[] = [];
  private head = 0;

  get length(): number {
    return this.items.length - this.head;
  }

  push(item: T): void {
    this.items.push(item);
  }

  shift(): T | undefined {
    if (this.head >= this.items.length) return undefined;
    const item = this.items[this.head];
    this.items[this.head] = undefined; // let it be collected
    this.head++;
    // Compact once the consumed prefix dominates, keeping memory proportional to length.
    if (this.head >= 1024 && this.head * 2 >= this.items.length) {
      this.items = this.items.slice(this.head);
      this.head = 0;
    }
    return item;
  }
}
