/** diffIpvs ordering and graceful termination, directly and through IpvsReconciler with FakeClock. */
import { FakeClock } from '@nodeagent/core/testing';
import { describe, expect, it } from 'vitest';
import {
  diffIpvs,
  type IpvsOperation,
  IpvsReconciler,
  type IpvsState,
  uniqueRealServerKey,
  type VirtualServer,
} from '../src/index.js';
import { FakeIpvsExecutor } from '../src/testing.js';

const VS = { address: '172.30.0.41', port: 80, protocol: 'TCP' as const };
const UDP_VS = { address: '172.30.0.41', port: 53, protocol: 'UDP' as const };

function vs(
  id: typeof VS | typeof UDP_VS,
  reals: [string, number][],
  extra: Partial<VirtualServer> = {},
): VirtualServer {
  return {
    ...id,
    scheduler: 'rr',
    flags: [],
    timeoutSeconds: 0,
    realServers: reals.map(([address, weight]) => ({ address, port: id.port, weight })),
    ...extra,
  };
}

function state(servers: VirtualServer[], bound: string[] = ['172.30.0.41']): IpvsState {
  return {
    virtualServers: servers,
    boundAddresses: bound,
    ipsets: [
      {
        name: 'KUBE-CLUSTER-IP',
        type: 'hash:ip,port',
        family: 'inet',
        hashSize: 1024,
        maxElem: 65536,
        portRange: '0-65535',
        entries: servers.map((s) => `${s.address},${s.protocol.toLowerCase()}:${s.port}`),
      },
    ],
  };
}

const kinds = (ops: readonly IpvsOperation[]) => ops.map((o) => o.kind);

