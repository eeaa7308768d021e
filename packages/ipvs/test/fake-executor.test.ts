/** The fake kernel's semantics, and convergence of diff + apply over random plan sequences. */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { diffIpvs, type IpvsOperation, IpvsOperationError, type IpvsState, planIpvs } from '../src/index.js';
import { FakeIpvsExecutor } from '../src/testing.js';
import { genCluster, randomSnapshot } from './arbitraries.js';
import { TEST_OPTIONS } from './helpers.js';

const VS = { address: '10.96.0.1', port: 443, protocol: 'TCP' as const };
const spec = { ...VS, scheduler: 'rr', flags: [], timeoutSeconds: 0 };
const set = {
  name: 'S',
  type: 'hash:ip,port' as const,
  family: 'inet' as const,
  hashSize: 1024,
  maxElem: 2,
  portRange: '0-65535',
};

async function refused(k: FakeIpvsExecutor, op: IpvsOperation): Promise<string> {
  try {
    await k.apply([op]);
  } catch (e) {
    expect(e).toBeInstanceOf(IpvsOperationError);
    return (e as Error).message;
  }
  throw new Error(`${op.kind} was accepted`);
}

describe('FakeIpvsExecutor', () => {
  it('refuses duplicates and missing objects with the tools’ messages', async () => {
    const k = new FakeIpvsExecutor();
    await k.apply([
      { kind: 'add-virtual-server', virtualServer: spec },
      {
        kind: 'add-real-server',
        virtualServer: VS,
        realServer: { address: '10.0.0.1', port: 6443, weight: 1 },
      },
      { kind: 'bind-address', address: '10.96.0.1' },
      { kind: 'create-ipset', set },
      { kind: 'ipset-add', set: 'S', entry: '10.96.0.1,tcp:443' },
    ]);
    expect(await refused(k, { kind: 'add-virtual-server', virtualServer: spec })).toMatch(
      /Service already exists/,
    );
    expect(await refused(k, { kind: 'delete-virtual-server', virtualServer: { ...VS, port: 1 } })).toMatch(
      /No such service/,
    );
    expect(
      await refused(k, {
        kind: 'add-real-server',
        virtualServer: VS,
        realServer: { address: '10.0.0.1', port: 6443, weight: 1 },
      }),
    ).toMatch(/Destination already exists/);
    expect(
      await refused(k, {
        kind: 'delete-real-server',
        virtualServer: VS,
        realServer: { address: '10.0.0.2', port: 6443 },
      }),
    ).toMatch(/No such destination/);
    expect(
      await refused(k, {
        kind: 'add-real-server',
        virtualServer: VS,
        realServer: { address: 'fd00::1', port: 1, weight: 1 },
      }),
    ).toMatch(/family/);
    expect(await refused(k, { kind: 'bind-address', address: '10.96.0.1' })).toMatch(/File exists/);
    expect(await refused(k, { kind: 'unbind-address', address: '10.96.0.2' })).toMatch(
      /Cannot assign requested address/,
    );
    expect(await refused(k, { kind: 'create-ipset', set })).toMatch(/already exists/);
    expect(await refused(k, { kind: 'ipset-add', set: 'S', entry: '10.96.0.1,tcp:443' })).toMatch(
      /already added/,
    );
    expect(await refused(k, { kind: 'ipset-del', set: 'S', entry: '10.96.0.9,tcp:443' })).toMatch(
      /it's not added/,
    );
    expect(await refused(k, { kind: 'ipset-add', set: 'T', entry: '10.96.0.1,tcp:443' })).toMatch(
      /does not exist/,
    );
    expect(await refused(k, { kind: 'ipset-add', set: 'S', entry: '10.96.0.1' })).toMatch(/Syntax error/);
    expect(await refused(k, { kind: 'ipset-add', set: 'S', entry: 'fd00::1,tcp:1' })).toMatch(/Syntax error/);
    await k.apply([{ kind: 'ipset-add', set: 'S', entry: '010.96.0.2,tcp:443' }]);
    expect(await refused(k, { kind: 'ipset-add', set: 'S', entry: '10.96.0.3,tcp:443' })).toMatch(
      /Hash is full/,
    );
    expect(k.state().ipsets[0]!.entries).toEqual(['10.96.0.1,tcp:443', '10.96.0.2,tcp:443']);
  });

  it('applies in order and stops at the first failure (operations before it stay)', async () => {
    const k = new FakeIpvsExecutor();
    await expect(
      k.apply([
        { kind: 'bind-address', address: '10.96.0.1' },
        { kind: 'bind-address', address: '10.96.0.1' },
        { kind: 'bind-address', address: '10.96.0.2' },
      ]),
    ).rejects.toMatchObject({ index: 1 });
    expect(k.state().boundAddresses).toEqual(['10.96.0.1']);
  });

  it('deleting a virtual server removes its real servers and their connection counts', async () => {
    const k = new FakeIpvsExecutor({
      virtualServers: [{ ...spec, realServers: [{ address: '10.0.0.1', port: 1, weight: 1 }] }],
      boundAddresses: [],
      ipsets: [],
    });
    k.setConnections(VS, { address: '10.0.0.1', port: 1 }, { active: 2, inactive: 0 });
    expect([...(await k.readConnections()).values()]).toEqual([{ active: 2, inactive: 0 }]);
    await k.apply([{ kind: 'delete-virtual-server', virtualServer: VS }]);
    expect(k.state().virtualServers).toEqual([]);
    expect((await k.readConnections()).size).toBe(0);
  });
});

/** The part of a state a plan manages: its sets only. */
function managed(s: IpvsState, names: ReadonlySet<string>): IpvsState {
  return { ...s, ipsets: s.ipsets.filter((x) => names.has(x.name)) };
}

describe('diff + fake executor converge', () => {
  it('for random sequences of plans (both families, hostile names), from any start', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(genCluster, { minLength: 1, maxLength: 4 }),
        fc.constantFrom<4 | 6>(4, 6),
        async (sequence, family) => {
          const kernel = new FakeIpvsExecutor();
          // Someone else's set survives every sync untouched.
          await kernel.apply([{ kind: 'create-ipset', set: { ...set, name: 'OTHER', maxElem: 65536 } }]);
          const options = family === 4 ? TEST_OPTIONS : {};
          for (const gen of sequence) {
            const plan = planIpvs(randomSnapshot(gen, family), options);
            const { operations } = diffIpvs(await kernel.read(), plan);
            await kernel.apply(operations);
            const names = new Set(plan.ipsets.map((s) => s.name));
            const expected = {
              virtualServers: plan.virtualServers.map(({ servicePort: _s, kind: _k, ...vs }) => vs),
              boundAddresses: plan.boundAddresses,
              ipsets: [...plan.ipsets].sort((a, b) => (a.name < b.name ? -1 : 1)),
            };
            expect(managed(kernel.state(), names)).toEqual(expected);
            expect(diffIpvs(await kernel.read(), plan).operations).toEqual([]);
            expect(kernel.state().ipsets.some((s) => s.name === 'OTHER')).toBe(true);
          }
        },
      ),
      { numRuns: 60 },
    );
  });
});
