/**
 * A push-to-pull queue: producers `push` values, one consumer iterates them. Used by the
 * fake ListerWatcher to stand in for a watch stream.
 *
 * @module
 */

/** An async iterable fed by `push`, ended by `close` (or failed by `fail`). */
export class EventChannel<V> implements AsyncIterable<V> {
  private readonly values: V[] = [];
  private waiting: ((r: IteratorResult<V>) => void) | undefined;
  private failWaiting: ((err: Error) => void) | undefined;
  private done = false;
  private error: Error | undefined;

  /** True after `close` or `fail`. */
  get closed(): boolean {
    return this.done;
  }

  /** Queues a value for the consumer. Ignored after close. */
  push(value: V): void {
    if (this.done) return;
    if (this.waiting) {
      const w = this.waiting;
      this.clearWaiting();
      w({ value, done: false });
    } else this.values.push(value);
  }

  /** Ends iteration cleanly after the queued values. */
  close(): void {
    if (this.done) return;
    this.done = true;
    if (this.waiting && this.values.length === 0) {
      const w = this.waiting;
      this.clearWaiting();
      w({ value: undefined, done: true });
    }
  }

  /** Ends iteration with `err` after the queued values. */
  fail(err: Error): void {
    if (this.done) return;
    this.done = true;
    this.error = err;
    if (this.failWaiting && this.values.length === 0) {
      const f = this.failWaiting;
      this.clearWaiting();
      f(err);
    }
  }

  [Symbol.asyncIterator](): AsyncIterator<V> {
    return {
      next: () => {
        if (this.values.length > 0) return Promise.resolve({ value: this.values.shift() as V, done: false });
        if (this.done)
          return this.error ? Promise.reject(this.error) : Promise.resolve({ value: undefined, done: true });
        return new Promise<IteratorResult<V>>((resolve, reject) => {
          this.waiting = resolve;
          this.failWaiting = reject;
        });
      },
      return: () => {
        this.close();
        return Promise.resolve({ value: undefined, done: true });
      },
    };
  }

  private clearWaiting(): void {
    this.waiting = undefined;
    this.failWaiting = undefined;
  }
}
