// Work queue throughput: keys through add → get → done with 4 async workers, next to
// p-queue running the same number of no-op tasks at concurrency 4, and a bare array loop
// as the floor. Prints ops/s; asserts nothing about speed.

import { WorkQueue } from '@nodeagent/core';
import { FakeClock } from '@nodeagent/core/testing';
import PQueue from 'p-queue';
import { it } from 'vitest';

const N = 100_000;
const WORKERS = 4;

async function best(run: () => Promise<void>, rounds = 3): Promise<number> {
  let fastest = Number.POSITIVE_INFINITY;
  for (let i = 0; i < rounds; i++) {
    const t0 = performance.now();
    await run();
    fastest = Math.min(fastest, performance.now() - t0);
  }
  return fastest;
}

async function workQueueDistinct(): Promise<void> {
  const queue = new WorkQueue<number>({ clock: new FakeClock() });
  let processed = 0;
  const workers = Array.from({ length: WORKERS }, async () => {
    for await (const key of queue) {
      processed++;
      queue.done(key);
    }
  });
  for (let i = 0; i < N; i++) queue.add(i);
  while (processed < N) await new Promise((r) => setImmediate(r));
  queue.shutDown();
  await Promise.all(workers);
}

async function workQueueDuplicates(): Promise<void> {
  // 1000 keys added 100 times each: adds collapse while the keys wait.
  const queue = new WorkQueue<string>({ clock: new FakeClock() });
  const workers = Array.from({ length: WORKERS }, async () => {
    for await (const key of queue) queue.done(key);
  });
  for (let round = 0; round < 100; round++) for (let k = 0; k < 1000; k++) queue.add(`ns/pod-${k}`);
  await queue.shutDownWithDrain();
  queue.shutDown();
  await Promise.all(workers);
}

async function workQueueDelayed(): Promise<void> {
  const clock = new FakeClock({ startMs: 0 });
  const queue = new WorkQueue<number>({ clock });
  for (let i = 0; i < N; i++) queue.addAfter(i, (i * 7919) % 10_000);
  clock.advanceSync(10_000);
  while (queue.len() > 0) {
    const item = await queue.get();
    if (!item.shutdown) queue.done(item.key);
  }
}

async function pQueue(): Promise<void> {
  const queue = new PQueue({ concurrency: WORKERS });
  for (let i = 0; i < N; i++) void queue.add(async () => {});
  await queue.onIdle();
}

async function arrayFloor(): Promise<void> {
  const items: number[] = [];
  for (let i = 0; i < N; i++) items.push(i);
  let head = 0;
  const workers = Array.from({ length: WORKERS }, async () => {
    while (head < items.length) {
      head++;
      await Promise.resolve();
    }
  });
  await Promise.all(workers);
}

it('work queue throughput', async () => {
  const rows: [string, number][] = [
    [`WorkQueue: ${N} distinct keys, ${WORKERS} workers`, await best(workQueueDistinct)],
    [`WorkQueue: 100k adds of 1000 keys (dedupe)`, await best(workQueueDuplicates)],
    [`WorkQueue: ${N} addAfter, heap release + drain`, await best(workQueueDelayed)],
    [`p-queue 9: ${N} no-op tasks, concurrency ${WORKERS}`, await best(pQueue)],
    [`array + await floor: ${N} items, ${WORKERS} loops`, await best(arrayFloor)],
  ];
  console.log(
    rows
      .map(
        ([name, ms]) =>
          `${name.padEnd(52)} ${ms.toFixed(1).padStart(8)} ms  ${Math.round((N / ms) * 1000)
            .toLocaleString('en-US')
            .padStart(12)} ops/s`,
      )
      .join('\n'),
  );
});
