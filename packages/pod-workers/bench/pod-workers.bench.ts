// Pod-worker overhead per update at 10,000 pods: updates through PodWorkers with no-op
// callbacks, next to a bare reference (a Map of per-pod promise chains making the same
// status read, callback and requeue calls) measured in the same run. Prints a table;
// asserts nothing about speed.

import type { V1Pod } from '@kubernetes/client-node';
import { it } from 'vitest';
import { type PodStatusProvider, type PodSyncer, PodWorkers, type PodWorkQueue } from '../src/index.js';

const PODS = 10_000;
const ROUNDS = 5;

interface Status {
  readonly uid: string;
}

const pods: V1Pod[] = Array.from({ length: PODS }, (_, i) => ({
  metadata: { uid: `uid-${i}`, name: `pod-${i}`, namespace: 'default' },
  spec: { containers: [{ name: 'c', image: 'busybox' }], terminationGracePeriodSeconds: 30 },
}));

/**
 * Counts callbacks; `expect(n)` resolves once `n` more were entered and everything they set
 * off has settled (no timers or I/O are involved, so one macrotask turn drains it all).
 */
class Counter {
  count = 0;
  private target = 0;
  private resolve: (() => void) | undefined;
  async expect(n: number): Promise<void> {
    this.target = this.count + n;
    await new Promise<void>((resolve) => {
      this.resolve = resolve;
    });
    await new Promise<void>((resolve) => setImmediate(resolve));
  }
  tick(): void {
    this.count++;
    if (this.count === this.target) this.resolve?.();
  }
}

/** A kubelet-like requeue sink: a map of due times. */
function mapQueue(): PodWorkQueue & { due: Map<string, number> } {
  const due = new Map<string, number>();
  return { due, addAfter: (uid, delayMs) => due.set(uid, performance.now() + delayMs) };
}

const statusProvider: PodStatusProvider<Status> = { getNewerThan: async (uid) => ({ uid }) };

function noopSyncer(counter: Counter): PodSyncer<Status> {
  return {
    syncPod: async () => {
      counter.tick();
      return { isTerminal: false };
    },
    syncTerminatingPod: async () => counter.tick(),
    syncTerminatingRuntimePod: async () => counter.tick(),
    syncTerminatedPod: async () => counter.tick(),
  };
}

/** The floor: one promise chain per pod doing the same calls, no coalescing, no state. */
class ReferenceChains {
  private readonly chains = new Map<string, Promise<void>>();
  // One signal for all: the floor pays nothing for cancellation.
  private readonly signal = new AbortController().signal;
  constructor(
    private readonly syncer: PodSyncer<Status>,
    private readonly queue: PodWorkQueue,
  ) {}
  update(pod: V1Pod, kill: boolean): void {
    const uid = pod.metadata?.uid as string;
    const signal = this.signal;
    const prev = this.chains.get(uid) ?? Promise.resolve();
    const next = prev.then(async () => {
      const status = await statusProvider.getNewerThan(uid, 0, signal);
      if (kill) {
        await this.syncer.syncTerminatingPod({ signal }, pod, status, 30, undefined);
        await this.syncer.syncTerminatedPod(
          { signal },
          pod,
          await statusProvider.getNewerThan(uid, 0, signal),
        );
      } else {
        await this.syncer.syncPod({ signal }, 'update', pod, undefined, status);
      }
      this.queue.addAfter(uid, 60_000);
    });
    this.chains.set(uid, next);
  }
}

interface Row {
  readonly name: string;
  readonly updates: number;
  readonly callbacks: number;
  readonly ms: number;
}

/** Best of ROUNDS; `prepare` builds a fresh setup (untimed) and returns the timed run. */
async function measure(
  name: string,
  updates: number,
  prepare: () => Promise<() => Promise<number>>,
): Promise<Row> {
  let best: Row | undefined;
  for (let i = 0; i < ROUNDS; i++) {
    const run = await prepare();
    const t0 = performance.now();
    const callbacks = await run();
    const ms = performance.now() - t0;
    if (best === undefined || ms < best.ms) best = { name, updates, callbacks, ms };
  }
  return best as Row;
}

