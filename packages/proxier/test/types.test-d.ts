import type { IptablesBackend } from '@nodeagent/iptables';
import type { IpvsBackend } from '@nodeagent/ipvs';
import type { NftablesBackend } from '@nodeagent/nftables';
import type { DataPlaneBackend as Backend, BackendSyncResult, ProxyCheckout } from '@nodeagent/proxy-state';
import { describe, expectTypeOf, it } from 'vitest';
import type {
  BackendModules,
  BackendNotInstalledError,
  BoundedFrequencyRunner,
  BoundedFrequencyRunnerOptions,
  Proxier,
  ProxierEvents,
  ProxierSyncResult,
  ProxyHealthServer,
} from '../src/index.js';

describe('public types', () => {
  it('Proxier events are typed', () => {
    type On = Proxier['on'];
    expectTypeOf<ProxierEvents['synced']>().toEqualTypeOf<[result: ProxierSyncResult]>();
    expectTypeOf<On>().toBeFunction();
    const p = null as unknown as Proxier;
    p.on('synced', (r) => expectTypeOf(r).toEqualTypeOf<ProxierSyncResult>());
    // @ts-expect-error not an event of the proxier
    p.on('no-such-event', () => {});
    expectTypeOf(p.start).parameters.toEqualTypeOf<[signal?: AbortSignal]>();
    expectTypeOf(p.start).returns.toEqualTypeOf<Promise<void>>();
    expectTypeOf(p.stop).returns.toEqualTypeOf<Promise<void>>();
  });

  it('BoundedFrequencyRunner takes one options object with name and fn required', () => {
    expectTypeOf<ConstructorParameters<typeof BoundedFrequencyRunner>>().toEqualTypeOf<
      [options: BoundedFrequencyRunnerOptions]
    >();
    expectTypeOf<{ name: string; fn: () => void }>().toMatchTypeOf<BoundedFrequencyRunnerOptions>();
    expectTypeOf<{ fn: () => void }>().not.toMatchTypeOf<BoundedFrequencyRunnerOptions>();
    expectTypeOf<BoundedFrequencyRunner['start']>().returns.toEqualTypeOf<Promise<void>>();
  });

  it('the health server has the lifecycle and a port getter', () => {
    expectTypeOf<ProxyHealthServer['start']>().returns.toEqualTypeOf<Promise<void>>();
    expectTypeOf<ProxyHealthServer['port']>().toEqualTypeOf<number | undefined>();
  });

  it('the adapters implement the Backend contract', () => {
    expectTypeOf<IptablesBackend>().toMatchTypeOf<Backend>();
    expectTypeOf<NftablesBackend>().toMatchTypeOf<Backend>();
    expectTypeOf<IpvsBackend>().toMatchTypeOf<Backend>();
    expectTypeOf<Backend['sync']>().parameters.toEqualTypeOf<
      [checkout: ProxyCheckout, options: { readonly full: boolean }]
    >();
    expectTypeOf<Backend['sync']>().returns.toEqualTypeOf<Promise<BackendSyncResult>>();
  });

  it('a loaded backend module gives the backend classes of its package', () => {
    expectTypeOf<
      InstanceType<BackendModules['nftables']['NftablesBackend']>
    >().toEqualTypeOf<NftablesBackend>();
    expectTypeOf<
      InstanceType<BackendModules['iptables']['IptablesBackend']>
    >().toEqualTypeOf<IptablesBackend>();
    expectTypeOf<InstanceType<BackendModules['ipvs']['IpvsBackend']>>().toEqualTypeOf<IpvsBackend>();
    expectTypeOf<BackendNotInstalledError['packageName']>().toEqualTypeOf<string>();
  });
});
