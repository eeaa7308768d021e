/**
 * Test doubles for code that uses `@nodeagent/informer`: an in-memory
 * {@link FakeListerWatcher} whose state, events and failures the test controls.
 *
 * @example
 * ```ts
 * import { FakeListerWatcher } from '@nodeagent/informer/testing';
 * import { SharedInformer } from '@nodeagent/informer';
 *
 * const lw = new FakeListerWatcher();
 * lw.upsert({ metadata: { name: 'a', namespace: 'default' } });
 * const informer = new SharedInformer(lw);
 * await informer.start();
 * lw.upsert({ metadata: { name: 'b', namespace: 'default' } }); // delivered to open watches
 * ```
 *
 * @packageDocumentation
 */
import { Channel, definedFields } from '@nodeagent/core';
import { StatusError } from './errors.js';
import { objectKey } from './keys.js';
import type { ActivityCallback, ListerWatcher } from './lister-watcher.js';
import type { KubeObject, ListOptions, ObjectList, WatchEvent, WatchOptions } from './types.js';

/**
 * An in-memory ListerWatcher. Lists serve the current state (paginated by offset when
 * `limit` is set); watches receive the changes made after they opened. It does not keep
 * a history: a watch from an old resource version gets no replay.
 */
export class FakeListerWatcher<T extends KubeObject = KubeObject> implements ListerWatcher<T> {
  /** Every list call's options, in order. */
  readonly listCalls: ListOptions[] = [];
  /** Every watch call's options, in order. */
  readonly watchCalls: WatchOptions[] = [];
  readonly #objects = new Map<string, T>();
  readonly #watches = new Set<Channel<WatchEvent<T>>>();
  readonly #listFailures: Error[] = [];
  readonly #watchFailures: Error[] = [];
  #rv = 1;

  /** The current resource version. */
  get resourceVersion(): string {
    return String(this.#rv);
  }

  /** Number of open watches. */
  get openWatches(): number {
    return this.#watches.size;
  }

  /** Creates or replaces an object (stamping a new resourceVersion) and notifies watches. */
  upsert(obj: T): T {
    const key = objectKey(obj);
    const stamped = { ...obj, metadata: { ...obj.metadata, resourceVersion: String(++this.#rv) } } as T;
    const existed = this.#objects.has(key);
    this.#objects.set(key, stamped);
    this.sendEvent({ type: existed ? 'MODIFIED' : 'ADDED', object: stamped });
    return stamped;
  }

  /** Deletes an object by key and notifies watches (or silently, to simulate a missed event). */
  remove(key: string, options: { readonly silent?: boolean } = {}): void {
    const obj = this.#objects.get(key);
    if (!obj) return;
    this.#objects.delete(key);
    const stamped = { ...obj, metadata: { ...obj.metadata, resourceVersion: String(++this.#rv) } } as T;
    if (!options.silent) this.sendEvent({ type: 'DELETED', object: stamped });
  }

  /** Sends a BOOKMARK at the current resource version. */
  bookmark(): void {
    this.sendEvent({
      type: 'BOOKMARK',
      object: { metadata: { resourceVersion: this.resourceVersion } } as unknown as T,
    });
  }

  /** Sends an in-stream ERROR event with a Status (e.g. 410 Expired) to every open watch. */
  sendError(code: number, reason: string): void {
    this.sendEvent({
      type: 'ERROR',
      object: { kind: 'Status', code, reason, message: reason } as unknown as T,
    });
  }

  /** Ends every open watch, cleanly or with `error`. */
  closeWatches(error?: Error): void {
    for (const w of this.#watches) {
      if (error) w.fail(error);
      else w.close();
    }
    this.#watches.clear();
  }

  /** Makes the next list call reject with `error` (queue several for several calls). */
  failNextList(error: Error = new StatusError(500, { reason: 'InternalError', code: 500 })): void {
    this.#listFailures.push(error);
  }

  /** Makes the next watch call reject with `error`. */
  failNextWatch(error: Error = new StatusError(500, { reason: 'InternalError', code: 500 })): void {
    this.#watchFailures.push(error);
  }

  async list(options: ListOptions, signal: AbortSignal): Promise<ObjectList<T>> {
    signal.throwIfAborted();
    this.listCalls.push(options);
    const failure = this.#listFailures.shift();
    if (failure) throw failure;
    const all = [...this.#objects.values()];
    const offset = options.continue ? Number(options.continue) : 0;
    const end = options.limit ? Math.min(all.length, offset + options.limit) : all.length;
    const cont = end < all.length ? String(end) : undefined;
    return {
      metadata: { resourceVersion: this.resourceVersion, ...definedFields({ continue: cont }) },
      items: all.slice(offset, end),
    };
  }

  async watch(
    options: WatchOptions,
    signal: AbortSignal,
    onActivity?: ActivityCallback,
  ): Promise<AsyncIterable<WatchEvent<T>>> {
    signal.throwIfAborted();
    this.watchCalls.push(options);
    const failure = this.#watchFailures.shift();
    if (failure) throw failure;
    const channel = new Channel<WatchEvent<T>>();
    this.#watches.add(channel);
    signal.addEventListener(
      'abort',
      () => {
        this.#watches.delete(channel);
        channel.fail(signal.reason instanceof Error ? signal.reason : new Error('aborted'));
      },
      { once: true },
    );
    const watches = this.#watches;
    return {
      async *[Symbol.asyncIterator]() {
        try {
          for await (const event of channel) {
            onActivity?.();
            yield event;
          }
        } finally {
          watches.delete(channel);
        }
      },
    };
  }

  /**
   * Sends `event` as is to every open watch, without touching the state: e.g. an object
   * without a name, or an event the server never sent for a real change.
   */
  sendEvent(event: WatchEvent<T>): void {
    for (const w of this.#watches) w.send(event);
  }
}
