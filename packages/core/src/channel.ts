/**
 * The one async channel of the project: producers `send` without ever blocking, consumers
 * `receive` (or iterate), each value going to exactly one receiver. Optionally bounded, in
 * which case a send to a full channel drops the value and counts it (the PLEG's event
 * channel); unbounded by default (a fake watch stream).
 *
 * @module
 */
import { abortReason } from './clock.js';
import { InvalidOptionsError } from './options-error.js';

/** Options of {@link Channel}. */
export interface ChannelOptions {
  /**
   * Most values buffered and not yet received; a send beyond it is dropped and counted in
   * {@link Channel.dropped}. Minimum: 1.
   * @default Infinity (unbounded)
   */
  readonly capacity?: number;
}

interface Waiter<T> {
  readonly resolve: (result: IteratorResult<T, undefined>) => void;
  readonly reject: (error: Error) => void;
}

/** Thrown by {@link Channel.receive} when the channel closed and drained. */
export class ChannelClosedError extends Error {
  override readonly name = 'ChannelClosedError';
  constructor() {
    super('channel closed');
  }
}

/**
 * A non-blocking-send channel with any number of receivers. Values queued before
 * {@link Channel.close} are still delivered; after the last one, iteration ends (or throws
 * the error given to {@link Channel.fail}).
 *
 * @example
 * ```ts
 * const events = new Channel<string>({ capacity: 1000 });
 * events.send('ContainerStarted');
 * events.close();
 * for await (const event of events) console.log(event);
 * ```
 */
export class Channel<T> implements AsyncIterable<T> {
  /** Most buffered values. */
  readonly capacity: number;
  #buffer: T[] = [];
  #head = 0;
  readonly #waiters: Waiter<T>[] = [];
  #dropped = 0;
  #closed = false;
  #error: Error | undefined;

  constructor(options: ChannelOptions = {}) {
    const capacity = options.capacity ?? Number.POSITIVE_INFINITY;
    if (!(capacity === Number.POSITIVE_INFINITY || (Number.isInteger(capacity) && capacity >= 1))) {
      throw new InvalidOptionsError('Channel', `capacity must be an integer >= 1, got ${capacity}`);
    }
    this.capacity = capacity;
  }

  /** Values buffered and not yet received. */
  get length(): number {
    return this.#buffer.length - this.#head;
  }

  /** Values dropped because the channel was full. */
  get dropped(): number {
    return this.#dropped;
  }

  /** True when the next send would be dropped. */
  get full(): boolean {
    return this.length >= this.capacity;
  }

  /** True after {@link Channel.close} or {@link Channel.fail}. */
  get closed(): boolean {
    return this.#closed;
  }

  /**
   * Hands `value` to a waiting receiver, else buffers it.
   * @returns false when it was dropped (channel full or closed).
   */
  send(value: T): boolean {
    if (this.#closed) return false;
    const waiter = this.#waiters.shift();
    if (waiter !== undefined) {
      waiter.resolve({ value, done: false });
      return true;
    }
    if (this.full) {
      this.#dropped++;
      return false;
    }
    this.#buffer.push(value);
    return true;
  }

  /** Ends the channel once the buffered values are received. Idempotent. */
  close(): void {
    this.#end(undefined);
  }

  /** Ends the channel with `error`, thrown to receivers once the buffered values are received. */
  fail(error: Error): void {
    this.#end(error);
  }

  /** The next buffered value without waiting, or `undefined` when none is buffered. */
  tryReceive(): T | undefined {
    if (this.length === 0) return undefined;
    const value = this.#buffer[this.#head] as T;
    this.#buffer[this.#head] = undefined as T;
    this.#head++;
    // Compact now and then so the array does not grow without bound.
    if (this.#head >= 1024 && this.#head * 2 >= this.#buffer.length) {
      this.#buffer = this.#buffer.slice(this.#head);
      this.#head = 0;
    }
    return value;
  }

  /**
   * Waits for the next value. Rejects with the signal's reason when `signal` aborts, with
   * {@link ChannelClosedError} when the channel closed and drained, or with the error given
   * to {@link Channel.fail}.
   */
  async receive(signal?: AbortSignal): Promise<T> {
    const result = await this.#next(signal);
    if (result.done) throw new ChannelClosedError();
    return result.value;
  }

  /** Yields values until the channel ends or `signal` aborts (then ends without an error). */
  async *receiveAll(signal?: AbortSignal): AsyncGenerator<T, void, undefined> {
    for (;;) {
      if (signal?.aborted) return;
      let result: IteratorResult<T, undefined>;
      try {
        result = await this.#next(signal);
      } catch (error) {
        if (signal?.aborted) return;
        throw error;
      }
      if (result.done) return;
      yield result.value;
    }
  }

  /** Iterates until the channel ends; breaking out of the loop closes the channel. */
  [Symbol.asyncIterator](): AsyncIterator<T, undefined> {
    return {
      next: () => this.#next(undefined),
      return: () => {
        this.close();
        return Promise.resolve({ value: undefined, done: true });
      },
    };
  }

  #next(signal: AbortSignal | undefined): Promise<IteratorResult<T, undefined>> {
    if (this.length > 0) return Promise.resolve({ value: this.tryReceive() as T, done: false });
    if (this.#closed) {
      return this.#error === undefined
        ? Promise.resolve({ value: undefined, done: true })
        : Promise.reject(this.#error);
    }
    if (signal?.aborted) return Promise.reject(abortReason(signal));
    return new Promise((resolve, reject) => {
      const onAbort = (): void => {
        const index = this.#waiters.indexOf(waiter);
        if (index >= 0) this.#waiters.splice(index, 1);
        reject(abortReason(signal as AbortSignal));
      };
      const waiter: Waiter<T> = {
        resolve: (result) => {
          signal?.removeEventListener('abort', onAbort);
          resolve(result);
        },
        reject: (error) => {
          signal?.removeEventListener('abort', onAbort);
          reject(error);
        },
      };
      this.#waiters.push(waiter);
      signal?.addEventListener('abort', onAbort, { once: true });
    });
  }

  #end(error: Error | undefined): void {
    if (this.#closed) return;
    this.#closed = true;
    this.#error = error;
    // Waiters exist only while the buffer is empty: wake them all with the end.
    for (const waiter of this.#waiters.splice(0)) {
      if (error === undefined) waiter.resolve({ value: undefined, done: true });
      else waiter.reject(error);
    }
  }
}
