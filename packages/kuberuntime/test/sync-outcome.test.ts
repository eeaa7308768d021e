// Which sync failures are back-offs (no error, requeue when the back-off expires) and which are
// errors (thrown, retried by the pod workers after backOffPeriod), on the fake clock.
import type { V1Pod } from '@kubernetes/client-node';
import { afterEach, describe, expect, it } from 'vitest';
import { PodSyncResult, SyncErrorReason, SyncStepError } from '../src/index.js';
import { type Harness, startHarness } from './harness.js';

let h: Harness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

function pod(image = 'busybox:1.36'): V1Pod {
  return {
    metadata: { name: 'web', namespace: 'default', uid: 'uid-web' },
    spec: { containers: [{ name: 'app', image, imagePullPolicy: 'IfNotPresent' }] },
  };
}

async function syncOnce(p: V1Pod) {
  if (h === undefined) throw new Error('no harness');
  const status = await h.manager.getPodStatus(p);
  const result = await h.manager.syncPod(p, status);
  return { status, result, outcome: h.manager.syncOutcome(p, status, result) };
}

describe('KubeRuntimeManager.syncOutcome', () => {
  it('a clean sync: no error, no early requeue', async () => {
    h = await startHarness();
    const { outcome } = await syncOnce(pod());
    expect(outcome).toEqual({ error: undefined, requeueAfterMs: undefined });
  });

  it('CrashLoopBackOff is no error; the pod is due when the back-off since the exit expires', async () => {
    h = await startHarness({
      behaviours: [{ match: { name: 'app' }, behaviour: { crashOnStart: true, exitCode: 2 } }],
    });
    const p = pod();
    await syncOnce(p); // starts, crashes
    await h.clock.advance(1000);
    await syncOnce(p); // restarts at once (first back-off: 10 s after this failure)
    await h.clock.advance(3000);
    const { outcome, status } = await syncOnce(p);
    expect(outcome.error).toBeUndefined();
    const exited = status.containerStatuses[0];
    expect(exited?.state).toBe('exited');
    expect(outcome.requeueAfterMs).toBe((exited?.finishedAt ?? 0) + 10_000 - h.clock.now());
    expect(outcome.requeueAfterMs).toBeGreaterThan(0);
    expect(outcome.requeueAfterMs).toBeLessThanOrEqual(10_000);
  });

  it('ImagePullBackOff is no error; the pod is due after the image back-off period', async () => {
    h = await startHarness({}, { imagePullBackOff: { initialMs: 7_000 } });
    const p = pod('registry.invalid/missing:1');
    const first = await syncOnce(p); // ErrImagePull: an error
    expect(first.outcome.error).toBeInstanceOf(SyncStepError);
    expect((first.outcome.error as SyncStepError).reason).toBe(SyncErrorReason.ErrImagePull);
    const second = await syncOnce(p); // inside the back-off
    expect(second.outcome).toEqual({ error: undefined, requeueAfterMs: 7_000 });
  });

  it('any other failure is the error to throw, even next to a back-off', () => {
    h = undefined;
    const result = new PodSyncResult();
    result.add('StartContainer', 'a').error = new SyncStepError(SyncErrorReason.CrashLoopBackOff, 'back-off');
    const hard = new SyncStepError(SyncErrorReason.CreateContainerError, 'boom');
    result.add('StartContainer', 'b').error = hard;
    const status = {
      id: 'u',
      name: 'p',
      namespace: 'd',
      ips: [],
      containerStatuses: [],
      sandboxStatuses: [],
      timestamp: 0,
    };
    return startHarness().then((started) => {
      h = started;
      expect(started.manager.syncOutcome(pod(), status, result)).toEqual({
        error: hard,
        requeueAfterMs: undefined,
      });
      const syncError = new Error('sandbox status failed');
      const failed = new PodSyncResult();
      failed.syncError = syncError;
      expect(started.manager.syncOutcome(pod(), status, failed).error).toBe(syncError);
    });
  });
});
