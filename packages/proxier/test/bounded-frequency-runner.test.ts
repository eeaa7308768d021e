import { InvalidOptionsError } from '@nodeagent/core';
import { FakeClock } from '@nodeagent/core/testing';
import { afterEach, describe, expect, it } from 'vitest';
import { BoundedFrequencyRunner } from '../src/index.js';

const T0 = 1_700_000_000_000;

interface Harness {
  clock: FakeClock;
  runner: BoundedFrequencyRunner;
  /** Start times of runs, relative to T0. */
  starts: number[];
  ends: number[];
  maxConcurrent: () => number;
  fail: (n: number) => void;
}

const runners: BoundedFrequencyRunner[] = [];
afterEach(() => {
  // Not awaited: a run may be sleeping on a fake clock nobody advances any more.
  for (const r of runners.splice(0)) void r.stop();
});

/** A runner whose fn takes `workMs` of fake time and fails the next `n` times when told. */
function harness(minMs: number, retryMs: number, maxMs: number, workMs = 0): Harness {
  const clock = new FakeClock({ startMs: T0 });
  const starts: number[] = [];
  const ends: number[] = [];
  let active = 0;
  let peak = 0;
  let failures = 0;
  const runner = new BoundedFrequencyRunner({
    name: 'test',
    fn: async () => {
      starts.push(clock.now() - T0);
      active++;
      peak = Math.max(peak, active);
      if (workMs > 0) await clock.sleep(workMs);
      active--;
      ends.push(clock.now() - T0);
      if (failures > 0) {
        failures--;
        throw new Error('injected');
      }
    },
    minIntervalMs: minMs,
    retryIntervalMs: retryMs,
    maxIntervalMs: maxMs,
    clock,
  });
  runners.push(runner);
  return { clock, runner, starts, ends, maxConcurrent: () => peak, fail: (n) => (failures = n) };
}

const flush = () => new Promise<void>((r) => setImmediate(r));

