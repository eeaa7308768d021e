// The public types: the managers' inputs are small structural interfaces, and the pod status
// manager's read side fits a prober's status provider without casts.
import type { V1PodStatus } from '@kubernetes/client-node';
import { describe, expectTypeOf, it } from 'vitest';
import type {
  MirrorPodTranslator,
  NodePressureProvider,
  NodeStatusManagerOptions,
  PodStatusManager,
  StatusApi,
} from '../src/index.js';

declare const manager: PodStatusManager;

describe('PodStatusManager', () => {
  it('reads as a status provider: uid → status or undefined', () => {
    const provider: { getPodStatus(uid: string): V1PodStatus | undefined } = manager;
    expectTypeOf(provider.getPodStatus).returns.toEqualTypeOf<V1PodStatus | undefined>();
  });
});

describe('injected interfaces', () => {
  it('a translator says "not static" (undefined), "no mirror yet" (null) or the mirror UID', () => {
    expectTypeOf<ReturnType<MirrorPodTranslator['mirrorPodUid']>>().toEqualTypeOf<
      string | null | undefined
    >();
  });
  it('pressure is three booleans', () => {
    expectTypeOf<ReturnType<NodePressureProvider['isUnderDiskPressure']>>().toBeBoolean();
  });
  it('a StatusApi needs every verb', () => {
    // @ts-expect-error: delete is missing
    const partial: StatusApi = {
      get: async () => undefined,
      create: async (_p, b) => b,
      replace: async (_p, b) => b,
      patch: async () => ({}) as never,
    };
    void partial;
  });
  it('node options need only the API and the name', () => {
    expectTypeOf<{ api: StatusApi; nodeName: string }>().toMatchTypeOf<NodeStatusManagerOptions>();
    // @ts-expect-error: maxPods is a number
    const bad: NodeStatusManagerOptions = { api: {} as StatusApi, nodeName: 'n', maxPods: '110' };
    void bad;
  });
});
