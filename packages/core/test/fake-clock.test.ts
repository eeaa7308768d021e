import { describe, expect, it } from 'vitest';
import { FakeClock } from '@nodeagent/core/testing';

describe('FakeClock', () => {
  it('fires due timers in order, including timers scheduled by timers', async () => {
    const clock = new FakeClock({ startMs: 0 });
    const seen: string[] = [];
    clock.setTimeout(() => {
      seen.push(`a@${clock.now()}`);
      clock.setTimeout(() => seen.push(`c@${clock.now()}`), 5);
    }, 10);
    clock.setTimeout(() => seen.push(`b@${clock.now()}`), 12);
    await clock.advance(20);
    expect(seen).toEqual(['a@10', 'b@12', 'c@15']);
    expect(clock.now()).toBe(20);
  });
});
