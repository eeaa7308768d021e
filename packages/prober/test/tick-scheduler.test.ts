// The manager's one timer for every worker (TickScheduler) on a fake clock: entries fire as a
// timer each would (due order, ties in scheduling order, one firing each), one clock timer at
// most, nothing pending once empty; and through the manager, workers keep upstream's ticker
// semantics (Go's time.Ticker: anchored at the first tick, a tick during a probe waits for it,
// further missed ticks dropped).
import { FakeClock, RecordingLogger } from '@nodeagent/core/testing';
import { describe, expect, it } from 'vitest';
import type { CommandRunner } from '../src/index.js';
import { TickEntry, TickScheduler } from '../src/tick-scheduler.js';
import { execProbe, harness, POD_UID, podWith, runningStatus } from './helpers.js';

class Recorded extends TickEntry {
  constructor(
    readonly name: string,
    readonly log: string[],
    readonly clock: FakeClock,
    readonly onFire: () => void = () => {},
  ) {
    super();
  }

  fire(): void {
    this.log.push(`${this.name}@${this.clock.now() - 1_700_000_000_000}`);
    this.onFire();
  }
}

function setup(): { clock: FakeClock; scheduler: TickScheduler; log: string[]; logger: RecordingLogger } {
  const clock = new FakeClock();
  const logger = new RecordingLogger();
  return { clock, scheduler: new TickScheduler(clock, logger), log: [], logger };
}

describe('TickScheduler', () => {
  it('fires each entry once at its due time, in due order, ties in scheduling order', async () => {
    const { clock, scheduler, log } = setup();
    const t0 = clock.now();
    const a = new Recorded('a', log, clock);
    const b = new Recorded('b', log, clock);
    const c = new Recorded('c', log, clock);
    const d = new Recorded('d', log, clock);
    scheduler.schedule(a, t0 + 300);
    scheduler.schedule(b, t0 + 100);
    scheduler.schedule(c, t0 + 300);
    scheduler.schedule(d, t0 + 100);
    expect(clock.pendingTimers()).toBe(1);
    await clock.advance(99);
    expect(log).toEqual([]);
    await clock.advance(1);
    expect(log).toEqual(['b@100', 'd@100']);
    await clock.advance(1_000);
    expect(log).toEqual(['b@100', 'd@100', 'a@300', 'c@300']);
    expect(scheduler.size).toBe(0);
    expect(clock.pendingTimers()).toBe(0);
  });

  it('rescheduling moves an entry, cancelling removes it; an empty scheduler leaves no timer', async () => {
    const { clock, scheduler, log } = setup();
    const t0 = clock.now();
    const a = new Recorded('a', log, clock);
    const b = new Recorded('b', log, clock);
    scheduler.schedule(a, t0 + 100);
    scheduler.schedule(b, t0 + 200);
    scheduler.schedule(a, t0 + 500);
    scheduler.schedule(b, t0 + 50);
    await clock.advance(400);
    expect(log).toEqual(['b@50']);
    scheduler.cancel(a);
    scheduler.cancel(a);
    expect(scheduler.size).toBe(0);
    expect(clock.pendingTimers()).toBe(0);
    await clock.advance(1_000);
    expect(log).toEqual(['b@50']);
  });

  it('an entry scheduled earlier than the armed instant fires at its own time', async () => {
    const { clock, scheduler, log } = setup();
    const t0 = clock.now();
    scheduler.schedule(new Recorded('late', log, clock), t0 + 1_000);
    await clock.advance(100);
    scheduler.schedule(new Recorded('early', log, clock), t0 + 200);
    expect(clock.pendingTimers()).toBe(1);
    await clock.advance(2_000);
    expect(log).toEqual(['early@200', 'late@1000']);
  });

  it('an entry that reschedules itself for an instant already reached fires on a later turn, once per turn', async () => {
    const { clock, scheduler, log } = setup();
    const t0 = clock.now();
    let turns = 0;
    const again: Recorded = new Recorded('again', log, clock, () => {
      if (++turns < 3) scheduler.schedule(again, clock.now());
    });
    const other = new Recorded('other', log, clock);
    scheduler.schedule(again, t0 + 10);
    scheduler.schedule(other, t0 + 10);
    await clock.advance(10);
    // `other` was due in the first turn; `again`'s re-schedules come after it, one per turn.
    expect(log).toEqual(['again@10', 'other@10', 'again@10', 'again@10']);
  });

  it('an entry that throws is logged; the others still fire and the schedule goes on', async () => {
    const { clock, scheduler, log, logger } = setup();
    const t0 = clock.now();
    scheduler.schedule(
      new Recorded('bad', log, clock, () => {
        throw new Error('boom');
      }),
      t0 + 10,
    );
    const good = new Recorded('good', log, clock, () => scheduler.schedule(good, clock.now() + 100));
    scheduler.schedule(good, t0 + 10);
    await clock.advance(250);
    expect(log).toEqual(['bad@10', 'good@10', 'good@110', 'good@210']);
    expect(logger.records.some((r) => r.msg === 'probe worker tick failed')).toBe(true);
  });
});

