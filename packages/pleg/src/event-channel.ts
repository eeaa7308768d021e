/**
 * The bounded PLEG event buffer (upstream: a Go channel of capacity `plegChannelCapacity`
 * shared by the generic and evented PLEG). Sends never block: when the buffer is full the
 * event is dropped and counted.
 *
 * @module
 */
import { abortReason } from '@nodeagent/core';
import type { PodLifecycleEvent } from './events.js';

/** The kubelet's `plegChannelCapacity`. */
export const DEFAULT_PLEG_CHANNEL_CAPACITY = 1000;

interface Waiter {
  readonly resolve: (event: PodLifecycleEvent) => void;
  readonly reject: (error: Error) => void;
}

/**
 * A bounded, non-blocking-send event buffer with any number of receivers, each event going to
 * exactly one receiver (channel semantics). Receivers waiting when an event is sent take it
 * directly, so a buffer with an active consumer stays empty.
 *
 * @example
 * ```ts
 * const channel = new PlegEventChannel(1000);
 * channel.send({ id: uid, type: 'ContainerStarted', data: containerId });
 * for await (const event of channel.receiveAll(signal)) console.log(event.type);
 * ```
 */
export class PlegEventChannel {
  /** Maximum number of buffered events. */
  readonly capacity: number;
  private readonly buffer: PodLifecycleEvent[] = [];
  private head = 0;
  private readonly waiters: Waiter[] = [];
  private droppedCount = 0;

  /** @param capacity maximum buffered events (minimum 1). @default 1000 */
  constructor(capacity = DEFAULT_PLEG_CHANNEL_CAPACITY) {
    if (!Number.isInteger(capacity) || capacity < 1) {
      throw new RangeError(`PlegEventChannel: capacity must be an integer >= 1, got ${capacity}`);
    }
    this.capacity = capacity;
  }

  /** Number of events buffered and not yet received. */
  get length(): number {
    return this.buffer.length - this.head;
  }

  /** Number of events dropped because the buffer was full. */
  get dropped(): number {
    return this.droppedCount;
  }

  /** True when the next send would be dropped. */
  get full(): boolean {
    return this.length >= this.capacity;
  }

  /**
   * Delivers to a waiting receiver, else buffers; when the buffer is full, drops the event.
   * @returns false when the event was dropped.
   */
  send(event: PodLifecycleEvent): boolean {
    const waiter = this.waiters.shift();
    if (waiter !== undefined) {
      waiter.resolve(event);
      return true;
    }
    if (this.full) {
      this.droppedCount++;
      return false;
    }
    this.buffer.push(event);
    return true;
  }

  /** Takes the next buffered event without waiting, or `undefined`. */
  tryReceive(): PodLifecycleEvent | undefined {
    if (this.length === 0) return undefined;
    const event = this.buffer[this.head] as PodLifecycleEvent;
    this.head++;
    // Compact now and then so the array does not grow without bound.
    if (this.head >= 1024 && this.head * 2 >= this.buffer.length) {
      this.buffer.splice(0, this.head);
      this.head = 0;
    }
    return event;
  }

  /** Waits for the next event. Rejects with the signal's reason when it aborts. */
  receive(signal?: AbortSignal): Promise<PodLifecycleEvent> {
    const ready = this.tryReceive();
    if (ready !== undefined) return Promise.resolve(ready);
    if (signal?.aborted) return Promise.reject(abortReason(signal));
    return new Promise<PodLifecycleEvent>((resolve, reject) => {
      const onAbort = (): void => {
        const index = this.waiters.indexOf(waiter);
        if (index >= 0) this.waiters.splice(index, 1);
        reject(abortReason(signal as AbortSignal));
      };
      const waiter: Waiter = {
        resolve: (event) => {
          signal?.removeEventListener('abort', onAbort);
          resolve(event);
        },
        reject,
      };
      this.waiters.push(waiter);
      signal?.addEventListener('abort', onAbort, { once: true });
    });
  }

  /** Yields events as they come until `signal` aborts (then ends without an error). */
  async *receiveAll(signal?: AbortSignal): AsyncGenerator<PodLifecycleEvent, void, undefined> {
    for (;;) {
      if (signal?.aborted) return;
      let event: PodLifecycleEvent;
      try {
        event = await this.receive(signal);
      } catch (error) {
        if (signal?.aborted) return;
        throw error;
      }
      yield event;
    }
  }
}
