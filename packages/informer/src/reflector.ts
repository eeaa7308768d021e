/**
 * The reflector keeps a store in step with the API server: list (paginated), then watch
 * from the list's resource version, forever, with client-go's rules for resource
 * versions, 410 Expired, bookmarks, timeouts, stalled streams and backoff.
 *
 * @module
 */
import { Backoff, type BackoffOptions, type Clock, definedFields, type Logger } from '@nodeagent/core';
import { StatusError, WatchDecodeError, WatchIdleTimeoutError } from './errors.js';
import type { ListerWatcher } from './lister-watcher.js';
import type { InformerMetrics, RelistReason, WatchRestartReason } from './metrics.js';
import {
  INITIAL_EVENTS_END_ANNOTATION,
  type KubeObject,
  type Selectors,
  type Status,
  type WatchEvent,
} from './types.js';

/** Where the reflector writes what it learns. */
export interface ReflectorSink<T extends KubeObject> {
  /** The full state after a (re)list, with its resource version. */
  replace(items: readonly T[], resourceVersion: string): void;
  /**
   * An ADDED watch event. A returned promise holds the watch: the next event is not read
   * until it settles (back-pressure, e.g. a handler's `maxPending`).
   */
  add(obj: T): void | Promise<void>;
  /** A MODIFIED watch event (a returned promise holds the watch, as for {@link add}). */
  update(obj: T): void | Promise<void>;
  /** A DELETED watch event (a returned promise holds the watch, as for {@link add}). */
  delete(obj: T): void | Promise<void>;
}

/** Context passed to a {@link WatchErrorHandler}. */
export interface WatchErrorContext {
  /** `list` for list (or streaming-list) failures, `watch` for watch failures. */
  readonly phase: 'list' | 'watch';
  /** True when the next attempt lists again (410, failed list), false when it only rewatches. */
  readonly willRelist: boolean;
}

/** Called with every list/watch failure (client-go's `WatchErrorHandler`). */
export type WatchErrorHandler = (error: Error, context: WatchErrorContext) => void;

/** Options of the reflector's protocol. All are optional. */
export interface ReflectorOptions {
  /**
   * Page size of list requests (`limit`); 0 lists without pagination.
   * @default 500
   */
  readonly pageSize?: number;
  /**
   * `resourceVersion` of the first list: `'0'` (served from the watch cache, cheap) or
   * `''` (consistent read from etcd). After a 410 the reflector always lists with `''`.
   * @default '0'
   */
  readonly initialListResourceVersion?: '0' | '';
  /**
   * Use a streaming list (`sendInitialEvents=true`) instead of list+watch, falling back to
   * list+watch when the server does not support it.
   * @default false
   */
  readonly useWatchList?: boolean;
  /**
   * Stall detection: abort and restart a watch that delivered nothing (no event, no
   * bookmark, no byte) for this long, in ms. The reflector always asks for bookmarks
   * (`allowWatchBookmarks=true`), which kube-apiserver sends about once a minute on a quiet
   * watch, so the default is 1.5 × that interval. 0 disables.
   * @default 90_000
   */
  readonly idleTimeoutMs?: number;
  /**
   * Server-side watch timeouts are random in [min, 2×min] seconds, to spread reconnects.
   * @default 300
   */
  readonly minWatchTimeoutSeconds?: number;
  /**
   * Backoff between failed attempts. It starts over (the next retry is a short probe) as
   * soon as a watch proves healthy: it delivered an event or bookmark, or stayed open for
   * at least {@link HEALTHY_WATCH_MS}. See the package README ("Recovery and back-off").
   * @default `{ initialMs: 400, factor: 2, capMs: 30_000, jitter: 0.5, resetAfterMs: 120_000 }`
   */
  readonly backoff?: BackoffOptions;
  /** Random source in [0, 1) for timeouts and backoff jitter. @default Math.random */
  readonly random?: () => number;
}

/** Dependencies of a {@link Reflector}. */
export interface ReflectorDeps<T extends KubeObject> extends ReflectorOptions {
  readonly listerWatcher: ListerWatcher<T>;
  readonly sink: ReflectorSink<T>;
  readonly selectors?: Selectors;
  readonly clock: Clock;
  readonly logger: Logger;
  readonly metrics: InformerMetrics;
  readonly watchErrorHandler?: WatchErrorHandler;
  /** Reports objects that cannot be stored (e.g. no `metadata.name`); they are skipped. */
  readonly onBadObject?: (error: Error, obj: unknown) => void;
}

/** The default reflector backoff; see {@link ReflectorOptions.backoff}. */
export const DEFAULT_REFLECTOR_BACKOFF: Readonly<Required<Omit<BackoffOptions, 'clock' | 'random'>>> = {
  initialMs: 400,
  factor: 2,
  capMs: 30_000,
  jitter: 0.5,
  resetAfterMs: 120_000,
};

