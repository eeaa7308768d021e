/**
 * Test doubles for code that uses `@nodeagent/proxier`: a conntrack cleaner that records the
 * filters it is given instead of running `conntrack`.
 *
 * @example
 * ```ts
 * import { FakeConntrackCleaner } from '@nodeagent/proxier/testing';
 *
 * const conntrack = new FakeConntrackCleaner();
 * const proxier = new Proxier({ ...options, conntrack });
 * // after a sync in which a UDP service gained its first endpoint:
 * conntrack.cleared; // [{ kind: 'ip', family: 4, ip: '172.30.0.10' }, …]
 * ```
 *
 * @packageDocumentation
 */
import type { ConntrackCleaner, ConntrackFilter } from './conntrack.js';

/** Records every filter; optionally fails the next call. */
export class FakeConntrackCleaner implements ConntrackCleaner {
  /** Every filter passed to {@link clear}, in order (also those of failed calls). */
  readonly cleared: ConntrackFilter[] = [];
  /** Number of {@link clear} calls. */
  calls = 0;
  /** When set, the next {@link clear} rejects with it (then it is cleared). */
  failNext: Error | undefined;

  /** @inheritdoc */
  async clear(filters: readonly ConntrackFilter[]): Promise<void> {
    this.calls++;
    this.cleared.push(...filters);
    const e = this.failNext;
    this.failNext = undefined;
    if (e) throw e;
  }
}
