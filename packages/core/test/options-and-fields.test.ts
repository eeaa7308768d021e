import {
  definedFields,
  InvalidOptionsError,
  KeyedBackoff,
  noopWorkQueueMetricsProvider,
  WorkQueue,
} from '@nodeagent/core';
import { describe, expect, expectTypeOf, it } from 'vitest';

describe('InvalidOptionsError', () => {
  it('is what every core constructor throws, naming the component', () => {
    const errors = [
      () => new KeyedBackoff({ initialMs: 0 }),
      () => new WorkQueue({ metrics: noopWorkQueueMetricsProvider }),
    ].map((make) => {
      try {
        make();
      } catch (error) {
        return error;
      }
      return undefined;
    });
    expect(errors.map((e) => (e as InvalidOptionsError).component)).toEqual(['KeyedBackoff', 'WorkQueue']);
    for (const e of errors) expect(e).toBeInstanceOf(InvalidOptionsError);
  });
});

describe('definedFields', () => {
  it('drops undefined entries and keeps falsy ones', () => {
    expect(definedFields({ a: undefined, b: 0, c: '', d: null, e: false })).toEqual({
      b: 0,
      c: '',
      d: null,
      e: false,
    });
    expect(Object.keys(definedFields({ a: undefined }))).toEqual([]);
  });

  it('types maybe-undefined fields as optional without undefined', () => {
    const fields = definedFields({ a: 1 as number | undefined, b: 'x' });
    expectTypeOf(fields).toEqualTypeOf<{ b: string } & { a?: number }>();
  });
});
