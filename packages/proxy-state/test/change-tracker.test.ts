import { describe, expect, it } from 'vitest';
import { ChangeTracker } from '../src/index.js';

describe('ChangeTracker keeps the first "before" and the latest "after"', () => {
  it('A→B→C checks out as A→C', () => {
    const t = new ChangeTracker<string>((a, b) => a === b);
    expect(t.update('k', 'A', 'B')).toBe(true);
    // The informer's "previous" on the second update is ignored: the first one is kept.
    expect(t.update('k', 'B', 'C')).toBe(true);
    expect([...t.checkout()]).toEqual([['k', { previous: 'A', current: 'C' }]]);
    expect(t.pendingCount).toBe(0);
  });

  it('a change that returns to its start cancels', () => {
    const t = new ChangeTracker<string>((a, b) => a === b);
    t.update('other', 'X', 'Y');
    t.update('k', 'A', 'B');
    expect(t.pendingCount).toBe(2);
    expect(t.update('k', 'B', 'A')).toBe(true); // 'other' still pending
    expect(t.has('k')).toBe(false);
    expect(t.update('other', 'Y', 'X')).toBe(false);
    expect(t.checkout().size).toBe(0);
  });

  it('an update to an equal value is not a change', () => {
    const t = new ChangeTracker<number[]>((a, b) => a.join() === b.join());
    expect(t.update('k', [1], [1])).toBe(false);
    expect(t.pendingCount).toBe(0);
  });

  it('forgets everything on checkout', () => {
    const t = new ChangeTracker<number>((a, b) => a === b);
    t.update('a', 1, 2);
    t.update('b', 1, 3);
    expect([...t.keys()]).toEqual(['a', 'b']);
    expect(t.checkout().size).toBe(2);
    expect(t.checkout().size).toBe(0);
  });
});
