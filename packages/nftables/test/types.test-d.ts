import type { ProxySnapshot } from '@nodeagent/proxy-state';
import { describe, expectTypeOf, it } from 'vitest';
import type { NftRenderer, NftRenderOptions, NftSyncer, NftSyncerOptions } from '../src/index.js';

describe('public types', () => {
  it('the renderer and syncer take Nft* option objects', () => {
    expectTypeOf<ConstructorParameters<typeof NftRenderer>[0]>().toEqualTypeOf<
      NftRenderOptions | undefined
    >();
    expectTypeOf<ConstructorParameters<typeof NftSyncer>[0]>().toEqualTypeOf<NftSyncerOptions>();
    expectTypeOf<{ layout: 'optimized' }>().toMatchTypeOf<NftRenderOptions>();
    expectTypeOf<{ layout: 'other' }>().not.toMatchTypeOf<NftRenderOptions>();
    expectTypeOf<Parameters<NftSyncer['sync']>[0]>().toEqualTypeOf<ProxySnapshot>();
  });
});
