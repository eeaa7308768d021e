/**
 * Test doubles: {@link FakeEventSink}, an in-memory sink that stores and patches Events like
 * the API server and fails on demand.
 *
 * @module
 */
import type { CoreEvent } from './event.js';
import { type EventSink, EventSinkError } from './sink.js';

/** One call the fake sink received. */
export interface SinkCall {
  /** `create` or `patch`. */
  readonly verb: 'create' | 'patch';
  /** `<namespace>/<name>` of the Event. */
  readonly key: string;
  /** The patch, for `patch`. */
  readonly patch?: Readonly<Record<string, unknown>>;
  /** Whether the call failed (by an injected failure or a missing Event). */
  readonly failed: boolean;
}

/** An in-memory {@link EventSink}: events by namespace/name, strategic patches of top-level fields. */
export class FakeEventSink implements EventSink {
  /** Stored events by `<namespace>/<name>`. */
  readonly events = new Map<string, CoreEvent>();
  /** Every call, in order. */
  readonly calls: SinkCall[] = [];
  readonly #failures: (() => Error)[] = [];
  #rv = 0;

  /** Makes the next `count` calls fail with `make()` (e.g. `new EventSinkError(500, 'InternalError', '…')`). */
  failNext(count: number, make: () => Error): void {
    for (let i = 0; i < count; i++) this.#failures.push(make);
  }

  /** Stored events, oldest first. */
  list(): CoreEvent[] {
    return [...this.events.values()];
  }

  async create(event: CoreEvent): Promise<CoreEvent> {
    const key = `${event.metadata.namespace ?? ''}/${event.metadata.name ?? ''}`;
    const fail = this.#failures.shift();
    if (fail !== undefined || this.events.has(key)) {
      this.calls.push({ verb: 'create', key, failed: true });
      throw (
        fail?.() ?? new EventSinkError(409, 'AlreadyExists', `events "${event.metadata.name}" already exists`)
      );
    }
    const stored = structuredClone({
      ...event,
      metadata: { ...event.metadata, resourceVersion: String(++this.#rv) },
    });
    this.events.set(key, stored);
    this.calls.push({ verb: 'create', key, failed: false });
    return structuredClone(stored);
  }

  async patch(event: CoreEvent, patch: Readonly<Record<string, unknown>>): Promise<CoreEvent> {
    const key = `${event.metadata.namespace ?? ''}/${event.metadata.name ?? ''}`;
    const fail = this.#failures.shift();
    const existing = this.events.get(key);
    if (fail !== undefined || existing === undefined) {
      this.calls.push({ verb: 'patch', key, patch, failed: true });
      throw fail?.() ?? new EventSinkError(404, 'NotFound', `events "${event.metadata.name}" not found`);
    }
    const stored: CoreEvent = {
      ...existing,
      ...structuredClone(patch),
      metadata: { ...existing.metadata, resourceVersion: String(++this.#rv) },
    };
    this.events.set(key, stored);
    this.calls.push({ verb: 'patch', key, patch, failed: false });
    return structuredClone(stored);
  }
}
