/**
 * Incremental transactions against the fake executor: partial syncs touch only changed
 * services, converge to the same state as a fresh full sync, a full sync after them is a
 * no-op, stale chains are flushed then deleted ≥ 1 s later, and failures force a full sync.
 */

import { FakeClock } from '@nodeagent/core/testing';
import { ProxyState } from '@nodeagent/proxy-state';
import { describe, expect, it } from 'vitest';
import {
  NftablesBackend,
  NftCommandError,
  type NftLayout,
  type NftRuleset,
  NftSyncer,
  NftSyncPlanner,
  renderNftables,
} from '../src/index.js';
import { dumpTable, FakeNftExecutor } from '../src/testing.js';
import { LAYOUTS } from './flow-support.js';
import { NODE, NODE_IP, slice, svc, TEST_OPTIONS } from './helpers.js';

function setup(layout: NftLayout) {
  const clock = new FakeClock();
  const exec = new FakeNftExecutor();
  const state = new ProxyState({ nodeName: NODE, nodeIPs: [NODE_IP] });
  const syncer = new NftSyncer({
    executor: exec,
    clock,
    render: { ...TEST_OPTIONS, layout, nodeIP: NODE_IP },
  });
  const add = (name: string, ip: string, eps: string[], extra: Record<string, unknown> = {}) => {
    state.onServiceAdd(
      svc('ns', name, {
        clusterIP: ip,
        ports: [{ name: 'p', port: 80, nodePort: extra.nodePort as number }],
        ...extra,
      }),
    );
    state.onEndpointSliceAdd(
      slice(
        'ns',
        name,
        [{ name: 'p', port: 8080 }],
        eps.map((e) => ({ ip: e, node: NODE })),
      ),
    );
  };
  const fresh = () => {
    const e = new FakeNftExecutor();
    return e
      .apply(renderNftables(state.checkout().v4, { ...TEST_OPTIONS, layout, nodeIP: NODE_IP }))
      .then(() => dumpTable(e.state.table('ip', 'kube-proxy')));
  };
  return {
    clock,
    exec,
    state,
    syncer,
    add,
    fresh,
    dump: () => dumpTable(exec.state.table('ip', 'kube-proxy')),
  };
}

