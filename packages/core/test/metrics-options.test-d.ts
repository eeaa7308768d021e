import type { MetricsOptions, MetricsRegistry, PromClientModule } from '@nodeagent/core';
import * as promClient from 'prom-client';
import { describe, expectTypeOf, it } from 'vitest';

// The structural metrics types must accept prom-client itself, so users pass their own
// registry and module without casts (and the declarations never name prom-client).
describe('MetricsOptions accepts prom-client', () => {
  it('takes a prom-client Registry of either format and the module', () => {
    expectTypeOf(new promClient.Registry()).toMatchTypeOf<MetricsRegistry>();
    expectTypeOf(
      new promClient.Registry<promClient.OpenMetricsContentType>(),
    ).toMatchTypeOf<MetricsRegistry>();
    expectTypeOf(promClient).toMatchTypeOf<PromClientModule>();
    expectTypeOf({ registry: promClient.register, promClient }).toMatchTypeOf<MetricsOptions>();
  });
});
