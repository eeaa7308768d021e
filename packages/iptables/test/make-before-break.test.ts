/**
 * Make-before-break of the chunked full sync, proved with the tracer: for random pairs of
 * cluster states (old → new: services added, removed, re-typed, traffic policies and session
 * affinity flipped, endpoints moved, local or not), after EVERY payload of the new full sync —
 * and after a failure injected at every payload — every flow of every service (ClusterIP from
 * a pod and from outside, NodePort, external IP, load-balancer IP) has either the old ruleset's
 * outcome or the new one's (endpoints, verdict and masquerade alike), never a mix; a failed
 * payload leads to an immediate full retry that converges to the new ruleset.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { IptablesSyncer, type IptablesTables, tracePacket } from '../src/index.js';
import { FakeIptablesExecutor } from '../src/testing.js';
import { type Cluster, NODE_IP, slice, snapshot, svc, TEST_OPTIONS } from './helpers.js';

const POD = '10.0.0.5';
const EXTERNAL = '203.0.113.2';
const N = 5;
const p80 = [{ name: 'p80', port: 80 }];

interface SvcState {
  readonly present: boolean;
  readonly type: 'ClusterIP' | 'NodePort' | 'LoadBalancer';
  readonly etpLocal: boolean;
  readonly itpLocal: boolean;
  readonly affinity: boolean;
  readonly sourceRanges: boolean;
  /** Endpoint i of the pool: absent, local, or on another node. */
  readonly endpoints: readonly ('none' | 'local' | 'remote')[];
}

const svcState: fc.Arbitrary<SvcState> = fc.record({
  present: fc.boolean(),
  type: fc.constantFrom('ClusterIP', 'NodePort', 'LoadBalancer'),
  etpLocal: fc.boolean(),
  itpLocal: fc.boolean(),
  affinity: fc.boolean(),
  sourceRanges: fc.boolean(),
  endpoints: fc.array(fc.constantFrom('none', 'local', 'remote'), { minLength: 3, maxLength: 3 }),
});

/** A present service of `type` with these endpoints, every flag off unless `flags` sets it. */
function svcOf(
  type: SvcState['type'],
  endpoints: SvcState['endpoints'],
  flags: Partial<SvcState> = {},
): SvcState {
  return {
    present: true,
    type,
    etpLocal: false,
    itpLocal: false,
    affinity: false,
    sourceRanges: false,
    endpoints,
    ...flags,
  };
}

/** The states of the {@link N} services of one cluster. */
const clusterStates = fc.array(svcState, { minLength: N, maxLength: N });

function cluster(states: readonly SvcState[]): Cluster {
  const services = [];
  const slices = [];
  for (const [i, s] of states.entries()) {
    if (!s.present) continue;
    const name = `s${i}`;
    services.push(
      svc(
        'ns',
        name,
        {
          type: s.type,
          clusterIP: `172.30.0.${10 + i}`,
          ports: [{ name: 'p80', port: 80, ...(s.type !== 'ClusterIP' ? { nodePort: 30010 + i } : {}) }],
          ...(s.type !== 'ClusterIP' && s.etpLocal ? { externalTrafficPolicy: 'Local' } : {}),
          ...(s.itpLocal ? { internalTrafficPolicy: 'Local' } : {}),
          ...(s.affinity ? { sessionAffinity: 'ClientIP' } : {}),
          externalIPs: [`192.168.99.${10 + i}`],
          ...(s.type === 'LoadBalancer' && s.sourceRanges
            ? { loadBalancerSourceRanges: ['203.0.113.0/25'] }
            : {}),
        },
        s.type === 'LoadBalancer' ? { loadBalancer: { ingress: [{ ip: `5.6.7.${10 + i}` }] } } : undefined,
      ),
    );
    const eps = s.endpoints.flatMap((e, j) =>
      e === 'none' ? [] : [{ ip: `10.180.${i}.${j + 1}`, node: e === 'local' ? 'test-node' : 'other' }],
    );
    slices.push(slice('ns', name, p80, eps));
  }
  return { services, slices };
}

interface Flow {
  readonly name: string;
  readonly src: string;
  readonly dst: string;
  readonly port: number;
}

const FLOWS: Flow[] = Array.from({ length: N }, (_, i) => [
  { name: `s${i} cluster IP from a pod`, src: POD, dst: `172.30.0.${10 + i}`, port: 80 },
  { name: `s${i} cluster IP from outside`, src: EXTERNAL, dst: `172.30.0.${10 + i}`, port: 80 },
  { name: `s${i} node port`, src: EXTERNAL, dst: NODE_IP, port: 30010 + i },
  { name: `s${i} external IP`, src: EXTERNAL, dst: `192.168.99.${10 + i}`, port: 80 },
  { name: `s${i} load-balancer IP`, src: EXTERNAL, dst: `5.6.7.${10 + i}`, port: 80 },
]).flat();

function outcomes(tables: IptablesTables): Map<string, string> {
  const m = new Map<string, string>();
  for (const f of FLOWS) {
    const r = tracePacket(tables, { sourceIP: f.src, destIP: f.dst, destPort: f.port, nodeIPs: [NODE_IP] });
    m.set(
      f.name,
      JSON.stringify({ outcome: r.outcome, endpoints: [...r.endpoints].sort(), masq: r.masquerade }),
    );
  }
  return m;
}

const OPTIONS = { ...TEST_OPTIONS, nodeIP: NODE_IP };

/** An executor that checks every flow after each restore call. */
class CheckingExecutor extends FakeIptablesExecutor {
  check: (() => void) | undefined;
  calls = 0;
  override async restore(...args: Parameters<FakeIptablesExecutor['restore']>): Promise<void> {
    this.calls++;
    try {
      await super.restore(...args);
    } finally {
      this.check?.();
    }
  }
}

