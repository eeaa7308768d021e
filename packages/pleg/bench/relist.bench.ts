// Relist cost with 1,000 pods / 5,000 containers through the FakeRuntime over a real unix
// socket, next to the floor measured in the same run: the bare two CRI list calls
// (ListPodSandbox + ListContainers, in parallel, as the relist makes them). Also the cold
// first relist (every pod inspected) and a relist where 10 pods changed. Prints a table;
// asserts nothing about speed (target: steady relist < 100 ms; the kubelet's budget is 1 s).
import { FakeClock } from '@nodeagent/core/testing';
import { createCriClient } from '@nodeagent/cri';
import { FakeRuntime } from '@nodeagent/cri/testing';
import { afterAll, beforeAll, it } from 'vitest';
import { criPodStatusSource, criRuntimeLister, GenericPLEG } from '../src/index.js';
import { BUSYBOX, kubeletContainer, kubeletPod } from '../test/helpers.js';

const PODS = 1_000;
const CONTAINERS_PER_POD = 5;
const ROUNDS = 30;

const clock = new FakeClock();
const fake = new FakeRuntime({ clock, images: [{ ref: BUSYBOX }] });
let cri: ReturnType<typeof createCriClient>;
const containerIds: string[] = [];

beforeAll(async () => {
  cri = createCriClient(await fake.start());
  for (let p = 0; p < PODS; p++) {
    const pod = kubeletPod(`bench-${p}`);
    const sandbox = fake.addSandbox(pod);
    for (let c = 0; c < CONTAINERS_PER_POD; c++)
      containerIds.push(await fake.addContainer(sandbox, kubeletContainer(pod, `c${c}`)));
  }
});

afterAll(async () => {
  cri?.close();
  await fake.stop();
});

interface Stats {
  readonly name: string;
  readonly samples: number[];
}

function row({ name, samples }: Stats): Record<string, string | number> {
  const sorted = [...samples].sort((a, b) => a - b);
  const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? Number.NaN;
  return {
    scenario: name,
    runs: samples.length,
    'median ms': Number(at(0.5).toFixed(1)),
    'p90 ms': Number(at(0.9).toFixed(1)),
    'min ms': Number((sorted[0] ?? Number.NaN).toFixed(1)),
  };
}

async function time(fn: () => Promise<unknown>): Promise<number> {
  const start = performance.now();
  await fn();
  return performance.now() - start;
}

it(`relist of ${PODS} pods / ${PODS * CONTAINERS_PER_POD} containers over a real socket`, async () => {
  const pleg = new GenericPLEG({
    lister: criRuntimeLister(cri),
    statusSource: criPodStatusSource(cri),
    clock,
  });
  const floor: number[] = [];
  const steady: number[] = [];
  const changed: number[] = [];
  // Our own share: the same 1,000 listed pods from memory (grouping already done), diff + bookkeeping only.
  const snapshot = await criRuntimeLister(cri).listPods();
  const memoryPleg = new GenericPLEG({
    lister: { listPods: async () => snapshot },
    statusSource: criPodStatusSource(cri),
    clock,
  });
  await memoryPleg.relist();
  const diffOnly: number[] = [];
  for (let i = 0; i < ROUNDS; i++) diffOnly.push(await time(() => memoryPleg.relist()));
  const listOnly = async () => Promise.all([cri.runtime.listPodSandbox({}), cri.runtime.listContainers({})]);
  // Warm up the channel and the JIT on both paths.
  for (let i = 0; i < 3; i++) await listOnly();
  const cold = await time(() => pleg.relist());
  const coldEvents = pleg.channel.length + pleg.channel.dropped;
  for (let i = 0; i < 3; i++) await pleg.relist();
  for (let i = 0; i < ROUNDS; i++) {
    // Interleave so both see the same machine load.
    floor.push(await time(listOnly));
    steady.push(await time(() => pleg.relist()));
  }
  for (let i = 0; i < 10; i++) {
    for (let k = 0; k < 10; k++)
      fake.killContainer(containerIds[(i * 10 + k) * CONTAINERS_PER_POD] ?? '', { exitCode: 1 });
    changed.push(await time(() => pleg.relist()));
    while (pleg.channel.tryReceive() !== undefined) {}
  }
  console.log(
    `\nPLEG relist, ${PODS} pods / ${PODS * CONTAINERS_PER_POD} containers, FakeRuntime over a unix socket`,
  );
  console.table([
    row({ name: 'floor: ListPodSandbox + ListContainers', samples: floor }),
    row({ name: 'GenericPLEG.relist, nothing changed', samples: steady }),
    row({ name: 'GenericPLEG.relist, 10 pods changed', samples: changed }),
    row({ name: 'diff only (same pods from memory, no socket)', samples: diffOnly }),
    row({ name: `first relist (all ${PODS} pods inspected, ${coldEvents} events)`, samples: [cold] }),
  ]);
  const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? 0;
  console.log(
    `steady relist overhead over the floor: ${(median(steady) - median(floor)).toFixed(1)} ms (${((median(steady) / median(floor) - 1) * 100).toFixed(0)}%)`,
  );
});