describe.each(LAYOUTS)('partial sync (%s layout)', (layout) => {
  it('converges to a fresh full sync, and a later full sync changes nothing', async () => {
    const t = setup(layout);
    for (let i = 0; i < 20; i++) t.add(`s${i}`, `172.30.0.${10 + i}`, [`10.1.${i}.1`, `10.1.${i}.2`]);
    const first = await t.syncer.sync(t.state.checkout().v4);
    expect(first.full).toBe(true);

    // change one service's endpoints, add one, delete one, make one sticky NodePort
    t.state.onEndpointSliceUpdate(
      undefined,
      slice('ns', 's3', [{ name: 'p', port: 8080 }], [{ ip: '10.9.9.9', node: NODE }]),
    );
    t.add('new', '172.30.1.1', ['10.2.0.1']);
    t.state.onServiceDelete(svc('ns', 's5', { clusterIP: '172.30.0.15', ports: [{ name: 'p', port: 80 }] }));
    t.state.onServiceUpdate(
      undefined,
      svc('ns', 's7', {
        type: 'NodePort',
        clusterIP: '172.30.0.17',
        sessionAffinity: 'ClientIP',
        ports: [{ name: 'p', port: 80, nodePort: 30007 }],
      }),
    );
    const snap = t.state.checkout().v4;
    const partial = await t.syncer.sync(snap);
    expect(partial.full).toBe(false);
    expect(partial.rewrittenPorts).toBe(3);
    // stale chains remain (flushed) until the delay passes
    await t.clock.advance(1000);
    t.state.onEndpointSliceUpdate(
      undefined,
      slice('ns', 's8', [{ name: 'p', port: 8080 }], [{ ip: '10.1.8.1', node: NODE }]),
    );
    const later = await t.syncer.sync(t.state.checkout().v4);
    expect(later.full).toBe(false);
    if (layout === 'kube-proxy') expect(later.deletedChains.length).toBeGreaterThan(0);
    await t.clock.advance(1000);
    await t.syncer.cleanup();
    expect(t.syncer.nextCleanupAt()).toBeUndefined();
    const afterPartials = t.dump();
    expect(afterPartials).toEqual(await t.fresh());

    const full = await t.syncer.sync(t.state.checkout().v4, { full: true });
    expect(full.full).toBe(true);
    expect(t.dump()).toEqual(afterPartials);
  });

  it('keeps the transaction for a one-service change constant in the service count', async () => {
    const sizes: number[] = [];
    for (const n of [10, 100, 400]) {
      const t = setup(layout);
      for (let i = 0; i < n; i++)
        t.add(`s${i}`, `172.30.${i >> 8}.${i & 255}`, [`10.1.${i >> 8}.${i & 255}`]);
      await t.syncer.sync(t.state.checkout().v4);
      t.state.onEndpointSliceUpdate(
        undefined,
        slice(
          'ns',
          's3',
          [{ name: 'p', port: 8080 }],
          [
            { ip: '10.200.0.1', node: NODE },
            { ip: '10.200.0.2', node: NODE },
          ],
        ),
      );
      const r = await t.syncer.sync(t.state.checkout().v4);
      expect(r.full).toBe(false);
      sizes.push(r.lines);
    }
    expect(new Set(sizes).size).toBe(1);
  });

  it('writes nothing when nothing changed', async () => {
    const t = setup(layout);
    t.add('a', '172.30.0.1', ['10.1.0.1']);
    await t.syncer.sync(t.state.checkout().v4);
    const n = t.exec.transactions.length;
    const r = await t.syncer.sync(t.state.checkout().v4);
    expect(r.bytes).toBe(0);
    expect(t.exec.transactions.length).toBe(n);
  });

  it('goes full after a failed transaction and recovers', async () => {
    const t = setup(layout);
    t.add('a', '172.30.0.1', ['10.1.0.1']);
    await t.syncer.sync(t.state.checkout().v4);
    t.add('b', '172.30.0.2', ['10.1.0.2']);
    t.exec.failNext = new Error('boom');
    await expect(t.syncer.sync(t.state.checkout().v4)).rejects.toThrow('boom');
    t.add('c', '172.30.0.3', ['10.1.0.3']);
    const r = await t.syncer.sync(t.state.checkout().v4);
    expect(r.full).toBe(true);
    expect(t.dump()).toEqual(await t.fresh());
  });
});