async function converge(c: Cluster): Promise<Map<string, string>> {
  const f = new FakeIptablesExecutor();
  await new IptablesSyncer({ executor: f, render: OPTIONS }).syncSnapshot(snapshot(c).snap);
  return outcomes(f.tables());
}

/**
 * Syncs `oldC` fully, then `newC` fully in small chunks, failing restore call `failAt`
 * (1-based, among the new sync's calls; 0 = no failure), checking every flow after every call.
 */
async function run(oldC: Cluster, newC: Cluster, failAt: number, failures = 1, restart = false) {
  const oldOut = await converge(oldC);
  const newOut = await converge(newC);
  const ipt = new CheckingExecutor();
  let syncer = new IptablesSyncer({ executor: ipt, render: OPTIONS, maxRulesPerChunk: 4 });
  await syncer.syncSnapshot(snapshot(oldC).snap);
  // A restarted process: a new syncer that knows nothing of the kernel's rules.
  if (restart) syncer = new IptablesSyncer({ executor: ipt, render: OPTIONS, maxRulesPerChunk: 4 });
  expect(outcomes(ipt.tables())).toEqual(oldOut);
  const base = ipt.calls;
  let failed = 0;
  const mixes: string[] = [];
  ipt.check = () => {
    const now = outcomes(ipt.tables());
    for (const f of FLOWS) {
      const o = now.get(f.name);
      if (o !== oldOut.get(f.name) && o !== newOut.get(f.name))
        mixes.push(
          `after call ${ipt.calls - base}: ${f.name}: ${o} (old ${oldOut.get(f.name)}, new ${newOut.get(f.name)})`,
        );
    }
    if (failAt > 0 && failed < failures && ipt.calls - base === failAt - 1 + failed) {
      failed++;
      ipt.failNextRestore();
    }
  };
  if (failAt === 1) {
    failed++;
    ipt.failNextRestore();
  }
  const next = snapshot(newC).snap;
  let error: unknown;
  try {
    await syncer.syncSnapshot(next, { full: true });
  } catch (e) {
    error = e;
  }
  return { ipt, syncer, mixes, error, newOut, calls: ipt.calls - base, next };
}

describe('chunked full sync: make before break', () => {
  it('a typical change (endpoints moved, policy flipped, service added and removed) needs several payloads', async () => {
    const a = cluster([
      svcOf('NodePort', ['local', 'remote', 'none']),
      svcOf('LoadBalancer', ['remote', 'none', 'none'], { sourceRanges: true }),
      svcOf('ClusterIP', ['remote', 'remote', 'none']),
    ]);
    const b = cluster([
      svcOf('NodePort', ['none', 'remote', 'remote'], { etpLocal: true }),
      svcOf('LoadBalancer', ['remote', 'none', 'none'], { present: false, sourceRanges: true }),
      svcOf('ClusterIP', ['remote', 'remote', 'none']),
      svcOf('LoadBalancer', ['local', 'none', 'none'], { affinity: true }),
    ]);
    const r = await run(a, b, 0);
    expect(r.error).toBeUndefined();
    expect(r.calls).toBeGreaterThan(2);
    expect(r.mixes).toEqual([]);
    expect(outcomes(r.ipt.tables())).toEqual(r.newOut);
  });

  it('property: after every payload, and after a failure at any payload, each flow is old or new; the retry converges', async () => {
    await fc.assert(
      fc.asyncProperty(
        clusterStates,
        clusterStates,
        fc.integer({ min: 0, max: 12 }),
        async (before, after, failAt) => {
          const r = await run(cluster(before), cluster(after), failAt);
          expect(r.mixes).toEqual([]);
          // One failure: the syncer retried the full sync at once and converged.
          expect(r.error).toBeUndefined();
          expect(outcomes(r.ipt.tables())).toEqual(r.newOut);
          expect(r.syncer.planner.noBaseline).toBeUndefined();
        },
      ),
      { numRuns: 60 },
    );
  }, 120_000);

  it('a restarted process (new syncer over the kernel of the old one) switches make-before-break too', async () => {
    await fc.assert(
      fc.asyncProperty(
        clusterStates,
        clusterStates,
        fc.integer({ min: 0, max: 6 }),
        async (before, after, failAt) => {
          const r = await run(cluster(before), cluster(after), failAt, 1, true);
          expect(r.mixes).toEqual([]);
          expect(r.error).toBeUndefined();
          expect(outcomes(r.ipt.tables())).toEqual(r.newOut);
          // The old process's chains no longer written are gone.
          const fresh = new FakeIptablesExecutor();
          await new IptablesSyncer({ executor: fresh, render: OPTIONS }).syncSnapshot(r.next);
          expect(Object.keys(r.ipt.snapshot().nat ?? {}).sort()).toEqual(
            Object.keys(fresh.snapshot().nat ?? {}).sort(),
          );
        },
      ),
      { numRuns: 30 },
    );
  }, 120_000);

  it('two failures in a row: the sync throws, no flow is mixed, and the next sync is full and converges', async () => {
    await fc.assert(
      fc.asyncProperty(
        clusterStates,
        clusterStates,
        fc.integer({ min: 2, max: 8 }),
        async (before, after, failAt) => {
          const r = await run(cluster(before), cluster(after), failAt, 2);
          expect(r.mixes).toEqual([]);
          if (r.error === undefined) return; // fewer payloads than failAt: nothing failed
          expect(r.syncer.planner.noBaseline).toBe('failure');
          r.ipt.check = undefined;
          await r.syncer.syncSnapshot(r.next);
          expect(outcomes(r.ipt.tables())).toEqual(r.newOut);
        },
      ),
      { numRuns: 30 },
    );
  }, 120_000);
});
