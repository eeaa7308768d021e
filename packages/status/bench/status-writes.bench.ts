// 110 pods on one node against the mini API server: API writes per minute in steady state
// (pod status + node status + Lease) over 10 fake minutes, next to what the kubelet's cadence
// implies (Lease every 10 s, node status every 5 min, no pod status write without a change);
// and the real time from a pod's first status (its ADD) to its status write landing, next to
// the floor of one bare PATCH measured in the same run. Prints figures; asserts nothing.
import type { V1Pod, V1PodStatus } from '@kubernetes/client-node';
import { FakeClock } from '@nodeagent/core/testing';
import { startTestApiServer, type TestApiServer } from '@nodeagent/mini-apiserver/testing';
import { it } from 'vitest';
import {
  type MachineInfo,
  NodeLease,
  NodeStatusManager,
  PodStatusManager,
  type StatusApi,
} from '../src/index.js';
import { fetchApi } from '../test/support/fetch-api.js';

const PODS = 110;
const MINUTES = 10;
const MACHINE: MachineInfo = {
  cpus: 8,
  memoryBytes: 32 * 1024 ** 3,
  hugePages: {},
  ephemeralStorageBytes: 200 * 1024 ** 3,
  arch: 'amd64',
  os: 'linux',
  kernelVersion: '6.1.0',
  osImage: 'Debian GNU/Linux 12 (bookworm)',
  machineId: 'bench',
  systemUuid: 'bench',
  bootId: 'bench',
  hostname: 'bench',
  internalIp: '10.0.0.2',
};

function createPods(server: TestApiServer, prefix: string): V1Pod[] {
  return Array.from(
    { length: PODS },
    (_, i) =>
      server.server.store.create('pods', {
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: { name: `${prefix}-${i}`, namespace: 'default' },
        spec: { nodeName: 'n1', containers: [{ name: 'c', image: 'busybox' }] },
      }) as unknown as V1Pod,
  );
}

/** What the agent computes for a running pod; fresh Date objects (with ms) every time, as a real sync does. */
function runningStatus(startedMs: number): V1PodStatus {
  return {
    phase: 'Running',
    podIP: '10.244.0.9',
    conditions: [
      { type: 'Initialized', status: 'True' },
      { type: 'Ready', status: 'True' },
      { type: 'ContainersReady', status: 'True' },
      { type: 'PodScheduled', status: 'True' },
    ],
    containerStatuses: [
      {
        name: 'c',
        image: 'busybox',
        imageID: 'sha256:1',
        containerID: 'containerd://abc',
        ready: true,
        started: true,
        restartCount: 0,
        state: { running: { startedAt: new Date(startedMs + 123) } },
      },
    ],
  };
}

/** Waits (in real time) until the API server has seen no request for `quietMs`. */
async function quiesce(server: TestApiServer, quietMs = 15): Promise<void> {
  let seen = -1;
  for (;;) {
    const n = server.server.requests.length + (server.server.requests.at(-1)?.path.length ?? 0);
    if (n === seen) return;
    seen = n;
    await new Promise((r) => setTimeout(r, quietMs));
  }
}