describe('fake executor semantics', () => {
  it('rejects what nft rejects, atomically', async () => {
    const e = new FakeNftExecutor();
    await e.apply('add table ip t\nadd chain ip t a\nadd chain ip t b\nadd rule ip t a jump b\n');
    await expect(e.apply('delete chain ip t b')).rejects.toThrow(/busy/);
    await expect(e.apply('delete chain ip t zz')).rejects.toThrow(/No such file/);
    await expect(e.apply('add rule ip t a jump zz')).rejects.toThrow(/No such file/);
    await expect(
      e.apply(
        'add map ip t m { type inet_service : inet_service ; }\nadd element ip t m { 1 : 2 }\nadd element ip t m { 1 : 3 }',
      ),
    ).rejects.toThrow(/File exists/);
    expect(e.state.table('ip', 't')!.sets.has('m')).toBe(false);
    await expect(e.apply('delete element ip t m { 5 }')).rejects.toThrow(/No such file/);
    await e.apply('delete chain ip t a\ndelete chain ip t b');
    expect(e.state.table('ip', 't')!.chains.size).toBe(0);
  });

  it('takes rules inside `add chain` blocks and elements inside set declarations, as nft does', async () => {
    const e = new FakeNftExecutor();
    await e.apply(
      [
        'add table ip t',
        'add chain ip t b',
        'add chain ip t a { type filter hook input priority 0 ; comment "x;y" ; }',
        'add chain ip t a { ip daddr { 1.1.1.1, 2.2.2.2 } jump b ; counter comment "p;q" ; }',
        'add map ip t m { type ipv4_addr : verdict ; comment "c" ; elements = { 1.1.1.1 : goto b, 2.2.2.2 comment "k" : drop } ; }',
        '',
      ].join('\n'),
    );
    const table = e.state.table('ip', 't')!;
    expect(table.chains.get('a')).toEqual({
      hook: { type: 'filter', hook: 'input', priority: 0 },
      comment: 'x;y',
      rules: ['ip daddr { 1.1.1.1, 2.2.2.2 } jump b', 'counter comment "p;q"'],
    });
    expect([...table.sets.get('m')!.elements]).toEqual([
      ['1.1.1.1', { value: 'goto b' }],
      ['2.2.2.2', { value: 'drop', comment: 'k' }],
    ]);
    // Appends to an existing chain; a block rule naming a missing chain or set fails the whole transaction.
    await e.apply('add chain ip t b { counter ; }');
    expect(e.state.table('ip', 't')!.chains.get('b')!.rules).toEqual(['counter']);
    await expect(e.apply('add chain ip t c { jump zz ; }')).rejects.toThrow(/No such file/);
    await expect(e.apply('add chain ip t c { ip saddr @zz drop ; }')).rejects.toThrow(/No such file/);
    expect(e.state.table('ip', 't')!.chains.has('c')).toBe(false);
    // Declared elements follow `add element`'s rules; a set re-declared with another type is refused.
    await expect(
      e.apply('add map ip t m { type ipv4_addr : verdict ; elements = { 1.1.1.1 : drop } ; }'),
    ).rejects.toThrow(/File exists/);
    await expect(e.apply('add map ip t m { type inet_service : verdict ; }')).rejects.toThrow(/File exists/);
    await e.apply(
      'add map ip t m { type ipv4_addr : verdict ; elements = { 1.1.1.1 : goto b, 3.3.3.3 : drop } ; }',
    );
    expect(e.state.table('ip', 't')!.sets.get('m')!.elements.size).toBe(3);
  });
});

