/**
 * `nodeagent-proxy run` picks its IP families as kube-proxy does (`cmd/kube-proxy/app/server.go`
 * and `server_linux.go`): the primary family is the first node IP's (`detectNodeIPs`), a family
 * without a node IP gets the loopback address, and it runs dual-stack whenever the platform
 * supports both families (`platformCheckSupported`: iptables/ipvs need a working `ip6tables`,
 * no `/proc/net/if_inet6` means no IPv6), one backend per family, primary first; single-stack
 * otherwise. A dual-stack Service is programmed into both backends. Fake nft executors, the
 * mini-apiserver in-process.
 */
import type { V1Node } from '@kubernetes/client-node';
import type { Logger } from '@nodeagent/core';
import { startMiniApiServer } from '@nodeagent/mini-apiserver';
import { NftablesBackend } from '@nodeagent/nftables';
import { dumpTable, FakeNftExecutor } from '@nodeagent/nftables/testing';
import type { IPFamily } from '@nodeagent/proxy-state';
import { describe, expect, it } from 'vitest';
import { detectNodeIPs, type PlatformSupport } from '../src/cli/run.js';
import { endpointSlice, eventually, service } from './fixtures.js';
import { type ProxyRun, startProxyRun } from './support/run-harness.js';

const NODE = 'dual-node';

describe('detectNodeIPs (kube-proxy)', () => {
  it('takes the primary family from the first node IP and loopback for a family without one', () => {
    expect(detectNodeIPs(['10.0.0.2'], '0.0.0.0')).toEqual({
      primary: 4,
      nodeIPs: { 4: '10.0.0.2', 6: '::1' },
    });
    expect(detectNodeIPs(['fd00::2', '10.0.0.2'], '0.0.0.0')).toEqual({
      primary: 6,
      nodeIPs: { 4: '10.0.0.2', 6: 'fd00::2' },
    });
    expect(detectNodeIPs([], '0.0.0.0')).toEqual({ primary: 4, nodeIPs: { 4: '127.0.0.1', 6: '::1' } });
  });

  it('a specific --bind-address overrides the primary family and its IP', () => {
    expect(detectNodeIPs(['10.0.0.2', 'fd00::2'], 'fd00::9')).toEqual({
      primary: 6,
      nodeIPs: { 4: '10.0.0.2', 6: 'fd00::9' },
    });
  });
});

/** Runs `run` with `platform` against a server holding a Node with `addresses` and a dual-stack Service. */
async function runWith(addresses: readonly string[], platform: PlatformSupport) {
  const server = await startMiniApiServer({ autoCreateNamespaces: true, endpointSliceController: false });
  const executors = new Map<IPFamily, FakeNftExecutor>();
  const built: IPFamily[] = [];
  let run: ProxyRun | undefined;
  try {
    server.store.create('nodes', {
      apiVersion: 'v1',
      kind: 'Node',
      metadata: { name: NODE },
      status: { addresses: addresses.map((address) => ({ type: 'InternalIP', address })) },
    } satisfies V1Node as never);
    server.store.create(
      'services',
      service('web', {
        clusterIP: '172.30.7.10',
        clusterIPs: ['172.30.7.10', 'fd00:30::10'],
        ipFamilies: ['IPv4', 'IPv6'],
        ipFamilyPolicy: 'RequireDualStack',
      }) as never,
    );
    server.store.create('endpointslices', endpointSlice('web', [{ ip: '10.7.0.5' }]) as never);
    const v6 = endpointSlice('web', [{ ip: 'fd00:7::5' }], { name: 'web-v6' });
    server.store.create('endpointslices', { ...v6, addressType: 'IPv6' } as never);
    run = await startProxyRun(server, {
      nodeName: NODE,
      io: {
        platform: async () => platform,
        makeBackend: async (config, family, _ips, log: Logger) => {
          built.push(family);
          const executor = new FakeNftExecutor();
          executors.set(family, executor);
          return new NftablesBackend({
            [family === 6 ? 'ipv6' : 'ipv4']: { executor },
            render: { masqueradeBit: config.masqueradeBit },
            logger: log,
          });
        },
      },
    });
    const { done, log } = run;
    const table = (family: IPFamily) =>
      JSON.stringify(
        dumpTable(executors.get(family)?.state.table(family === 6 ? 'ip6' : 'ip', 'kube-proxy')) ?? null,
      );
    // A refusal to start rejects `done` before anything runs.
    await Promise.race([
      eventually(() => expect(log()).toContain('running; rules follow'), 10_000),
      done.then((code) => {
        throw new Error(`run exited early with ${code}`);
      }),
    ]);
    const want: IPFamily[] = platform.ipv4 && platform.ipv6 ? [4, 6] : [4];
    for (const f of want) {
      await eventually(() => expect(table(f)).toContain(f === 6 ? 'fd00:30::10' : '172.30.7.10'), 10_000);
    }
    run.stop();
    expect(await done).toBe(0);
    return { built, table, log: log() };
  } finally {
    await run?.close();
    await server.stop();
  }
}

describe('nodeagent-proxy run: IP families as kube-proxy', () => {
  it('dual-stack when the platform supports both: one backend per family, primary first', async () => {
    const r = await runWith(['192.168.7.2', 'fd00::7:2'], { ipv4: true, ipv6: true });
    expect(r.built).toEqual([4, 6]);
    expect(r.log).toContain('kube-proxy running in dual-stack mode');
    expect(r.log).toContain('"primaryIpFamily":"IPv4"');
    // Each table holds its own family's half of the RequireDualStack Service only.
    expect(r.table(4)).toContain('172.30.7.10');
    expect(r.table(4)).not.toContain('fd00:30::10');
    expect(r.table(6)).toContain('fd00:30::10');
    expect(r.table(6)).not.toContain('172.30.7.10');
  }, 30_000);

  it('an IPv6-primary node puts IPv6 first', async () => {
    const r = await runWith(['fd00::7:2', '192.168.7.2'], { ipv4: true, ipv6: true });
    expect(r.built).toEqual([6, 4]);
    expect(r.log).toContain('"primaryIpFamily":"IPv6"');
  }, 30_000);

  it('without IPv6 support it stays single-stack (the primary family only)', async () => {
    const r = await runWith(['192.168.7.2'], { ipv4: true, ipv6: false });
    expect(r.built).toEqual([4]);
    expect(r.log).toContain('kube-proxy running in single-stack mode');
    expect(r.table(6)).toBe('null');
  }, 30_000);

  it('refuses to run when the primary family is unsupported', async () => {
    await expect(runWith(['fd00::7:2'], { ipv4: true, ipv6: false })).rejects.toThrow(
      'no support for primary IP family "IPv6"',
    );
  }, 30_000);
});
