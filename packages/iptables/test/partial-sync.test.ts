import { FakeClock } from '@nodeagent/core/testing';
import { ProxyState } from '@nodeagent/proxy-state';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { IptablesSyncer, SnapshotAdapter, tracePacket } from '../src/index.js';
import { FakeIptablesExecutor } from '../src/testing.js';
import { NODE, NODE_IP, slice, svc, TEST_OPTIONS } from './helpers.js';

const p = (name: string, port: number) => [{ name, port }];

function newState() {
  return new ProxyState({ nodeName: NODE, nodeIPs: [NODE_IP] });
}

function setup(clock = new FakeClock()) {
  const ipt = new FakeIptablesExecutor();
  const syncer = new IptablesSyncer({ executor: ipt, render: { ...TEST_OPTIONS, nodeIP: NODE_IP }, clock });
  return { ipt, syncer, clock };
}

/** Applies a full sync of the same state to a fresh fake and returns its snapshot. */
async function freshFullSync(state: ProxyState) {
  const fresh = setup();
  // A new state object sees everything as new: render from the current snapshot's ports.
  const snap = state.checkout().v4;
  const ports = new SnapshotAdapter().servicePorts(snap);
  await fresh.syncer.sync(ports, new Set(), { full: true });
  return { fresh: fresh.ipt, ports };
}

function natLines(text: string): string[] {
  return text.slice(text.indexOf('*nat')).split('\n');
}

