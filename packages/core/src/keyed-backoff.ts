/**
 * Per-key exponential backoff on an injected clock (upstream `flowcontrol.Backoff` as the
 * kubelet configures it): used for CrashLoopBackOff (10 s → 5 min, reset after 10 min) and
 * ImagePullBackOff (10 s → 5 min). No jitter, like the kubelet.
 *
 * @module
 */
import { type Clock, realClock } from './clock.js';
import { InvalidOptionsError } from './options-error.js';

/** Options of {@link KeyedBackoff}. All durations in milliseconds. */
export interface KeyedBackoffOptions {
  /** First delay after a failure. Minimum: 1. @default 10_000 */
  readonly initialMs?: number;
  /** Largest delay. @default 300_000 */
  readonly maxMs?: number;
  /**
   * An entry whose last bump is older than this (measured from the event time) starts over
   * at `initialMs`: the container ran this long before failing again.
   * @default 2 × maxMs (the library default; the kubelet's container backoff uses 600_000)
   */
  readonly resetAfterMs?: number;
  /** @default realClock */
  readonly clock?: Clock;
}

interface Entry {
  backoffMs: number;
  lastUpdateMs: number;
}

/**
 * Per-key exponential backoff. `next(key, eventTimeMs)` records a failure; `isInBackOffSince`
 * says whether a retry must still wait.
 *
 * @example
 * ```ts
 * const backoff = new KeyedBackoff({ initialMs: 10_000, maxMs: 300_000, resetAfterMs: 600_000 });
 * if (!backoff.isInBackOffSince(key, finishedAtMs)) { backoff.next(key, finishedAtMs); restart(); }
 * ```
 */
export class KeyedBackoff {
  /** First delay, ms. */
  readonly initialMs: number;
  /** Cap, ms. */
  readonly maxMs: number;
  /** Reset window, ms. */
  readonly resetAfterMs: number;
  private readonly clock: Clock;
  private readonly entries = new Map<string, Entry>();

  constructor(options: KeyedBackoffOptions = {}) {
    this.initialMs = options.initialMs ?? 10_000;
    this.maxMs = options.maxMs ?? 300_000;
    this.resetAfterMs = options.resetAfterMs ?? 2 * this.maxMs;
    this.clock = options.clock ?? realClock;
    if (!(this.initialMs >= 1) || !(this.maxMs >= this.initialMs) || !(this.resetAfterMs >= 0)) {
      throw new InvalidOptionsError(
        'KeyedBackoff',
        `backoff needs 1 <= initialMs <= maxMs and resetAfterMs >= 0, got initialMs=${this.initialMs} maxMs=${this.maxMs} resetAfterMs=${this.resetAfterMs}`,
      );
    }
  }

  /** The current delay of `key`, ms (0 when unknown). */
  get(key: string): number {
    return this.entries.get(key)?.backoffMs ?? 0;
  }

  /** Records a failure of `key` that happened at `eventTimeMs`: doubles the delay (capped) or starts over. */
  next(key: string, eventTimeMs: number): void {
    const entry = this.entries.get(key);
    const now = this.clock.now();
    if (entry === undefined || this.hasExpired(eventTimeMs, entry.lastUpdateMs)) {
      this.entries.set(key, { backoffMs: this.initialMs, lastUpdateMs: now });
      return;
    }
    entry.backoffMs = Math.min(entry.backoffMs * 2, this.maxMs);
    entry.lastUpdateMs = now;
  }

  /** Whether less than the current delay has passed since `eventTimeMs` (upstream `IsInBackOffSince`). */
  isInBackOffSince(key: string, eventTimeMs: number): boolean {
    const entry = this.entries.get(key);
    if (entry === undefined || this.hasExpired(eventTimeMs, entry.lastUpdateMs)) return false;
    return this.clock.now() - eventTimeMs < entry.backoffMs;
  }

  /** Whether less than the current delay has passed since the last failure (upstream `IsInBackOffSinceUpdate`). */
  isInBackOffSinceUpdate(key: string): boolean {
    const entry = this.entries.get(key);
    const now = this.clock.now();
    if (entry === undefined || this.hasExpired(now, entry.lastUpdateMs)) return false;
    return now - entry.lastUpdateMs < entry.backoffMs;
  }

  /** Forgets `key`. */
  reset(key: string): void {
    this.entries.delete(key);
  }

  /** Drops entries not bumped for longer than the reset window (upstream `GC`). */
  gc(): void {
    const now = this.clock.now();
    for (const [key, entry] of this.entries) {
      if (now - entry.lastUpdateMs > this.resetAfterMs) this.entries.delete(key);
    }
  }

  /** Number of keys tracked. */
  get size(): number {
    return this.entries.size;
  }

  private hasExpired(eventTimeMs: number, lastUpdateMs: number): boolean {
    return eventTimeMs - lastUpdateMs > this.resetAfterMs;
  }
}