describe('deleting stale chains without nft dumping every chain', () => {
  const ANCHORS = /\nlist chain ip kube-proxy (\S+)\nlist (set|map) ip kube-proxy (\S+)\n$/;

  it('ends a transaction whose only deletions are chains or sets with listings of a small chain and set', async () => {
    const t = setup('kube-proxy');
    for (const n of ['a', 'b', 'c']) t.add(n, `172.30.0.${n.charCodeAt(0) - 90}`, ['10.1.0.1']);
    await t.syncer.sync(t.state.checkout().v4);
    const move = (name: string, ip: string) =>
      t.state.onEndpointSliceUpdate(
        undefined,
        slice('ns', name, [{ name: 'p', port: 8080 }], [{ ip, node: NODE }]),
      );
    move('a', '10.1.0.2');
    const first = await t.syncer.sync(t.state.checkout().v4);
    expect(first.staleChains).toHaveLength(1);
    expect(t.exec.transactions.at(-1)).not.toMatch(/^(list|delete) /m);
    await t.clock.advance(1_000);
    move('b', '10.1.0.3');
    const later = await t.syncer.sync(t.state.checkout().v4);
    expect(later.deletedChains).toEqual(first.staleChains);
    const text = t.exec.transactions.at(-1)!;
    const [, chain, kind, set] = ANCHORS.exec(text) ?? [];
    // The shared chain with the fewest rules and the shared set or map with the fewest elements.
    const table = t.exec.state.table('ip', 'kube-proxy')!;
    expect(table.chains.get(chain!)!.rules.length).toBeLessThanOrEqual(1);
    // nft prints the listed chain's rules; a rule naming a set it did not fetch makes it
    // report "Unknown set" (cluster-ips-check's `@cluster-ips` did at 10,000 services).
    expect(table.chains.get(chain!)!.rules.join('\n')).not.toMatch(new RegExp(`@(?!${set}\\b)`));
    expect(later.deletedChains).not.toContain(chain);
    expect(table.sets.get(set!)).toMatchObject({ kind, elements: new Map() });
    expect(text).not.toMatch(/^(add rule|add element|delete element) /m);

    // A transaction that deletes elements loads nft's full cache anyway: no listings.
    await t.clock.advance(1_000);
    t.state.onServiceDelete(svc('ns', 'c', { clusterIP: '172.30.0.9', ports: [{ name: 'p', port: 80 }] }));
    const del = await t.syncer.sync(t.state.checkout().v4);
    expect(del.deletedChains).toHaveLength(1);
    expect(t.exec.transactions.at(-1)).toMatch(/^delete element /m);
    expect(t.exec.transactions.at(-1)).not.toMatch(/^list /m);

    // The cleanup run lists them too; the table then equals a fresh full sync.
    await t.clock.advance(1_000);
    expect(await t.syncer.cleanup()).toHaveLength(2);
    expect(ANCHORS.test(t.exec.transactions.at(-1)!)).toBe(true);
    expect(t.dump()).toEqual(await t.fresh());
  });

  it('ends a transaction that deletes elements of one set with listings of a chain and that set', async () => {
    const t = setup('kube-proxy');
    for (const n of ['a', 'b']) t.add(n, `172.30.0.${n.charCodeAt(0) - 90}`, ['10.1.0.1']);
    await t.syncer.sync(t.state.checkout().v4);
    // The last endpoint of `a` goes: its service-ips element is deleted, a no-endpoint-services
    // element added (written in the declaration form, which needs no set from nft's cache).
    t.state.onEndpointSliceUpdate(undefined, slice('ns', 'a', [{ name: 'p', port: 8080 }], []));
    const r = await t.syncer.sync(t.state.checkout().v4);
    expect(r.elementChanges).toBeGreaterThan(0);
    const text = t.exec.transactions.at(-1)!;
    expect(text.match(/^delete element ip kube-proxy (\S+) /gm)).toEqual([
      'delete element ip kube-proxy service-ips ',
    ]);
    const [, chain, kind, set] = ANCHORS.exec(text) ?? [];
    expect([kind, set]).toEqual(['map', 'service-ips']);
    const rules = t.exec.state.table('ip', 'kube-proxy')!.chains.get(chain!)!.rules.join('\n');
    expect(rules).not.toMatch(/@(?!service-ips\b)/);
    await t.clock.advance(1_000);
    await t.syncer.cleanup();
    expect(t.dump()).toEqual(await t.fresh());

    // Elements of two sets (a service removed: cluster-ips and service-ips): no listings, since
    // one listing can name only one set and nft needs both.
    t.state.onServiceDelete(svc('ns', 'b', { clusterIP: '172.30.0.8', ports: [{ name: 'p', port: 80 }] }));
    await t.syncer.sync(t.state.checkout().v4);
    const two = t.exec.transactions.at(-1)!;
    expect(new Set(two.match(/^delete element ip kube-proxy \S+/gm))).toEqual(
      new Set(['delete element ip kube-proxy cluster-ips', 'delete element ip kube-proxy service-ips']),
    );
    expect(two).not.toMatch(/^list /m);
    await t.clock.advance(1_000);
    await t.syncer.cleanup();
    expect(t.dump()).toEqual(await t.fresh());
  });

  it('lists the set whose elements go only while it holds no more elements than the table has chains', () => {
    // A hand-made table: one chain, one port owning `n` elements of map `m` (the optimized
    // layout's endpoint maps hold far more elements than its ~40 chains; nft's full chain dump
    // is then the cheaper fill).
    const ruleset = (n: number): NftRuleset => ({
      family: 'ip',
      table: 't',
      tableComment: 'c',
      baseChains: [{ name: 'a', rules: ['counter'] }],
      baseSets: [{ name: 'm', kind: 'map', type: 'type inet_service : verdict' }],
      baseElements: [],
      ports: new Map([
        [
          'ns/s:p',
          {
            key: 'ns/s:p',
            serviceKey: 'ns/s',
            chains: [],
            sets: [],
            elements: Array.from({ length: n }, (_, i) => ({
              set: 'm',
              key: String(1000 + i),
              value: 'drop',
            })),
          },
        ],
      ]),
    });
    const lastPlan = (before: number, after: number) => {
      const planner = new NftSyncPlanner();
      planner.planFull(ruleset(before), 0).commit();
      return planner.planPartial(ruleset(after), 1, new Set(['ns/s'])).text;
    };
    // 1 chain: one element left of two is listed (2 ≤ 1 is false → no listing), one of one is.
    expect(lastPlan(2, 1)).toMatch(/^delete element ip t m \{ 1001 \}$/m);
    expect(lastPlan(2, 1)).not.toMatch(/^list /m);
    expect(lastPlan(1, 0)).toMatch(/\nlist chain ip t a\nlist map ip t m\n$/);
  });

  it('leaves due stale chains to cleanup() when asked (deleteStaleChains: false)', async () => {
    const t = setup('kube-proxy');
    t.add('a', '172.30.0.7', ['10.1.0.1']);
    await t.syncer.sync(t.state.checkout().v4);
    const move = (ip: string) =>
      t.state.onEndpointSliceUpdate(
        undefined,
        slice('ns', 'a', [{ name: 'p', port: 8080 }], [{ ip, node: NODE }]),
      );
    move('10.1.0.2');
    const first = await t.syncer.sync(t.state.checkout().v4);
    expect(first.staleChains).toHaveLength(1);
    await t.clock.advance(1_000);
    move('10.1.0.3');
    const kept = await t.syncer.sync(t.state.checkout().v4, { deleteStaleChains: false });
    expect(kept.deletedChains).toEqual([]);
    expect(t.exec.transactions.at(-1)).not.toMatch(/^delete chain /m);
    expect(t.syncer.nextCleanupAt()).toBeLessThanOrEqual(t.clock.now());
    expect(await t.syncer.cleanup()).toEqual(first.staleChains);
  });

  it('NftablesBackend: a change and the due stale chains go in one transaction; a failed one syncs fully', async () => {
    const clock = new FakeClock();
    const exec = new FakeNftExecutor();
    const state = new ProxyState({ nodeName: NODE, nodeIPs: [NODE_IP] });
    const backend = new NftablesBackend({ ipv4: { executor: exec }, render: TEST_OPTIONS, clock });
    const move = (name: string, ip: string) =>
      state.onEndpointSliceUpdate(
        undefined,
        slice('ns', name, [{ name: 'p', port: 8080 }], [{ ip, node: NODE }]),
      );
    for (const n of ['a', 'b', 'c']) {
      state.onServiceAdd(
        svc('ns', n, { clusterIP: `172.30.0.${n.charCodeAt(0) - 90}`, ports: [{ name: 'p', port: 80 }] }),
      );
      move(n, '10.1.0.1');
    }
    const sync = () => backend.sync(state.checkout(), { full: false });
    await sync();
    move('a', '10.1.0.2');
    const first = await sync();
    // The cleanup-only run is asked for once the backend has been idle for 10 s; a sync before
    // that (this one, 1 s later) takes the due chains along.
    expect(first.nextRunAtMs).toBe(clock.now() + 10_000);
    await clock.advance(1_000);
    const before = exec.transactions.length;
    move('b', '10.1.0.3');
    expect((await sync()).families[0]).toMatchObject({ full: false });
    expect(exec.transactions.length).toBe(before + 1);
    const text = exec.transactions.at(-1)!;
    expect(text).toMatch(/^delete chain ip kube-proxy endpoint-\S+-ns\/a\//m);
    expect(text).toMatch(/^add chain ip kube-proxy service-\S+-ns\/b\/tcp\/p \{ /m);
    expect(text).toMatch(/\nlist chain ip kube-proxy \S+\nlist (set|map) ip kube-proxy \S+\n$/);

    // It fails (as a busy chain would): counted as a cleanup failure, and the run syncs fully.
    await clock.advance(1_000);
    move('c', '10.1.0.4');
    exec.failNext = new Error('injected: chain busy');
    const failed = (await sync()).families[0]!;
    expect(failed).toMatchObject({ full: true, cleanupFailed: true });
    expect(failed.error).toBeUndefined();
    expect(exec.transactions.at(-1)).toMatch(/^flush chain /m);

    // nft's stderr names the failing command: a `delete chain` is a cleanup failure, anything
    // else fails this partial sync as before (no cleanup failure, no full sync in this run).
    const failWith = async (stderr: string, ip: string) => {
      move('a', ip);
      await sync();
      await clock.advance(1_000);
      move('b', `${ip}9`);
      exec.failNext = new NftCommandError(['nft', '-t', '-f', '-'], 1, stderr);
      return (await sync()).families[0]!;
    };
    const busy = await failWith(
      '/dev/stdin:9:1-40: Error: Could not process rule: Device or resource busy\ndelete chain ip kube-proxy endpoint-X\n',
      '10.1.0.5',
    );
    expect(busy).toMatchObject({ full: true, cleanupFailed: true });
    expect(busy.error).toBeUndefined();
    const other = await failWith(
      '/dev/stdin:2:1-30: Error: Could not process rule: No such file or directory\nadd chain ip kube-proxy service-X { jump y ; }\n',
      '10.1.0.6',
    );
    expect(other).toMatchObject({ full: false, failureKind: 'nftables' });
    expect(other.error).toBeInstanceOf(NftCommandError);
    expect(other.cleanupFailed).toBeUndefined();
  });

  it('fake: a listing names an object that must exist', async () => {
    const e = new FakeNftExecutor();
    await e.apply('add table ip t\nadd chain ip t a\nadd map ip t m { type inet_service : verdict ; }\n');
    await e.apply('list chain ip t a\nlist map ip t m\n');
    await expect(e.apply('list chain ip t zz')).rejects.toThrow(/No such file/);
    await expect(e.apply('list set ip t m')).rejects.toThrow(/No such file/);
    await expect(e.apply('delete chain ip t a\nlist chain ip t a')).rejects.toThrow(/No such file/);
  });
});

describe('a table left by the 1.31–1.33 layout', () => {
  it.each(LAYOUTS)('%s: the first sync re-hooks the base chains and removes the old ones', async (layout) => {
    const t = setup(layout);
    // What an older kube-proxy left: filter chains at dstnat-10 and a post-DNAT output chain.
    await t.exec.apply(
      [
        'add table ip kube-proxy { comment "rules for kube-proxy" ; }',
        'add chain ip kube-proxy cluster-ips-check',
        'add chain ip kube-proxy service-endpoints-check',
        'add chain ip kube-proxy firewall-check',
        'add chain ip kube-proxy filter-prerouting { type filter hook prerouting priority -110 ; }',
        'add chain ip kube-proxy filter-forward { type filter hook forward priority -110 ; }',
        'add chain ip kube-proxy filter-output-post-dnat { type filter hook output priority -90 ; }',
        'add rule ip kube-proxy filter-prerouting ct state new jump firewall-check',
        'add rule ip kube-proxy filter-forward ct state new jump service-endpoints-check',
        'add rule ip kube-proxy filter-output-post-dnat ct state new jump cluster-ips-check',
        '',
      ].join('\n'),
    );
    t.add('a', '172.30.0.10', ['10.180.0.1']);
    const first = await t.syncer.sync(t.state.checkout().v4, { full: true });
    expect(first.staleChains).toEqual(
      expect.arrayContaining(['filter-prerouting', 'filter-output-post-dnat']),
    );
    const table = t.exec.state.table('ip', 'kube-proxy')!;
    // Flushed at once (no rule of the old layout runs any more), hooks as current kube-proxy.
    expect(table.chains.get('filter-prerouting')?.rules).toEqual([]);
    expect(table.chains.get('filter-output-post-dnat')?.rules).toEqual([]);
    expect(table.chains.get('filter-forward')?.hook?.priority).toBe(0);
    expect(table.chains.get('filter-prerouting-pre-dnat')?.hook?.priority).toBe(-110);
    // Deleted by the cleanup after the delay; then the table is what a fresh sync writes.
    await t.clock.advance(1_000);
    await t.syncer.cleanup();
    expect(t.dump()).toEqual(await t.fresh());
  });
});