function createWorkers(counter: Counter, concurrency?: number): PodWorkers<Status> {
  return new PodWorkers<Status>({
    syncer: noopSyncer(counter),
    statusProvider,
    workQueue: mapQueue(),
    ...(concurrency !== undefined ? { concurrency } : {}),
  });
}

async function podWorkersCreate(): Promise<() => Promise<number>> {
  const counter = new Counter();
  const workers = createWorkers(counter);
  return async () => {
    const idle = counter.expect(PODS);
    for (const pod of pods) workers.updatePod({ updateType: 'create', pod });
    await idle;
    return PODS;
  };
}

async function podWorkersUpdateRound(concurrency?: number): Promise<() => Promise<number>> {
  const counter = new Counter();
  const workers = createWorkers(counter, concurrency);
  const created = counter.expect(PODS);
  for (const pod of pods) workers.updatePod({ updateType: 'create', pod });
  await created;
  return async () => {
    const before = counter.count;
    const idle = counter.expect(PODS);
    for (const pod of pods) workers.updatePod({ updateType: 'update', pod });
    await idle;
    return counter.count - before;
  };
}

async function podWorkersKill(): Promise<() => Promise<number>> {
  const counter = new Counter();
  const workers = createWorkers(counter);
  const created = counter.expect(PODS);
  for (const pod of pods) workers.updatePod({ updateType: 'create', pod });
  await created;
  return async () => {
    const killed = counter.expect(2 * PODS);
    for (const pod of pods) workers.updatePod({ updateType: 'kill', pod });
    await killed;
    return 2 * PODS;
  };
}

async function reference(kill: boolean): Promise<() => Promise<number>> {
  const counter = new Counter();
  const chains = new ReferenceChains(noopSyncer(counter), mapQueue());
  const n = kill ? 2 * PODS : PODS;
  return async () => {
    const idle = counter.expect(n);
    for (const pod of pods) chains.update(pod, kill);
    await idle;
    return n;
  };
}

it('pod-worker overhead per update at 10,000 pods', async () => {
  const rows: Row[] = [
    await measure('reference: per-pod promise chains (1 sync each)', PODS, () => reference(false)),
    await measure('PodWorkers: create (new worker + syncPod)', PODS, () => podWorkersCreate()),
    await measure('PodWorkers: update round (existing workers)', PODS, () => podWorkersUpdateRound()),
    await measure('PodWorkers: update round, concurrency 64 (p-queue)', PODS, () =>
      podWorkersUpdateRound(64),
    ),
    await measure('reference: per-pod chains (terminating + terminated)', PODS, () => reference(true)),
    await measure('PodWorkers: kill → terminating → terminated', PODS, () => podWorkersKill()),
  ];
  const header = ['case', 'updates', 'callbacks', 'ms', 'updates/s', 'µs/update'];
  const lines = rows.map((r) => [
    r.name,
    String(r.updates),
    String(r.callbacks),
    r.ms.toFixed(1),
    Math.round((r.updates / r.ms) * 1000).toLocaleString('en-US'),
    ((r.ms * 1000) / r.updates).toFixed(2),
  ]);
  const widths = header.map((h, i) => Math.max(h.length, ...lines.map((l) => (l[i] as string).length)));
  const fmt = (cells: string[]) =>
    cells.map((c, i) => (i === 0 ? c.padEnd(widths[i] ?? 0) : c.padStart(widths[i] ?? 0))).join('  ');
  console.log(
    `\npod-workers: ${PODS.toLocaleString('en-US')} pods, no-op callbacks, best of ${ROUNDS} (Node ${process.version})`,
  );
  console.log(fmt(header));
  for (const line of lines) console.log(fmt(line));
});
