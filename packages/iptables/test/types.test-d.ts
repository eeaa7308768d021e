import type { InvalidServicePortError } from '@nodeagent/proxy-state';
import { describe, expectTypeOf, it } from 'vitest';
import type { CanaryMonitor, IptablesRenderer, IptablesRenderOptions } from '../src/index.js';

describe('public types', () => {
  it('the renderer takes its options object and reports the shared service-port error', () => {
    expectTypeOf<ConstructorParameters<typeof IptablesRenderer>[0]>().toEqualTypeOf<
      IptablesRenderOptions | undefined
    >();
    expectTypeOf<{ ipFamily: 'IPv6' }>().toMatchTypeOf<IptablesRenderOptions>();
    expectTypeOf<{ ipFamily: 6 }>().not.toMatchTypeOf<IptablesRenderOptions>();
    expectTypeOf<ReturnType<IptablesRenderer['render']>['errors']>().toEqualTypeOf<
      readonly InvalidServicePortError[]
    >();
  });

  it('the canary monitor has the lifecycle', () => {
    expectTypeOf<CanaryMonitor['start']>().parameters.toEqualTypeOf<[signal?: AbortSignal]>();
    expectTypeOf<CanaryMonitor['stop']>().returns.toEqualTypeOf<Promise<void>>();
  });
});