it('steady-state API writes per minute, 110 pods, fake clock', async () => {
  const server = await startTestApiServer({ requestLogSize: 1_000_000 });
  const clock = new FakeClock({ startMs: Date.UTC(2025, 0, 1) });
  const api = fetchApi(server.url);
  const pods = createPods(server, 'steady');
  // The informer's copy is what the API stores: the full syncs compare against it (reconcile).
  const byUid = new Map(pods.map((p) => [p.metadata?.uid ?? '', p.metadata?.name ?? '']));
  const podLookup = (uid: string) => {
    const name = byUid.get(uid);
    return name === undefined
      ? undefined
      : (server.server.store.tryGet('pods', 'default', name) as unknown as V1Pod);
  };
  const podStatus = new PodStatusManager({ api, clock, podLookup });
  const node = new NodeStatusManager({ api, clock, nodeName: 'n1', machine: MACHINE });
  const lease = new NodeLease({ api, clock, nodeName: 'n1', nodeUid: () => node.nodeUid, random: () => 0.5 });
  const startedMs = clock.now();
  const step = async (ms: number) => {
    await clock.advance(ms);
    await quiesce(server);
  };
  const start = node.start();
  await quiesce(server);
  await start;
  await lease.start();
  await podStatus.start();
  for (const p of pods) podStatus.setPodStatus(p, runningStatus(startedMs));
  await quiesce(server);
  // Warm-up: one minute, then measure.
  for (let s = 0; s < 60; s++) await step(1_000);
  const from = server.server.requests.length;
  for (let s = 0; s < MINUTES * 60; s++) {
    // Every pod is re-synced every 60 s (the pod workers' resync), with the same status.
    if (s % 60 === 0) for (const p of pods) podStatus.setPodStatus(p, runningStatus(startedMs));
    await step(1_000);
  }
  const window = server.server.requests.slice(from);
  const count = (method: string, suffix: RegExp) =>
    window.filter((r) => r.method === method && suffix.test(r.path)).length / MINUTES;
  const rows = [
    ['pod status PATCH', count('PATCH', /\/pods\/[^/]+\/status$/), 0],
    ['pod GET', count('GET', /\/pods\//), 0],
    ['node status PATCH', count('PATCH', /\/nodes\/n1\/status$/), 1 / 5],
    ['node GET', count('GET', /\/nodes\/n1$/), 0],
    ['lease PUT', count('PUT', /\/leases\/n1$/), 60 / 10],
    ['lease GET', count('GET', /\/leases\/n1$/), 0],
  ] as const;
  const writes = window.filter((r) => r.method !== 'GET').length / MINUTES;
  console.log(
    `\n@nodeagent/status: ${PODS} pods, ${MINUTES} fake minutes after a 1 min warm-up (per minute)`,
  );
  console.log('  request              ours   kubelet cadence');
  for (const [name, ours, ref] of rows)
    console.log(`  ${name.padEnd(20)} ${ours.toFixed(2).padStart(5)}   ${ref.toFixed(2)}`);
  console.log(`  all writes           ${writes.toFixed(2).padStart(5)}   ${(60 / 10 + 1 / 5).toFixed(2)}`);
  await podStatus.stop();
  await lease.stop();
  await node.stop();
  await server.stop();
});

function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? Number.NaN;
}

/** Wraps a StatusApi to report when each pod's first status PATCH resolved. */
function timedApi(api: StatusApi, landed: Map<string, number>): StatusApi {
  return {
    ...api,
    get: (path, signal) => api.get(path, signal),
    create: (path, body, signal) => api.create(path, body, signal),
    replace: (path, body, signal) => api.replace(path, body, signal),
    delete: (path, options, signal) => api.delete(path, options, signal),
    patch: async <T>(path: string, kind: 'merge' | 'strategic', body: unknown, signal?: AbortSignal) => {
      const res = await api.patch<T>(path, kind, body, signal);
      if (!landed.has(path)) landed.set(path, performance.now());
      return res;
    },
  };
}

it('time from a pod ADD to its first status write (real time)', async () => {
  const server = await startTestApiServer();
  const api = fetchApi(server.url);
  // Floor: one bare strategic PATCH of the same status, the pod's GET skipped.
  const floorPods = createPods(server, 'floor');
  const floor: number[] = [];
  for (const p of floorPods) {
    const t0 = performance.now();
    await api.patch(`/api/v1/namespaces/default/pods/${p.metadata?.name}/status`, 'strategic', {
      metadata: { uid: p.metadata?.uid },
      status: runningStatus(Date.now()),
    });
    floor.push(performance.now() - t0);
  }
  // One pod at a time (a steady trickle of ADDs).
  const landed = new Map<string, number>();
  const single = new PodStatusManager({ api: timedApi(api, landed) });
  await single.start();
  const one: number[] = [];
  for (const p of createPods(server, 'one')) {
    const path = `/api/v1/namespaces/default/pods/${p.metadata?.name}/status`;
    const t0 = performance.now();
    single.setPodStatus(p, runningStatus(Date.now()));
    while (!landed.has(path)) await new Promise((r) => setImmediate(r));
    one.push((landed.get(path) as number) - t0);
  }
  await single.stop();
  // A burst: 110 ADDs at once (an agent start, or a node filling up).
  const burstLanded = new Map<string, number>();
  const burst = new PodStatusManager({ api: timedApi(api, burstLanded) });
  await burst.start();
  const burstPods = createPods(server, 'burst');
  const t0 = performance.now();
  for (const p of burstPods) burst.setPodStatus(p, runningStatus(Date.now()));
  while (burstLanded.size < PODS) await new Promise((r) => setTimeout(r, 1));
  const burstTimes = [...burstLanded.values()].map((t) => t - t0);
  await burst.stop();
  const fmt = (v: number[]) =>
    `p50 ${percentile(v, 50).toFixed(2)} ms  p99 ${percentile(v, 99).toFixed(2)} ms  max ${Math.max(...v).toFixed(2)} ms`;
  console.log(
    `\n@nodeagent/status: time from setPodStatus (pod ADD) to its status PATCH answered, ${PODS} pods`,
  );
  console.log(`  floor: one bare PATCH       ${fmt(floor)}`);
  console.log(`  ours, one ADD at a time     ${fmt(one)}`);
  console.log(`  ours, 110 ADDs at once      ${fmt(burstTimes)}`);
  await server.stop();
});
