// The public types: the factory's pod informer plugs into ApiServerSource without casts, the
// operations are upstream's five, and source updates take only the ops a source may send.
import type { SharedInformerFactory } from '@nodeagent/informer';
import { describe, expectTypeOf, it } from 'vitest';
import type {
  PodConfig,
  PodInformer,
  PodOperation,
  PodSourceErrorCode,
  PodUpdate,
  SourceUpdate,
} from '../src/index.js';

declare const factory: SharedInformerFactory;
declare const config: PodConfig;

describe('pod-sources types', () => {
  it("the factory's node pod informer is a PodInformer", () => {
    expectTypeOf(factory.pods({ fieldSelector: 'spec.nodeName=n' })).toMatchTypeOf<PodInformer>();
  });
  it("has upstream's operations", () => {
    expectTypeOf<PodOperation>().toEqualTypeOf<'ADD' | 'UPDATE' | 'DELETE' | 'REMOVE' | 'RECONCILE'>();
    expectTypeOf<PodUpdate['op']>().toEqualTypeOf<PodOperation>();
    expectTypeOf<SourceUpdate['op']>().toEqualTypeOf<'SET' | 'ADD' | 'UPDATE' | 'DELETE' | 'REMOVE'>();
    expectTypeOf<PodSourceErrorCode>().toMatchTypeOf<string>();
  });
  it('sinks take source updates only', () => {
    // @ts-expect-error: RECONCILE is emitted by the merge, never sent by a source
    config.channel('file').send({ op: 'RECONCILE', pods: [] });
  });
});