describe('diffIpvs', () => {
  it('creates everything from scratch in dependency order', () => {
    const d = diffIpvs(
      { virtualServers: [], boundAddresses: [], ipsets: [] },
      state([vs(VS, [['10.0.0.1', 1]])]),
    );
    expect(kinds(d.operations)).toEqual([
      'create-ipset',
      'ipset-add',
      'bind-address',
      'add-virtual-server',
      'add-real-server',
    ]);
  });

  it('is empty when current equals desired', () => {
    const s = state([vs(VS, [['10.0.0.1', 1]])]);
    expect(diffIpvs(s, s).operations).toEqual([]);
  });

  it('removes stale objects after adding new ones', () => {
    const cur = state([vs(VS, [['10.0.0.1', 1]])], ['172.30.0.41', '172.30.0.99']);
    const other = { address: '172.30.0.42', port: 80, protocol: 'TCP' as const };
    const des = state([vs(other as typeof VS, [['10.0.0.2', 1]])], ['172.30.0.42']);
    expect(kinds(diffIpvs(cur, des).operations)).toEqual([
      'ipset-add',
      'bind-address',
      'add-virtual-server',
      'add-real-server',
      'delete-virtual-server',
      'unbind-address',
      'unbind-address',
      'ipset-del',
    ]);
  });

  it('updates scheduler / persistence and resets weights (first sync after a restart)', () => {
    const cur = state([vs(VS, [['10.0.0.1', 0]])]);
    const des = state([vs(VS, [['10.0.0.1', 1]], { flags: ['persistent'], timeoutSeconds: 10800 })]);
    expect(diffIpvs(cur, des).operations).toEqual([
      {
        kind: 'update-virtual-server',
        virtualServer: { ...VS, scheduler: 'rr', flags: ['persistent'], timeoutSeconds: 10800 },
      },
      {
        kind: 'update-real-server',
        virtualServer: VS,
        realServer: { address: '10.0.0.1', port: 80, weight: 1 },
      },
    ]);
  });

  it('recreates a set whose type changed', () => {
    const cur = state([]);
    const des: IpvsState = { ...cur, ipsets: [{ ...cur.ipsets[0]!, type: 'hash:ip', entries: ['1.2.3.4'] }] };
    expect(kinds(diffIpvs(cur, des).operations)).toEqual(['destroy-ipset', 'create-ipset', 'ipset-add']);
  });

  it('leaves the other family alone when ipFamily is given', () => {
    const v6 = { address: 'fd00::41', port: 80, protocol: 'TCP' as const };
    const cur: IpvsState = {
      virtualServers: [vs(v6 as typeof VS, [['fd00::1', 1]])],
      boundAddresses: ['fd00::41'],
      ipsets: [],
    };
    const des: IpvsState = { virtualServers: [], boundAddresses: [], ipsets: [] };
    expect(kinds(diffIpvs(cur, des, { ipFamily: 4 }).operations)).toEqual([]);
    expect(kinds(diffIpvs(cur, des).operations)).toEqual(['delete-virtual-server', 'unbind-address']);
  });

  describe('graceful termination', () => {
    const cur = state([
      vs(VS, [
        ['10.0.0.1', 1],
        ['10.0.0.2', 1],
      ]),
      vs(UDP_VS, [
        ['10.0.0.1', 1],
        ['10.0.0.2', 1],
      ]),
    ]);
    const des = state([vs(VS, [['10.0.0.1', 1]]), vs(UDP_VS, [['10.0.0.1', 1]])]);
    const tcpKey = uniqueRealServerKey(VS, { address: '10.0.0.2', port: 80 });
    const udpKey = uniqueRealServerKey(UDP_VS, { address: '10.0.0.2', port: 53 });

    it('deletes at once without connections', () => {
      const d = diffIpvs(cur, des, { connections: new Map([[tcpKey, { active: 0, inactive: 0 }]]) });
      expect(kinds(d.operations)).toEqual(['delete-real-server', 'delete-real-server']);
      expect(d.terminating.size).toBe(0);
    });

    it('drains a busy TCP real server at weight 0; UDP is deleted at once', () => {
      const busy = { active: 1, inactive: 2 };
      const d = diffIpvs(cur, des, {
        connections: new Map([
          [tcpKey, busy],
          [udpKey, busy],
        ]),
        nowMs: 1000,
      });
      expect(d.operations).toEqual([
        {
          kind: 'update-real-server',
          virtualServer: VS,
          realServer: { address: '10.0.0.2', port: 80, weight: 0 },
        },
        { kind: 'delete-real-server', virtualServer: UDP_VS, realServer: { address: '10.0.0.2', port: 53 } },
      ]);
      expect([...d.terminating.values()]).toEqual([
        {
          key: tcpKey,
          virtualServer: VS,
          realServer: { address: '10.0.0.2', port: 80, weight: 0 },
          sinceMs: 1000,
        },
      ]);
    });

    it('keeps the start time across diffs and deletes once the timeout passes', () => {
      const busy = new Map([[tcpKey, { active: 0, inactive: 1 }]]);
      const first = diffIpvs(cur, des, { connections: busy, nowMs: 0, gracefulTimeoutMs: 5000 });
      const drainingState = state([
        vs(VS, [
          ['10.0.0.1', 1],
          ['10.0.0.2', 0],
        ]),
        vs(UDP_VS, [['10.0.0.1', 1]]),
      ]);
      const second = diffIpvs(drainingState, des, {
        connections: busy,
        nowMs: 4999,
        gracefulTimeoutMs: 5000,
        terminating: first.terminating,
      });
      expect(second.operations).toEqual([]);
      expect(second.terminating.get(tcpKey)?.sinceMs).toBe(0);
      const third = diffIpvs(drainingState, des, {
        connections: busy,
        nowMs: 5000,
        gracefulTimeoutMs: 5000,
        terminating: second.terminating,
      });
      expect(kinds(third.operations)).toEqual(['delete-real-server']);
      expect(third.terminating.size).toBe(0);
    });

    it('an endpoint that comes back leaves the queue with its weight restored', () => {
      const busy = new Map([[tcpKey, { active: 3, inactive: 0 }]]);
      const first = diffIpvs(cur, des, { connections: busy });
      const drainingState = state([
        vs(VS, [
          ['10.0.0.1', 1],
          ['10.0.0.2', 0],
        ]),
      ]);
      const back = diffIpvs(
        drainingState,
        state([
          vs(VS, [
            ['10.0.0.1', 1],
            ['10.0.0.2', 1],
          ]),
        ]),
        {
          connections: busy,
          terminating: first.terminating,
        },
      );
      expect(back.operations).toEqual([
        {
          kind: 'update-real-server',
          virtualServer: VS,
          realServer: { address: '10.0.0.2', port: 80, weight: 1 },
        },
      ]);
      expect(back.terminating.size).toBe(0);
    });
  });
});

