/**
 * One open watch: replays history or the current state, then streams live events as JSON
 * lines over a chunked response, filtered by namespace and selectors the way the real
 * watch cache filters (an object leaving the selection is sent as DELETED), with optional
 * bookmarks and a server-side timeout.
 *
 * @module
 * @internal
 */
import type { ServerResponse } from 'node:http';
import type { Clock, Timer } from '@nodeagent/core';
import type { StatusBody } from './errors.js';
import type { FieldSelector } from './fields.js';
import type { LabelSelector } from './labels.js';
import type { ResourceType } from './resources.js';
import type { EventSink, ResourceTable, Snapshot, StoreEntry, StoreEvent } from './table.js';

/** How a watch starts. */
export type WatchStart =
  /** Events after this resourceVersion (from history). */
  | { readonly kind: 'from'; readonly rv: number }
  /** Synthetic ADDED for the current state, optionally ended by the initial-events-end bookmark. */
  | { readonly kind: 'state'; readonly endBookmark: boolean };

/** Settings of one watch. */
export interface WatchStreamOptions {
  readonly res: ServerResponse;
  readonly type: ResourceType;
  readonly table: ResourceTable;
  readonly namespace: string | undefined;
  readonly labels: LabelSelector;
  readonly fields: FieldSelector;
  readonly bookmarks: boolean;
  readonly bookmarkIntervalMs: number;
  /** Server closes the watch cleanly after this many seconds; 0 = never. */
  readonly timeoutSeconds: number;
  readonly clock: Clock;
  readonly currentRv: () => number;
  readonly onClose: (w: WatchStream) => void;
  /** Live events that may wait for a blocked client before the watch is closed; 0 = unbounded. */
  readonly maxBufferedEvents: number;
  /** The same bound in bytes; 0 = unbounded. */
  readonly maxBufferedBytes: number;
  /** Called when the watch is closed because its buffer overflowed. */
  readonly onOverflow: () => void;
  /** Rewrites each event's object JSON (e.g. into a one-row Table); bookmarks are not rewritten. */
  readonly transform?: ((json: string) => string) | undefined;
}

const FLUSH_BYTES = 256 * 1024;

/** An open watch connection. */
export class WatchStream implements EventSink {
  #queue: string[] = [];
  #head = 0;
  #scheduled = false;
  #blocked = false;
  #closed = false;
  #stalledFlag = false;
  readonly #timers: Timer[] = [];
  /** Whether the initial replay is done: only later (live) events count against the bound. */
  #live = false;
  /** Entries of the initial replay still queued (always at the head of the queue). */
  #initialLeft = 0;
  /** Bytes of queued live events. */
  #liveBytes = 0;

  readonly #o: WatchStreamOptions;
  constructor(o: WatchStreamOptions) {
    this.#o = o;
  }

  #line(type: string, json: string): string {
    return line(type, this.#o.transform ? this.#o.transform(json) : json);
  }

  /** Whether the watch was stalled by a fault (it sends nothing more). */
  get stalled(): boolean {
    return this.#stalledFlag;
  }