/** The default stall-detection timeout: 1.5 × kube-apiserver's one-minute bookmark interval. */
export const DEFAULT_IDLE_TIMEOUT_MS = 90_000;

/**
 * A watch open at least this long (or one that delivered an event or bookmark) proves the
 * server healthy and resets the backoff; a shorter one without any event is a failure
 * (client-go's "very short watch" threshold).
 */
export const HEALTHY_WATCH_MS = 1000;

/** A watch ended cleanly; `events` counts what it delivered. */
interface WatchOutcome {
  readonly events: number;
}

/** Raised internally when the streaming list is not usable. */
class WatchListFallback extends Error {}

/** Runs the list/watch loop; see {@link Reflector.run}. */
export class Reflector<T extends KubeObject> {
  readonly #deps: ReflectorDeps<T>;
  readonly #backoff: Backoff;
  readonly #random: () => number;
  readonly #pageSize: number;
  readonly #idleTimeoutMs: number;
  #lastRV = '';
  /** After a 410 the last RV may not be served any more: list with '' (consistent read). */
  #rvUnavailable = false;
  #watchListUnsupported = false;
  /** 410s in a row without a healthy watch in between: only the first relists at once. */
  #expiredStreak = 0;
  /** After a streaming-list fallback, the next cycle uses a plain list. */
  #listOnce = false;
  #phase: 'list' | 'watch' = 'list';

