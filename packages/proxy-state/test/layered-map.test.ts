import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { LayeredMapBuilder } from '../src/layered-map.js';

describe('LayeredMapBuilder', () => {
  it('views are sorted, immutable snapshots of a plain map, across compactions', () => {
    const op = fc.oneof(
      fc.record({ set: fc.string({ maxLength: 3 }), value: fc.integer() }),
      fc.record({ del: fc.string({ maxLength: 3 }) }),
      fc.constant({ view: true as const }),
    );
    fc.assert(
      fc.property(fc.array(op, { maxLength: 400 }), (ops) => {
        const builder = new LayeredMapBuilder<number>();
        const model = new Map<string, number>();
        const views: [ReadonlyMap<string, number>, [string, number][]][] = [];
        const expected = () => [...model].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
        for (const o of ops) {
          if ('set' in o) {
            builder.set(o.set, o.value);
            model.set(o.set, o.value);
          } else if ('del' in o) {
            builder.delete(o.del);
            model.delete(o.del);
          } else views.push([builder.view(), expected()]);
        }
        views.push([builder.view(), expected()]);
        for (const [view, want] of views) {
          expect([...view]).toEqual(want);
          expect(view.size).toBe(want.length);
          for (const [k, v] of want) expect(view.get(k)).toBe(v);
          expect([...view.keys()]).toEqual(want.map(([k]) => k));
        }
      }),
      { numRuns: 200 },
    );
  });

  it('a deleted key is absent from later views only', () => {
    const b = new LayeredMapBuilder<string>();
    for (let i = 0; i < 100; i++) b.set(`k${String(i).padStart(3, '0')}`, 'v');
    const before = b.view();
    b.delete('k050');
    const after = b.view();
    expect(before.has('k050')).toBe(true);
    expect(after.has('k050')).toBe(false);
    expect(after.size).toBe(99);
    const seen: string[] = [];
    after.forEach((_v, k) => {
      seen.push(k);
    });
    expect(seen.length).toBe(99);
  });
});