describe('workers on the shared timer', () => {
  it('a thousand workers hold one clock timer, each probing once per period', async () => {
    const h = await harness({ random: () => 0.5 });
    const started = new Date(h.clock.now());
    const containers = Array.from({ length: 1_000 }, (_, i) => ({
      name: `c${i}`,
      image: 'busybox',
      readinessProbe: execProbe({ periodSeconds: 1 + (i % 3) }),
    }));
    h.statuses.set(POD_UID, {
      phase: 'Running',
      podIP: '127.0.0.1',
      containerStatuses: containers.flatMap(
        (c) =>
          runningStatus(started, { started: true, name: c.name, containerID: `containerd://${c.name}` })
            .containerStatuses ?? [],
      ),
    });
    h.manager.addPod({ ...podWith({}), spec: { containers } });
    expect(h.clock.pendingTimers()).toBe(1);
    // Jitter 0.5 × period, then a probe every period: in 12 s, 12 / 6 / 4 probes by period
    // (first at 0.5, 1 or 1.5 s).
    await h.clock.advance(12_000);
    const perContainer = new Map<string, number>();
    for (const call of h.runner.calls)
      perContainer.set(call.containerId, (perContainer.get(call.containerId) ?? 0) + 1);
    expect(perContainer.size).toBe(1_000);
    for (let i = 0; i < 1_000; i++) {
      expect(perContainer.get(`c${i}`), `c${i}`).toBe([12, 6, 4][i % 3]);
    }
    expect(h.clock.pendingTimers()).toBe(1);
    await h.manager.stop();
    expect(h.clock.pendingTimers()).toBe(0);
  });

  it('a probe slower than its period: the tick during it runs right after, later missed ticks are dropped (Go ticker)', async () => {
    const clock = new FakeClock();
    const starts: number[] = [];
    const runner: CommandRunner = {
      runInContainer: async () => {
        starts.push(clock.now() - t0);
        await clock.sleep(2_500);
        return { exitCode: 0, output: '' };
      },
    };
    const t0 = clock.now();
    const h = await harness({ clock, commandRunner: runner });
    h.statuses.set(POD_UID, runningStatus(new Date(clock.now()), { started: true }));
    h.manager.addPod(podWith({ readinessProbe: execProbe({ periodSeconds: 1, timeoutSeconds: 10 }) }));
    await clock.advance(8_000);
    // Ticks at 0, 1, 2, 3, ...: the probe at 0 runs until 2.5 (tick 1 waits, tick 2 is
    // dropped), the next starts at 2.5 and runs until 5 (tick 3 waits, 4 dropped), and so on.
    expect(starts).toEqual([0, 2_500, 5_000, 7_500]);
    await h.manager.stop();
  });
});
