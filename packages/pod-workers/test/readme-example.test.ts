// The README's example, run as written (with a fake clock instead of the real one).
import { WorkQueue } from '@nodeagent/core';
import { FakeClock } from '@nodeagent/core/testing';
import { expect, it } from 'vitest';
import { PodWorkers } from '../src/index.js';

it('the README example syncs a pod, then kills it and waits', async () => {
  const clock = new FakeClock();
  const log: string[] = [];
  // --- README example ---
  const workers = new PodWorkers({
    syncer: {
      syncPod: async (_ctx, updateType, pod) => {
        log.push(`sync ${updateType} ${pod.metadata?.name}`);
        return { isTerminal: false };
      },
      syncTerminatingPod: async (_ctx, pod, _status, graceSeconds) => {
        log.push(`stop ${pod.metadata?.name} within ${graceSeconds}s`);
      },
      syncTerminatingRuntimePod: async () => {},
      syncTerminatedPod: async (_ctx, pod) => {
        log.push(`clean up ${pod.metadata?.name}`);
      },
    },
    statusProvider: { getNewerThan: async (uid) => ({ uid }) },
    workQueue: new WorkQueue<string>({ clock }),
    clock,
  });
  const pod = { metadata: { uid: 'u1', name: 'web', namespace: 'default' } };
  workers.updatePod({ updateType: 'create', pod });
  await clock.advance(0);
  await workers.killPodAndWait(pod, { gracePeriodSecondsOverride: 5 });
  // --- end ---
  await clock.advance(0);
  expect(log).toEqual(['sync create web', 'stop web within 5s', 'clean up web']);
  expect(workers.shouldPodBeFinished('u1')).toBe(true);
});
