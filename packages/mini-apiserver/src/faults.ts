/**
 * Fault injection for tests: abrupt watch drops, forced 410s, failing requests, latency
 * and stalled watches.
 *
 * @module
 */
import { failureStatus, type StatusBody } from './errors.js';

/** Which requests a {@link Faults.failNext} rule applies to. */
export interface FailureRule {
  /** HTTP status code to answer with, e.g. 500, 503, 429, 410. */
  readonly code: number;
  /**
   * `reason` of the Status body.
   * @default 'InternalError' for 5xx, 'Expired' for 410, 'TooManyRequests' for 429, else 'BadRequest'
   */
  readonly reason?: string;
  /** `message` of the Status body. @default 'injected fault' */
  readonly message?: string;
  /** Only requests with this HTTP method (upper case). */
  readonly method?: string;
  /** Only requests whose path (without query) starts with this string or matches this RegExp. */
  readonly path?: string | RegExp;
  /** Only watch requests (`true`) or only non-watch requests (`false`). */
  readonly watch?: boolean;
}

/** A request as faults see it. */
export interface FaultRequest {
  readonly method: string;
  readonly path: string;
  readonly watch: boolean;
}

/** What the server does with the open watches when a fault is triggered. */
export interface WatchControl {
  /** Cuts every open watch connection abruptly; returns how many. */
  dropWatches(): number;
  /** Ends every open watch with an in-stream 410 Expired `ERROR` event; returns how many. */
  expireWatches(): number;
  /** Stops writing to every open watch (connections stay open); returns how many. */
  stallWatches(): number;
  /** Compacts the history, so older resource versions answer 410. */
  compact(): void;
}

interface ArmedRule {
  remaining: number;
  readonly rule: FailureRule;
}

/** Which requests a {@link Faults.dropNext} rule applies to, and when the connection is cut. */
export interface DropRule extends Pick<FailureRule, 'method' | 'path' | 'watch'> {
  /**
   * `'before'`: cut the connection without handling the request; `'after'`: handle it (a
   * create is stored) and cut the connection instead of answering, so the client cannot
   * know whether it landed.
   * @default 'before'
   */
  readonly when?: 'before' | 'after';
}

function matches(r: Pick<FailureRule, 'method' | 'path' | 'watch'>, req: FaultRequest): boolean {
  if (r.method !== undefined && r.method.toUpperCase() !== req.method) return false;
  if (r.watch !== undefined && r.watch !== req.watch) return false;
  if (r.path !== undefined) {
    return typeof r.path === 'string' ? req.path.startsWith(r.path) : r.path.test(req.path);
  }
  return true;
}

function defaultReason(code: number): string {
  if (code === 410) return 'Expired';
  if (code === 429) return 'TooManyRequests';
  if (code === 401) return 'Unauthorized';
  if (code === 403) return 'Forbidden';
  if (code === 404) return 'NotFound';
  if (code === 409) return 'Conflict';
  if (code === 503) return 'ServiceUnavailable';
  if (code === 504) return 'Timeout';
  if (code >= 500) return 'InternalError';
  return 'BadRequest';
}

/** The fault controls of a running server (`server.faults`). */
export class Faults {
  #rules: ArmedRule[] = [];
  #drops: { remaining: number; readonly rule: DropRule }[] = [];
  #stallNew = 0;
  /** Extra delay before every request is handled, in milliseconds (0 = none). */
  latencyMs = 0;

  /** @internal */
  readonly #watches: WatchControl;
  constructor(watches: WatchControl) {
    this.#watches = watches;
  }

  /** Destroys the sockets of every open watch (clients see an abrupt disconnect). Returns how many. */
  dropWatches(): number {
    return this.#watches.dropWatches();
  }

  /**
   * Compacts the watch history now: a watch or continue token from any earlier
   * resourceVersion gets 410 Expired. Open watches are not touched.
   */
  compact(): void {
    this.#watches.compact();
  }

  /**
   * Compacts history and ends every open watch with an in-stream `ERROR` 410 Expired event,
   * as the real server does when a watcher falls out of the window. Returns how many.
   */
  expireWatches(): number {
    this.#watches.compact();
    return this.#watches.expireWatches();
  }

  /** Stalls every open watch: the connection stays open and nothing more is sent. Returns how many. */
  stallWatches(): number {
    return this.#watches.stallWatches();
  }

  /** Stalls the next `count` watches as soon as they are opened (headers sent, then silence). */
  stallNextWatches(count = 1): void {
    this.#stallNew += count;
  }

  /** Fails the next `count` matching requests with `rule.code` and a Status body. */
  failNext(count: number, rule: FailureRule): void {
    if (count > 0) this.#rules.push({ remaining: count, rule });
  }

  /**
   * Cuts the connection of the next `count` matching requests (the client sees a reset
   * socket), before or after handling them.
   */
  dropNext(count: number, rule: DropRule = {}): void {
    if (count > 0) this.#drops.push({ remaining: count, rule });
  }

  /** Removes pending failure and drop rules, stall requests and latency. */
  clear(): void {
    this.#rules = [];
    this.#drops = [];
    this.#stallNew = 0;
    this.latencyMs = 0;
  }

  /** @internal Consumes a failure rule matching the request; returns its Status. */
  takeFailure(req: FaultRequest): StatusBody | undefined {
    for (const armed of this.#rules) {
      const r = armed.rule;
      if (!matches(r, req)) continue;
      armed.remaining--;
      if (armed.remaining <= 0) this.#rules = this.#rules.filter((x) => x !== armed);
      return failureStatus(r.code, r.reason ?? defaultReason(r.code), r.message ?? 'injected fault');
    }
    return undefined;
  }

  /** @internal Consumes a drop rule matching the request; returns when to cut the connection. */
  takeDrop(req: FaultRequest): 'before' | 'after' | undefined {
    for (const armed of this.#drops) {
      if (!matches(armed.rule, req)) continue;
      armed.remaining--;
      if (armed.remaining <= 0) this.#drops = this.#drops.filter((x) => x !== armed);
      return armed.rule.when ?? 'before';
    }
    return undefined;
  }

  /** @internal Whether a newly opened watch must be stalled. */
  takeStall(): boolean {
    if (this.#stallNew <= 0) return false;
    this.#stallNew--;
    return true;
  }
}