  /** Sends headers, the initial events, and subscribes to live events. */
  start(start: WatchStart, snapshot: Snapshot | undefined, history: readonly StoreEvent[] | undefined): void {
    const { res } = this.#o;
    res.writeHead(200, {
      'Content-Type': 'application/json',
      'Transfer-Encoding': 'chunked',
      'Cache-Control': 'no-cache, private',
    });
    res.flushHeaders();
    res.on('close', () => this.#closeQuietly());
    if (start.kind === 'state') {
      for (const e of snapshot ?? []) if (this.#matches(e)) this.#enqueue(this.#line('ADDED', e.json));
      if (start.endBookmark) this.#enqueue(this.#bookmarkLine(true));
    } else {
      for (const ev of history ?? []) this.onEvent(ev);
    }
    // The real server replays initial events outside the watcher's buffer: only what
    // arrives from now on can overflow it.
    this.#initialLeft = this.#queue.length - this.#head;
    this.#live = true;
    this.#o.table.sinks.add(this);
    if (this.#o.bookmarks && this.#o.bookmarkIntervalMs > 0) {
      this.#timers.push(
        this.#o.clock.setInterval(() => this.#enqueue(this.#bookmarkLine(false)), this.#o.bookmarkIntervalMs),
      );
    }
    if (this.#o.timeoutSeconds > 0) {
      this.#timers.push(this.#o.clock.setTimeout(() => this.end(), this.#o.timeoutSeconds * 1000));
    }
  }

  /** Sends an in-stream ERROR event with a Status and closes (e.g. 410 for a too-old RV). */
  fail(status: StatusBody): void {
    if (!this.#o.res.headersSent) {
      this.#o.res.writeHead(200, { 'Content-Type': 'application/json', 'Transfer-Encoding': 'chunked' });
    }
    this.#stalledFlag = false;
    this.#enqueue(`{"type":"ERROR","object":${JSON.stringify(status)}}\n`);
    this.#flush();
    this.end();
  }

  /** Receives a committed event and forwards it if it concerns this watcher. */
  onEvent(ev: StoreEvent): void {
    const { namespace } = this.#o;
    if (namespace !== undefined && ev.entry.namespace !== namespace) return;
    const prevOk = ev.prev !== undefined && this.#matches(ev.prev);
    if (ev.type === 'DELETED') {
      if (prevOk) this.#enqueue(this.#line('DELETED', ev.entry.json));
      return;
    }
    const curOk = this.#matches(ev.entry);
    if (curOk) this.#enqueue(this.#line(prevOk || ev.type === 'ADDED' ? ev.type : 'ADDED', ev.entry.json));
    else if (prevOk) this.#enqueue(this.#line('DELETED', withRv((ev.prev as StoreEntry).json, ev.rv)));
  }

  /** Stops sending anything while keeping the connection open (fault injection). */
  stall(): void {
    this.#stalledFlag = true;
    this.#queue = [];
    this.#head = 0;
    this.#initialLeft = 0;
    this.#liveBytes = 0;
  }

  /** Destroys the socket abruptly (fault injection). */
  drop(): void {
    this.#closeQuietly();
    this.#o.res.socket?.destroy();
    this.#o.res.destroy();
  }

  /** Ends the response cleanly (timeout, shutdown). */
  end(): void {
    if (this.#closed) return;
    this.#flush();
    this.#closeQuietly();
    this.#o.res.end();
  }

  #matches(e: StoreEntry): boolean {
    return this.#o.labels.matches(e.labels) && this.#o.fields.matches(e.fields);
  }

  #bookmarkLine(initialEnd: boolean): string {
    const meta = initialEnd
      ? `{"resourceVersion":"${this.#o.currentRv()}","annotations":{"k8s.io/initial-events-end":"true"}}`
      : `{"resourceVersion":"${this.#o.currentRv()}"}`;
    return `{"type":"BOOKMARK","object":{"kind":"${this.#o.type.kind}","apiVersion":"${this.#o.type.apiVersion}","metadata":${meta}}}\n`;
  }

  #enqueue(s: string): void {
    if (this.#closed || this.#stalledFlag) return;
    this.#queue.push(s);
    if (this.#live) {
      this.#liveBytes += s.length;
      // Only a client that stopped reading (the socket is full) is a slow consumer; a burst
      // of synchronous writes to the store is queued until the next flush.
      if (this.#blocked && this.#overflowing()) {
        this.#overflow();
        return;
      }
    }
    if (!this.#scheduled && !this.#blocked) {
      this.#scheduled = true;
      setImmediate(() => this.#flush());
    }
  }

  #flush(): void {
    this.#scheduled = false;
    const { res } = this.#o;
    while (!this.#closed && !this.#blocked && this.#head < this.#queue.length) {
      let size = 0;
      const start = this.#head;
      while (this.#head < this.#queue.length && size < FLUSH_BYTES) {
        const n = (this.#queue[this.#head] as string).length;
        size += n;
        if (this.#initialLeft > 0) this.#initialLeft--;
        else this.#liveBytes -= n;
        this.#head++;
      }
      const chunk =
        start + 1 === this.#head
          ? (this.#queue[start] as string)
          : this.#queue.slice(start, this.#head).join('');
      if (!res.write(chunk)) {
        this.#blocked = true;
        res.once('drain', () => {
          this.#blocked = false;
          this.#flush();
        });
      }
    }
    if (this.#head >= this.#queue.length) {
      this.#queue = [];
      this.#head = 0;
    } else if (this.#head > 4096) {
      this.#queue = this.#queue.slice(this.#head);
      this.#head = 0;
    }
  }

  #overflowing(): boolean {
    const { maxBufferedEvents: maxEvents, maxBufferedBytes: maxBytes } = this.#o;
    return (
      (maxEvents > 0 && this.#queue.length - this.#head - this.#initialLeft > maxEvents) ||
      (maxBytes > 0 && this.#liveBytes > maxBytes)
    );
  }

  /** Closes the watch cleanly, dropping what the client could not take; it re-watches from its last RV. */
  #overflow(): void {
    this.#queue = [];
    this.#head = 0;
    this.#initialLeft = 0;
    this.#liveBytes = 0;
    this.#closeQuietly();
    this.#o.onOverflow();
    this.#o.res.end();
  }

  #closeQuietly(): void {
    if (this.#closed) return;
    this.#closed = true;
    this.#o.table.sinks.delete(this);
    for (const t of this.#timers) t.cancel();
    this.#o.onClose(this);
  }
}

function line(type: string, json: string): string {
  return `{"type":"${type}","object":${json}}\n`;
}

/** The previous object content with the event's resourceVersion, as the watch cache sends it. */
function withRv(json: string, rv: number): string {
  const obj = JSON.parse(json) as { metadata?: { resourceVersion?: string } };
  if (obj.metadata) obj.metadata.resourceVersion = String(rv);
  return JSON.stringify(obj);
}
