import type { V1Pod } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import { remainingGracePeriodSeconds } from '../src/index.js';
import { createHarness, makePod } from './harness.js';

/** A pod whose deletion (grace `grace` s) ends at `deadlineMs`, as the API server stamps it. */
function deleting(uid: string, grace: number, deadlineMs: number, spec = 30): V1Pod {
  const pod = makePod(uid, { terminationGracePeriodSeconds: spec, deletionGracePeriodSeconds: grace });
  (pod.metadata as NonNullable<V1Pod['metadata']>).deletionTimestamp = new Date(deadlineMs);
  return pod;
}

describe('remainingGracePeriodSeconds', () => {
  const now = 1_000_000;
  it.each([
    ['full grace left', 30, now + 30_000, 30],
    ['12 s left', 30, now + 12_000, 12],
    ['partial seconds round up', 30, now + 11_200, 12],
    ['past the deadline: the 1 s minimum', 30, now - 5_000, 1],
    ['never more than the deletion grace (clock skew)', 30, now + 90_000, 30],
    ['deletion grace 0 (force delete): 1 s', 0, now + 10_000, 1],
  ] as const)('%s', (_, grace, deadline, expected) => {
    expect(remainingGracePeriodSeconds(deleting('a', grace, deadline), now)).toBe(expected);
  });

  it('reads an RFC 3339 string as the informer delivers it', () => {
    const pod = deleting('a', 30, 0);
    (pod.metadata as unknown as Record<string, unknown>).deletionTimestamp = new Date(
      now + 7_000,
    ).toISOString();
    expect(remainingGracePeriodSeconds(pod, now)).toBe(7);
  });

  it('is undefined for a pod not being deleted or with a bad timestamp', () => {
    expect(remainingGracePeriodSeconds(makePod('a'), now)).toBeUndefined();
    const pod = deleting('a', 30, 0);
    (pod.metadata as unknown as Record<string, unknown>).deletionTimestamp = 'yesterday';
    expect(remainingGracePeriodSeconds(pod, now)).toBeUndefined();
  });
});

describe('remainingGraceOnAdoption', () => {
  it('default (upstream): a pod first seen mid-deletion gets a fresh full deletion grace', async () => {
    const h = createHarness();
    h.workers.updatePod({ updateType: 'update', pod: deleting('a', 30, h.clock.now() + 8_000) });
    await h.settle();
    expect(h.syncer.callsFor('a', 'syncTerminatingPod')[0]?.gracePeriodSeconds).toBe(30);
  });

  it('on: a pod first seen mid-deletion gets only the time left until deletionTimestamp', async () => {
    const h = createHarness({ remainingGraceOnAdoption: true });
    h.workers.updatePod({ updateType: 'update', pod: deleting('a', 30, h.clock.now() + 8_000) });
    await h.settle();
    expect(h.syncer.callsFor('a', 'syncTerminatingPod')[0]?.gracePeriodSeconds).toBe(8);
    expect(h.workers.getPodSyncStatus('a')?.gracePeriodSeconds).toBe(8);
  });

  it('on: past its deadline the adopted pod gets the 1 s minimum', async () => {
    const h = createHarness({ remainingGraceOnAdoption: true });
    h.workers.updatePod({ updateType: 'update', pod: deleting('a', 30, h.clock.now() - 60_000) });
    await h.settle();
    expect(h.syncer.callsFor('a', 'syncTerminatingPod')[0]?.gracePeriodSeconds).toBe(1);
  });

  it('on: a shorter kill override still wins', async () => {
    const h = createHarness({ remainingGraceOnAdoption: true });
    h.workers.updatePod({
      updateType: 'update',
      pod: deleting('a', 30, h.clock.now() + 20_000),
      killOptions: { podTerminationGracePeriodSecondsOverride: 3 },
    });
    await h.settle();
    expect(h.syncer.callsFor('a', 'syncTerminatingPod')[0]?.gracePeriodSeconds).toBe(3);
  });

  it('on: a pod this process saw before its deletion gets the full deletion grace', async () => {
    const h = createHarness({ remainingGraceOnAdoption: true });
    const pod = makePod('a', { terminationGracePeriodSeconds: 30 });
    h.workers.updatePod({ updateType: 'create', pod });
    await h.settle();
    // The deletion is seen late (its timestamp is already 20 s gone), but it is not an adoption.
    h.workers.updatePod({ updateType: 'update', pod: deleting('a', 30, h.clock.now() + 10_000) });
    await h.settle();
    expect(h.syncer.callsFor('a', 'syncTerminatingPod')[0]?.gracePeriodSeconds).toBe(30);
  });
});
