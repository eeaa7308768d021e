// The public types: every handler is a PodAdmitHandler, and a rejected result has room for
// upstream's reason and message.
import type { V1Pod } from '@kubernetes/client-node';
import { describe, expectTypeOf, it } from 'vitest';
import {
  type NodePressureAdmitHandler,
  type NodePressureCondition,
  type PodAdmitHandler,
  type PodAdmitResult,
  type PredicateAdmitHandler,
  rejectedPodStatus,
  type SysctlAllowlist,
} from '../src/index.js';

describe('admission types', () => {
  it('the handlers implement PodAdmitHandler', () => {
    expectTypeOf<PredicateAdmitHandler>().toMatchTypeOf<PodAdmitHandler>();
    expectTypeOf<SysctlAllowlist>().toMatchTypeOf<PodAdmitHandler>();
    expectTypeOf<NodePressureAdmitHandler>().toMatchTypeOf<PodAdmitHandler>();
  });
  it('results and statuses', () => {
    expectTypeOf<PodAdmitResult['reason']>().toEqualTypeOf<string | undefined>();
    expectTypeOf(rejectedPodStatus).returns.toMatchTypeOf<NonNullable<V1Pod['status']>>();
    expectTypeOf<NodePressureCondition>().toEqualTypeOf<'MemoryPressure' | 'DiskPressure' | 'PIDPressure'>();
  });
});