describe('partial sync (kube-proxy TestSyncProxyRulesRepeated sequence)', () => {
  it('writes only changed services’ chains, deletes stale ones, and ends equal to a full sync', async () => {
    const state = newState();
    const { ipt, syncer } = setup();
    state.onServiceAdd(svc('ns1', 'svc1', { clusterIP: '172.30.0.41', ports: [{ name: 'p80', port: 80 }] }));
    state.onServiceAdd(
      svc('ns2', 'svc2', { clusterIP: '172.30.0.42', ports: [{ name: 'p8080', port: 8080 }] }),
    );
    state.onEndpointSliceAdd(slice('ns1', 'svc1', p('p80', 80), [{ ip: '10.0.1.1' }]));
    state.onEndpointSliceAdd(slice('ns2', 'svc2', p('p8080', 8080), [{ ip: '10.0.2.1' }]));
    const r0 = await syncer.syncSnapshot(state.checkout().v4);
    expect(r0.full).toBe(true);
    expect(r0.fullReason).toBe('initial');
    expect(ipt.ensureJumpsCalls).toBe(1);

    // 1. Add svc3: only the fixed chains and svc3's chains are declared.
    state.onServiceAdd(svc('ns3', 'svc3', { clusterIP: '172.30.0.43', ports: [{ name: 'p80', port: 80 }] }));
    state.onEndpointSliceAdd(slice('ns3', 'svc3', p('p80', 80), [{ ip: '10.0.3.1' }]));
    const r1 = await syncer.syncSnapshot(state.checkout().v4);
    expect(r1.full).toBe(false);
    expect(ipt.ensureJumpsCalls).toBe(1);
    const t1 = ipt.restores.at(-1)!.text;
    expect(natLines(t1).filter((l) => l.startsWith(':'))).toEqual([
      ':KUBE-SERVICES - [0:0]',
      ':KUBE-NODEPORTS - [0:0]',
      ':KUBE-POSTROUTING - [0:0]',
      ':KUBE-MARK-MASQ - [0:0]',
      ':KUBE-SVC-X27LE4BHSL4DOUIK - [0:0]',
      ':KUBE-SEP-BSWRHOQ77KEXZLNL - [0:0]',
    ]);
    expect(t1).toContain('-j KUBE-SVC-XPGD46QRK7WJZT7O'); // svc1 still dispatched
    expect(t1).not.toContain(':KUBE-SVC-XPGD46QRK7WJZT7O');

    // 2. Delete svc2: its chains are flushed and deleted.
    state.onServiceDelete(
      svc('ns2', 'svc2', { clusterIP: '172.30.0.42', ports: [{ name: 'p8080', port: 8080 }] }),
    );
    const r2 = await syncer.syncSnapshot(state.checkout().v4);
    expect(r2.deletedChains).toBe(2);
    const t2 = ipt.restores.at(-1)!.text;
    expect(t2).toContain(':KUBE-SVC-2VJB64SDSIJUP5T6 - [0:0]');
    expect(t2).toContain('-X KUBE-SVC-2VJB64SDSIJUP5T6\n');
    expect(t2).toContain('-X KUBE-SEP-UHEGFW77JX3KXTOV\n');
    expect(ipt.chains('nat')).not.toContain('KUBE-SVC-2VJB64SDSIJUP5T6');

    // 3. svc4 without endpoints: a filter REJECT only; then its slice arrives.
    state.onServiceAdd(svc('ns4', 'svc4', { clusterIP: '172.30.0.44', ports: [{ name: 'p80', port: 80 }] }));
    await syncer.syncSnapshot(state.checkout().v4);
    const t3 = ipt.restores.at(-1)!.text;
    expect(t3).toContain(
      '-A KUBE-SERVICES -m comment --comment "ns4/svc4:p80 has no endpoints" -m tcp -p tcp -d 172.30.0.44 --dport 80 -j REJECT',
    );
    expect(natLines(t3).filter((l) => l.startsWith(':'))).toHaveLength(4);
    state.onEndpointSliceAdd(slice('ns4', 'svc4', p('p80', 80), [{ ip: '10.0.4.1' }]));
    await syncer.syncSnapshot(state.checkout().v4);
    const t4 = ipt.restores.at(-1)!.text;
    expect(t4).toContain(':KUBE-SVC-4SW47YFZTEDKD3PK - [0:0]');
    expect(t4).toContain(':KUBE-SEP-AYCN5HPXMIRJNJXU - [0:0]');

    // Rule counts include the chains partial syncs left alone (kube-proxy's rules-total metric).
    const last = await syncer.syncSnapshot(state.checkout().v4);
    const save = await ipt.save();
    const count = (table: string) =>
      save
        .slice(save.indexOf(`*${table}`))
        .split('COMMIT')[0]!
        .split('\n')
        .filter(
          (l) => l.startsWith('-A ') && !/ -A (INPUT|OUTPUT|FORWARD|PREROUTING|POSTROUTING) /.test(` ${l}`),
        ).length;
    expect(last.ruleCounts).toEqual({ filter: count('filter'), nat: count('nat') });

    // The accumulated state equals a fresh full sync, and a full sync on it changes nothing.
    const { fresh, ports } = await freshFullSync(state);
    expect(ipt.snapshot()).toEqual(fresh.snapshot());
    const before = ipt.snapshot();
    await syncer.sync(ports, new Set(), { full: true });
    expect(ipt.snapshot()).toEqual(before);
    expect(
      tracePacket(ipt.tables(), {
        sourceIP: '10.0.0.2',
        destIP: '172.30.0.44',
        destPort: 80,
        nodeIPs: [NODE_IP],
      }).endpoints,
    ).toEqual(['10.0.4.1:80']);
  });

  it('an endpoints-only change leaves the unchanged shared chains alone (kube-proxy mode rewrites them)', async () => {
    for (const skip of [true, false]) {
      const state = newState();
      const ipt = new FakeIptablesExecutor();
      const syncer = new IptablesSyncer({
        executor: ipt,
        render: { ...TEST_OPTIONS, nodeIP: NODE_IP },
        skipUnchangedSharedChains: skip,
      });
      state.onServiceAdd(svc('ns1', 'a', { clusterIP: '172.30.0.41', ports: [{ name: 'p', port: 80 }] }));
      state.onEndpointSliceAdd(slice('ns1', 'a', p('p', 80), [{ ip: '10.0.1.1' }]));
      await syncer.syncSnapshot(state.checkout().v4);
      state.onEndpointSliceUpdate(undefined, slice('ns1', 'a', p('p', 80), [{ ip: '10.0.1.2' }]));
      await syncer.syncSnapshot(state.checkout().v4);
      const text = ipt.restores.at(-1)!.text;
      expect(text.includes('*filter')).toBe(!skip);
      expect(text.includes(':KUBE-SERVICES')).toBe(!skip);
      expect(text).toContain('-X KUBE-SEP-');
      const { fresh } = await freshFullSync(state);
      expect(ipt.snapshot()).toEqual(fresh.snapshot());
    }
  });

  it('a failed sync makes the next one full, which repairs a half-applied state', async () => {
    const state = newState();
    const { ipt, syncer } = setup();
    state.onServiceAdd(svc('ns1', 'a', { clusterIP: '172.30.0.41', ports: [{ name: 'p', port: 80 }] }));
    state.onEndpointSliceAdd(slice('ns1', 'a', p('p', 80), [{ ip: '10.0.1.1' }]));
    await syncer.syncSnapshot(state.checkout().v4);
    state.onEndpointSliceUpdate(undefined, slice('ns1', 'a', p('p', 80), [{ ip: '10.0.1.2' }]));
    ipt.failNextRestore();
    await expect(syncer.syncSnapshot(state.checkout().v4)).rejects.toThrow(/injected failure/);
    expect(syncer.planner.noBaseline).toBe('failure');
    const r = await syncer.syncSnapshot(state.checkout().v4);
    expect(r.full).toBe(true);
    expect(r.fullReason).toBe('failure');
    const { fresh } = await freshFullSync(state);
    expect(ipt.snapshot()).toEqual(fresh.snapshot());
  });

  it('syncs fully when the caller asks or when it has no baseline, never on its own clock', async () => {
    // The hourly full sync is the proxier's decision (its sync loop; see the proxier's
    // sync-owner tests): the syncer only plans what it is asked, unless it cannot.
    const clock = new FakeClock();
    const state = newState();
    const { syncer } = setup(clock);
    state.onServiceAdd(svc('ns1', 'a', { clusterIP: '172.30.0.41', ports: [{ name: 'p', port: 80 }] }));
    const first = await syncer.syncSnapshot(state.checkout().v4);
    expect([first.full, first.fullReason]).toEqual([true, 'initial']);
    await clock.advance(7_200_000);
    expect((await syncer.syncSnapshot(state.checkout().v4)).full).toBe(false);
    const asked = await syncer.syncSnapshot(state.checkout().v4, { full: true });
    expect([asked.full, asked.fullReason]).toEqual([true, 'requested']);
    expect((await syncer.syncSnapshot(state.checkout().v4)).full).toBe(false);
    // The tables were flushed under us (the canary vanished): no baseline, so full even unasked.
    syncer.planner.baselineLost();
    const lost = await syncer.syncSnapshot(state.checkout().v4);
    expect([lost.full, lost.fullReason]).toEqual([true, 'flushed']);
    expect((await syncer.syncSnapshot(state.checkout().v4)).full).toBe(false);
  });

  it('deletes stale chains seeded from the kernel on the next full sync, leaving foreign chains alone', async () => {
    const { ipt, syncer } = setup();
    await ipt.restore(
      '*nat\n:KUBE-SVC-OLDOLDOLDOLDOLDO - [0:0]\n:MY-CHAIN - [0:0]\n-A MY-CHAIN -j RETURN\nCOMMIT\n',
    );
    syncer.planner.seedExistingChains(ipt.chains('nat'));
    await syncer.sync([], new Set());
    expect(ipt.chains('nat')).not.toContain('KUBE-SVC-OLDOLDOLDOLDOLDO');
    expect(ipt.chains('nat')).toContain('MY-CHAIN');
  });

  it('property: any sequence of changes synced partially equals a fresh full sync', async () => {
    const op = fc.record({
      svc: fc.integer({ min: 0, max: 4 }),
      kind: fc.constantFrom('add', 'delete', 'endpoints', 'policy', 'nodeport'),
      eps: fc.uniqueArray(fc.integer({ min: 1, max: 6 }), { maxLength: 4 }),
      local: fc.boolean(),
    });
    await fc.assert(
      fc.asyncProperty(fc.array(op, { minLength: 1, maxLength: 12 }), async (ops) => {
        const state = newState();
        const { ipt, syncer } = setup();
        await syncer.syncSnapshot(state.checkout().v4);
        const spec = (i: number, o: { kind: string; local: boolean }) => ({
          type: o.kind === 'nodeport' ? 'NodePort' : 'ClusterIP',
          clusterIP: `172.30.0.${10 + i}`,
          ...(o.kind === 'policy' ? { externalTrafficPolicy: 'Local', type: 'NodePort' } : {}),
          ports: [
            {
              name: 'p',
              port: 80,
              ...(o.kind === 'nodeport' || o.kind === 'policy' ? { nodePort: 30000 + i } : {}),
            },
          ],
        });
        for (const o of ops) {
          const s = svc('ns', `s${o.svc}`, spec(o.svc, o));
          if (o.kind === 'delete') state.onServiceDelete(s);
          else if (o.kind === 'endpoints') {
            state.onEndpointSliceUpdate(
              undefined,
              slice(
                'ns',
                `s${o.svc}`,
                p('p', 80),
                o.eps.map((e) => ({ ip: `10.1.${o.svc}.${e}`, node: o.local ? NODE : 'x' })),
              ),
            );
          } else state.onServiceUpdate(undefined, s);
          await syncer.syncSnapshot(state.checkout().v4);
        }
        const { fresh, ports } = await freshFullSync(state);
        expect(ipt.snapshot()).toEqual(fresh.snapshot());
        const before = ipt.snapshot();
        await syncer.sync(ports, new Set(), { full: true });
        expect(ipt.snapshot()).toEqual(before);
      }),
      { numRuns: 60 },
    );
  });
});