  constructor(deps: ReflectorDeps<T>) {
    this.#deps = deps;
    this.#random = deps.random ?? Math.random;
    this.#backoff = new Backoff({
      ...DEFAULT_REFLECTOR_BACKOFF,
      clock: deps.clock,
      random: this.#random,
      ...deps.backoff,
    });
    this.#pageSize = deps.pageSize ?? 500;
    this.#idleTimeoutMs = deps.idleTimeoutMs ?? DEFAULT_IDLE_TIMEOUT_MS;
  }

  /** The resource version of the last list, event or bookmark. */
  get lastSyncResourceVersion(): string {
    return this.#lastRV;
  }

  /** Lists and watches until `signal` aborts. Never rejects for API or network failures. */
  async run(signal: AbortSignal): Promise<void> {
    let needList = true;
    let reason: RelistReason = 'initial';
    while (!signal.aborted) {
      this.#phase = needList ? 'list' : 'watch';
      try {
        if (needList) {
          this.#deps.metrics.relist(reason);
          if (this.#deps.useWatchList && !this.#watchListUnsupported && !this.#listOnce) {
            const outcome = await this.#watchList(signal, reason);
            needList = false;
            this.#afterWatch(outcome);
            continue;
          }
          this.#listOnce = false;
          await this.#list(signal);
          needList = false;
        }
        this.#phase = 'watch';
        const outcome = await this.#watchOnce(signal);
        this.#afterWatch(outcome);
      } catch (raw) {
        if (signal.aborted) break;
        const err = raw instanceof Error ? raw : new Error(String(raw));
        const phase = this.#phase;
        if (err instanceof WatchListFallback) {
          reason = 'watch-list-fallback';
          this.#listOnce = true;
          continue;
        }
        const expired = err instanceof StatusError && err.isExpired;
        if (expired) {
          this.#rvUnavailable = true;
          needList = true;
          reason = 'expired';
        } else if (phase === 'list') {
          reason = 'error';
        } else {
          needList = false;
        }
        if (phase === 'watch') this.#deps.metrics.watchRestart(restartReason(err));
        this.#report(err, { phase, willRelist: needList });
        // A 410 is a reason to relist now, not a failure: whatever failed before it. Only a
        // second 410 with no healthy watch in between (a server that expires every watch at
        // once) is backed off, so it cannot drive a hot relist loop.
        if (expired && this.#expiredStreak++ === 0) continue;
        try {
          await this.#backoff.sleep(signal);
        } catch {
          break;
        }
      }
    }
  }

  #afterWatch(_outcome: WatchOutcome): void {
    this.#deps.metrics.watchRestart('closed');
  }

  /** A watch proved the server healthy: the next failure starts the backoff over. */
  #healthy(): void {
    this.#backoff.reset();
    this.#expiredStreak = 0;
  }

  #report(err: Error, context: WatchErrorContext): void {
    this.#deps.logger.warn(
      { err, phase: context.phase, willRelist: context.willRelist, resourceVersion: this.#lastRV },
      context.phase === 'list'
        ? 'list failed; retrying with backoff'
        : 'watch ended with an error; restarting',
    );
    try {
      this.#deps.watchErrorHandler?.(err, context);
    } catch (hookErr) {
      this.#deps.logger.error({ err: hookErr }, 'watchErrorHandler threw');
    }
  }

  #listResourceVersion(): string {
    if (this.#rvUnavailable) return '';
    return this.#lastRV !== '' ? this.#lastRV : (this.#deps.initialListResourceVersion ?? '0');
  }

  /** Lists every page, then replaces the store. */
  async #list(signal: AbortSignal): Promise<void> {
    const { listerWatcher, clock, metrics } = this.#deps;
    const started = clock.now();
    const rv = this.#listResourceVersion();
    const items: T[] = [];
    let limit = this.#pageSize;
    let cont: string | undefined;
    let listRV = '';
    try {
      for (;;) {
        let page: Awaited<ReturnType<ListerWatcher<T>['list']>>;
        try {
          page = await listerWatcher.list(
            {
              ...this.#deps.selectors,
              ...(cont === undefined ? { resourceVersion: rv } : { continue: cont }),
              ...definedFields({ limit: limit > 0 ? limit : undefined }),
            },
            signal,
          );
        } catch (err) {
          if (cont !== undefined && err instanceof StatusError && err.isExpired) {
            // The continue token expired mid-list: start over with one unpaginated list.
            this.#deps.logger.info(
              { resourceVersion: rv },
              'continue token expired; relisting without pagination',
            );
            metrics.relist('continue-expired');
            items.length = 0;
            cont = undefined;
            limit = 0;
            continue;
          }
          throw err;
        }
        for (const item of page.items) items.push(item);
        listRV = page.metadata?.resourceVersion ?? listRV;
        cont = page.metadata?.continue || undefined;
        if (cont === undefined) break;
      }
    } catch (err) {
      metrics.observeList((clock.now() - started) / 1000, false);
      throw err;
    }
    metrics.observeList((clock.now() - started) / 1000, true);
    this.#deps.sink.replace(items, listRV);
    this.#setRV(listRV);
    this.#rvUnavailable = false;
    this.#deps.logger.debug({ items: items.length, resourceVersion: listRV }, 'listed');
  }

  #setRV(rv: string | undefined): void {
    if (!rv) return;
    this.#lastRV = rv;
    this.#deps.metrics.lastResourceVersion(rv);
  }

  #watchTimeoutSeconds(): number {
    const min = this.#deps.minWatchTimeoutSeconds ?? 300;
    return Math.floor(min * (1 + this.#random()));
  }

  /** Streaming list: initial state as events up to the initial-events-end bookmark, then watch. */
  async #watchList(signal: AbortSignal, reason: RelistReason): Promise<WatchOutcome> {
    const initial = new Map<string, T>();
    let done = false;
    let events = 0;
    const started = this.#deps.clock.now();
    try {
      const outcome = await this.#stream(
        signal,
        {
          sendInitialEvents: true,
          resourceVersionMatch: 'NotOlderThan',
          resourceVersion: this.#rvUnavailable || reason === 'initial' ? '' : this.#lastRV,
        },
        (event) => {
          if (done) return this.#handleEvent(event);
          const obj = event.object;
          if (event.type === 'ERROR') throw errorFromStatus(obj as Status);
          if (event.type === 'BOOKMARK') {
            if (obj.metadata?.annotations?.[INITIAL_EVENTS_END_ANNOTATION] === 'true') {
              done = true;
              const rv = obj.metadata?.resourceVersion ?? '';
              this.#deps.metrics.observeList((this.#deps.clock.now() - started) / 1000, true);
              this.#deps.sink.replace([...initial.values()], rv);
              this.#setRV(rv);
              this.#rvUnavailable = false;
              this.#phase = 'watch';
            }
            return;
          }
          events++;
          const key = `${obj.metadata?.namespace ?? ''}/${obj.metadata?.name ?? ''}`;
          if (event.type === 'DELETED') initial.delete(key);
          else initial.set(key, obj);
        },
      );
      if (!done) throw new Error('watch closed before the initial-events-end bookmark');
      return outcome;
    } catch (err) {
      if (done || signal.aborted) throw err;
      this.#deps.metrics.observeList((this.#deps.clock.now() - started) / 1000, false);
      const e = err instanceof Error ? err : new Error(String(err));
      // A 4xx means the server does not support streaming lists; not 410/429 (transient) nor
      // 401/403 (credentials, e.g. mid token rotation), which list+watch would get too.
      if (
        e instanceof StatusError &&
        e.code >= 400 &&
        e.code < 500 &&
        ![401, 403, 410, 429].includes(e.code)
      ) {
        this.#watchListUnsupported = true;
      }
      this.#deps.logger.warn(
        { err: e, initialEvents: events, permanent: this.#watchListUnsupported },
        'streaming list failed; falling back to list+watch',
      );
      throw new WatchListFallback(e.message, { cause: e });
    }
  }

  #watchOnce(signal: AbortSignal): Promise<WatchOutcome> {
    return this.#stream(signal, { resourceVersion: this.#lastRV }, (event) => this.#handleEvent(event));
  }

  /** Opens one watch and feeds its events to `onEvent`; enforces the idle timeout. */
  async #stream(
    signal: AbortSignal,
    extra: { resourceVersion: string; sendInitialEvents?: boolean; resourceVersionMatch?: string },
    onEvent: (event: WatchEvent<T>) => void | Promise<void>,
  ): Promise<WatchOutcome> {
    const { clock, metrics } = this.#deps;
    // An abort during the list that preceded this watch has already fired its event.
    signal.throwIfAborted();
    const controller = new AbortController();
    const onAbort = (): void => controller.abort(signal.reason);
    signal.addEventListener('abort', onAbort, { once: true });
    const started = clock.now();
    let lastActivity = started;
    let idleTimer: { cancel(): void } | undefined;
    /** True while a sink holds the watch (back-pressure): silence is then ours, not a stall. */
    let held = false;
    const touch = (): void => {
      lastActivity = clock.now();
    };
    const armIdle = (delayMs: number): void => {
      idleTimer = clock.setTimeout(() => {
        const idleFor = clock.now() - lastActivity;
        if (held) armIdle(this.#idleTimeoutMs);
        else if (idleFor >= this.#idleTimeoutMs)
          controller.abort(new WatchIdleTimeoutError(this.#idleTimeoutMs));
        else armIdle(this.#idleTimeoutMs - idleFor);
      }, delayMs);
      (idleTimer as { unref?: () => unknown }).unref?.();
    };
    if (this.#idleTimeoutMs > 0) armIdle(this.#idleTimeoutMs);
    let events = 0;
    /** Events other than ERROR: proof that the watch works. */
    let good = 0;
    let establishedAt: number | undefined;
    try {
      const stream = await this.#deps.listerWatcher.watch(
        {
          ...this.#deps.selectors,
          ...extra,
          allowWatchBookmarks: true,
          timeoutSeconds: this.#watchTimeoutSeconds(),
        },
        controller.signal,
        touch,
      );
      establishedAt = clock.now();
      for await (const event of stream) {
        touch();
        events++;
        if (event.type !== 'ERROR') good++;
        metrics.event(event.type);
        const pending = onEvent(event);
        if (pending !== undefined) {
          held = true;
          try {
            await pending;
          } finally {
            held = false;
            touch();
          }
        }
      }
    } catch (err) {
      const reason: unknown = controller.signal.reason;
      if (!signal.aborted && reason instanceof WatchIdleTimeoutError) throw reason;
      throw err;
    } finally {
      idleTimer?.cancel();
      signal.removeEventListener('abort', onAbort);
      controller.abort();
      metrics.observeWatch((clock.now() - started) / 1000);
      if (good > 0 || (establishedAt !== undefined && clock.now() - establishedAt >= HEALTHY_WATCH_MS))
        this.#healthy();
    }
    // A watch that closes at once without a single event is treated as a failure (client-go's
    // "very short watch"), so a misbehaving server cannot drive a hot reconnect loop.
    if (events === 0 && clock.now() - started < HEALTHY_WATCH_MS) {
      throw new ShortWatchError(`watch closed after ${clock.now() - started} ms without any event`);
    }
    return { events };
  }

  #handleEvent(event: WatchEvent<T>): void | Promise<void> {
    const obj = event.object;
    switch (event.type) {
      case 'ERROR':
        throw errorFromStatus(obj as Status);
      case 'BOOKMARK':
        this.#setRV(obj.metadata?.resourceVersion);
        return;
      default:
        break;
    }
    let held: Promise<void> | undefined;
    try {
      const r =
        event.type === 'ADDED'
          ? this.#deps.sink.add(obj)
          : event.type === 'MODIFIED'
            ? this.#deps.sink.update(obj)
            : this.#deps.sink.delete(obj);
      if (r instanceof Promise) held = r;
    } catch (err) {
      this.#deps.onBadObject?.(err instanceof Error ? err : new Error(String(err)), obj);
    }
    this.#setRV(obj.metadata?.resourceVersion);
    return held;
  }
}

/** A watch closed immediately without delivering anything. */
export class ShortWatchError extends Error {
  override readonly name = 'ShortWatchError';
}

function errorFromStatus(status: Status): StatusError {
  return new StatusError(typeof status.code === 'number' ? status.code : 500, status, 'watch ERROR event');
}

function restartReason(err: Error): WatchRestartReason {
  if (err instanceof StatusError && err.isExpired) return 'expired';
  if (err instanceof WatchIdleTimeoutError) return 'idle';
  if (err instanceof WatchDecodeError) return 'decode';
  if (err instanceof ShortWatchError) return 'short';
  return 'error';
}