describe('IpvsReconciler', () => {
  it('drains with FakeClock: weight 0, re-checked every minute, deleted once connections end', async () => {
    const clock = new FakeClock();
    const kernel = new FakeIpvsExecutor();
    const r = new IpvsReconciler({ executor: kernel, stats: kernel, clock });
    const two = state([
      vs(VS, [
        ['10.0.0.1', 1],
        ['10.0.0.2', 1],
      ]),
    ]);
    const one = state([vs(VS, [['10.0.0.1', 1]])]);
    await r.sync(two);
    kernel.setConnections(VS, { address: '10.0.0.2', port: 80 }, { active: 1, inactive: 0 });
    const res = await r.sync(one);
    expect(res.terminating.map((t) => t.key)).toEqual(['172.30.0.41:80/TCP/10.0.0.2:80']);
    expect(kernel.state().virtualServers[0]!.realServers).toEqual([
      { address: '10.0.0.1', port: 80, weight: 1 },
      { address: '10.0.0.2', port: 80, weight: 0 },
    ]);
    await clock.advance(60_000);
    expect(kernel.state().virtualServers[0]!.realServers).toHaveLength(2);
    kernel.setConnections(VS, { address: '10.0.0.2', port: 80 }, { active: 0, inactive: 0 });
    await clock.advance(59_999);
    expect(kernel.state().virtualServers[0]!.realServers).toHaveLength(2);
    await clock.advance(1);
    expect(kernel.state()).toEqual(one);
    expect(r.terminating).toEqual([]);
    expect(clock.pendingTimers()).toBe(0);
    r.close();
  });

  it('gives up waiting after gracefulTimeoutMs', async () => {
    const clock = new FakeClock();
    const kernel = new FakeIpvsExecutor();
    const r = new IpvsReconciler({ executor: kernel, stats: kernel, clock, gracefulTimeoutMs: 150_000 });
    await r.sync(
      state([
        vs(VS, [
          ['10.0.0.1', 1],
          ['10.0.0.2', 1],
        ]),
      ]),
    );
    kernel.setConnections(VS, { address: '10.0.0.2', port: 80 }, { active: 5, inactive: 5 });
    await r.sync(state([vs(VS, [['10.0.0.1', 1]])]));
    await clock.advance(120_000);
    expect(kernel.state().virtualServers[0]!.realServers).toHaveLength(2);
    await clock.advance(60_000);
    expect(kernel.state().virtualServers[0]!.realServers).toHaveLength(1);
    r.close();
  });

  it('without a stats source deletes at once; close() stops the timer and refuses syncs', async () => {
    const clock = new FakeClock();
    const kernel = new FakeIpvsExecutor();
    const r = new IpvsReconciler({ executor: kernel, clock });
    await r.sync(
      state([
        vs(VS, [
          ['10.0.0.1', 1],
          ['10.0.0.2', 1],
        ]),
      ]),
    );
    await r.sync(state([vs(VS, [['10.0.0.1', 1]])]));
    expect(kernel.state().virtualServers[0]!.realServers).toHaveLength(1);
    r.close();
    await expect(r.sync(state([]))).rejects.toThrow(/closed/);
  });

  it('a failed apply keeps the queue and the next sync converges', async () => {
    const clock = new FakeClock();
    const kernel = new FakeIpvsExecutor();
    const r = new IpvsReconciler({ executor: kernel, stats: kernel, clock });
    const want = state([vs(VS, [['10.0.0.1', 1]])]);
    kernel.failWhen((op) => (op.kind === 'add-real-server' ? 'Memory allocation problem' : undefined));
    await expect(r.sync(want)).rejects.toThrow(/Memory allocation problem/);
    kernel.failWhen(undefined);
    await r.sync(want);
    expect(kernel.state()).toEqual(want);
    r.close();
  });
});