describe('BoundedFrequencyRunner', () => {
  it('does nothing before start; a run() made before start is served at start', async () => {
    const h = harness(1000, 5000, 60_000);
    h.runner.run();
    await h.clock.advance(10_000);
    expect(h.starts).toEqual([]);
    h.runner.start();
    await h.clock.advance(0);
    expect(h.starts).toEqual([10_000]);
  });

  it('runs at once on the first run() after start', async () => {
    const h = harness(1000, 5000, 60_000);
    h.runner.start();
    await h.clock.advance(250);
    h.runner.run();
    await flush();
    expect(h.starts).toEqual([250]);
  });

  it('counts minInterval from the END of a run, not its start', async () => {
    // Work takes 800 ms; a run() arrives during the run: the next start is end + 1000.
    const h = harness(1000, 5000, 60_000, 800);
    h.runner.start();
    h.runner.run();
    await h.clock.advance(100);
    h.runner.run();
    await h.clock.advance(1699); // t = 1799: start-to-start would already have run at 1000
    expect(h.starts).toEqual([0]);
    await h.clock.advance(1); // t = 1800 = 800 (end) + 1000
    expect(h.starts).toEqual([0, 1800]);
    expect(h.ends).toEqual([800]);
  });

  it('coalesces every run() made during a run or the cooldown into one run', async () => {
    const h = harness(1000, 5000, 60_000, 100);
    h.runner.start();
    h.runner.run();
    await h.clock.advance(50);
    for (let i = 0; i < 5; i++) h.runner.run(); // during the run
    await h.clock.advance(500);
    for (let i = 0; i < 5; i++) h.runner.run(); // during the cooldown
    await h.clock.advance(5000);
    expect(h.starts).toEqual([0, 1100]);
  });

  it('a run() while idle after the cooldown runs immediately', async () => {
    const h = harness(1000, 5000, 60_000);
    h.runner.start();
    h.runner.run();
    await h.clock.advance(3000);
    h.runner.run();
    await flush();
    expect(h.starts).toEqual([0, 3000]);
  });

  it('runs at least every maxInterval without requests, counted from the last run', async () => {
    const h = harness(1000, 5000, 10_000);
    h.runner.start();
    await h.clock.advance(9_999);
    expect(h.starts).toEqual([]);
    await h.clock.advance(1);
    expect(h.starts).toEqual([10_000]);
    await h.clock.advance(4_000);
    h.runner.run(); // t = 14000 resets the max timer
    await h.clock.advance(10_000);
    expect(h.starts).toEqual([10_000, 14_000, 24_000]);
  });

  it('retries a failed run after retryInterval, and a success restores maxInterval', async () => {
    const h = harness(1000, 5000, 60_000);
    h.fail(2);
    h.runner.start();
    h.runner.run();
    await h.clock.advance(20_000);
    // 0 fails → 5000 fails → 10000 succeeds → next only after 60 s
    expect(h.starts).toEqual([0, 5000, 10_000]);
    await h.clock.advance(50_000);
    expect(h.starts).toEqual([0, 5000, 10_000, 70_000]);
  });

  it('caps the retry interval at maxInterval', async () => {
    const h = harness(100, 50_000, 2_000);
    h.fail(1);
    h.runner.start();
    h.runner.run();
    await h.clock.advance(2_000);
    expect(h.starts).toEqual([0, 2_000]);
  });

  it('a retry interval shorter than minInterval still waits for the cooldown', async () => {
    const h = harness(1000, 10, 60_000);
    h.fail(1);
    h.runner.start();
    h.runner.run();
    await h.clock.advance(999);
    expect(h.starts).toEqual([0]);
    await h.clock.advance(1);
    expect(h.starts).toEqual([0, 1000]);
  });

  it('reports failures through onError and keeps running', async () => {
    const clock = new FakeClock({ startMs: T0 });
    const errors: unknown[] = [];
    let n = 0;
    const runner = new BoundedFrequencyRunner({
      name: 'e',
      fn: () => {
        n++;
        throw new Error(`boom ${n}`);
      },
      minIntervalMs: 0,
      retryIntervalMs: 100,
      maxIntervalMs: 1000,
      clock,
      onError: (e) => errors.push(e),
    });
    runners.push(runner);
    runner.start();
    runner.run();
    await clock.advance(250);
    expect(n).toBe(3);
    expect(errors.map((e) => (e as Error).message)).toEqual(['boom 1', 'boom 2', 'boom 3']);
  });

  it('never runs twice at once, with minInterval 0 and a stream of requests', async () => {
    const h = harness(0, 100, 1000, 30);
    h.runner.start();
    for (let t = 0; t < 300; t += 7) {
      h.runner.run();
      await h.clock.advance(7);
    }
    expect(h.maxConcurrent()).toBe(1);
    // Back to back: each run starts when the previous one ended.
    for (let i = 1; i < h.starts.length; i++) expect(h.starts[i]).toBe(h.ends[i - 1]);
  });

  it('stop() waits for the run in flight and prevents further runs', async () => {
    const h = harness(0, 100, 1000, 500);
    h.runner.start();
    h.runner.run();
    await h.clock.advance(100);
    const stopped = h.runner.stop();
    h.runner.run();
    await h.clock.advance(400);
    await stopped;
    await h.clock.advance(10_000);
    expect(h.starts).toEqual([0]);
    expect(h.ends).toEqual([500]);
  });

  it('stays stopped when the start signal is already aborted (the signal bounds start only)', async () => {
    const h = harness(0, 100, 1000);
    const ac = new AbortController();
    ac.abort();
    await expect(h.runner.start(ac.signal)).rejects.toThrow();
    await h.clock.advance(5000);
    expect(h.starts).toEqual([]);
  });

  it.each([
    [1000, 0, 999],
    [-1, 0, 10],
    [0, Number.NaN, 10],
    [0, 0, Number.POSITIVE_INFINITY],
  ])('rejects intervals min=%s retry=%s max=%s', (min, retry, max) => {
    expect(
      () =>
        new BoundedFrequencyRunner({
          name: 'bad',
          fn: () => {},
          minIntervalMs: min,
          retryIntervalMs: retry,
          maxIntervalMs: max,
        }),
    ).toThrow(InvalidOptionsError);
  });
});
