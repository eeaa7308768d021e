/**
 * Drives an informer on a FakeClock against a real (loopback) server: waits in real time
 * until the traffic settles, then jumps the clock to the next timer (a backoff, an idle
 * timeout), recording the fake time of every request. Request rates measured this way are
 * in informer time and deterministic with a fixed random source.
 */
import type { FakeClock } from '@nodeagent/core/testing';

/** FakeClock's default start; recorded times are relative to it. */
export const T0 = 1_700_000_000_000;

/** What the driver watches. */
export interface Driven {
  readonly clock: FakeClock;
  /** How many requests the server has seen so far. */
  requestCount(): number;
  /** While true, the clock is not advanced (e.g. a connection the server is about to cut). */
  busy?(): boolean;
  /**
   * The fake time (relative to {@link T0}) at which the server received each request, when
   * the server records it: exact even when the machine is slow. Otherwise the driver
   * records the time at which it noticed each request.
   */
  requestTimes?(): number[];
}

/** Waits in real time until no new request arrived for `quietMs` milliseconds. */
export async function settle(d: Driven, quietMs = 25): Promise<void> {
  let seen = -1;
  while (seen !== d.requestCount() || d.busy?.()) {
    seen = d.requestCount();
    await new Promise((r) => setTimeout(r, quietMs));
  }
}

/**
 * Runs until fake time `untilMs` (relative to {@link T0}), jumping from timer to timer;
 * appends the fake time of every new request to `at`. `onStep` runs after every settle
 * (e.g. to check convergence).
 */
export async function driveUntil(
  d: Driven,
  untilMs: number,
  at: number[],
  onStep?: () => boolean | undefined,
): Promise<void> {
  const endMs = T0 + untilMs;
  let recorded = at.length;
  const record = (): void => {
    while (recorded < d.requestCount()) {
      at.push(d.clock.now() - T0);
      recorded++;
    }
  };
  let idleRounds = 0;
  while (d.clock.now() < endMs) {
    await settle(d);
    record();
    if (onStep?.()) return;
    const due = d.clock.nextDueAt();
    if (due === undefined && ++idleRounds < 100) continue; // a request still in flight
    idleRounds = 0;
    await d.clock.advanceTo(due === undefined ? endMs : Math.min(due, endMs));
  }
  await settle(d);
  record();
  if (d.requestTimes) at.splice(0, at.length, ...d.requestTimes());
}

/** How many of `times` fall in [from, to). */
export const inWindow = (times: readonly number[], from: number, to: number): number =>
  times.filter((t) => t >= from && t < to).length;
