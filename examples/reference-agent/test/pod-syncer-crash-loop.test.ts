import type { V1Pod, V1PodStatus } from '@kubernetes/client-node';
import { type RuntimeManagerHarness, startRuntimeManagerHarness } from '@nodeagent/kuberuntime/testing';
import { afterEach, describe, expect, it } from 'vitest';
import { AgentPodSyncer } from '../src/pod-syncer.js';

let h: RuntimeManagerHarness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

const pod: V1Pod = {
  metadata: { name: 'crasher', namespace: 'default', uid: 'uid-crasher' },
  spec: {
    restartPolicy: 'Always',
    containers: [{ name: 'crash', image: 'busybox:1.36', imagePullPolicy: 'IfNotPresent' }],
  },
};

describe('AgentPodSyncer: CrashLoopBackOff shows for the whole back-off', () => {
  it('the status set after the sync that hit the back-off is waiting: CrashLoopBackOff, at once', async () => {
    h = await startRuntimeManagerHarness({
      behaviours: [{ match: { name: 'crash' }, behaviour: { crashOnStart: true, exitCode: 2 } }],
    });
    const harness = h;
    const written: V1PodStatus[] = [];
    const syncer = new AgentPodSyncer({
      runtime: harness.manager,
      statuses: {
        getPodStatus: () => written.at(-1),
        setPodStatus: (_pod, status) => written.push(status),
        terminatePod: () => {},
      },
    });
    const ctx = { signal: new AbortController().signal };
    const sync = async () => {
      const status = await harness.manager.getPodStatus(pod);
      return syncer.syncPod(ctx, 'update', pod, undefined, { status, error: undefined });
    };
    await sync(); // sandbox + first start; it crashes
    await harness.clock.advance(1000);
    await sync(); // first failure: restarted at once (upstream doBackOff records 10 s only now)
    await harness.clock.advance(1000);
    const before = written.length;
    const outcome = await sync(); // second failure: in back-off
    expect(outcome.isTerminal).toBe(false);
    expect(outcome.requeueAfterMs).toBeGreaterThan(0);
    // Two writes in this sync: the status before the runtime acted (terminated), then the one
    // with the start failure from the reason cache.
    expect(written.length).toBe(before + 2);
    expect(written[before]?.containerStatuses?.[0]?.state?.terminated).toMatchObject({ exitCode: 2 });
    const cs = written.at(-1)?.containerStatuses?.[0];
    expect(cs?.state?.waiting).toEqual({
      reason: 'CrashLoopBackOff',
      message: 'back-off 10s restarting failed container=crash pod=crasher_default(uid-crasher)',
    });
    expect(cs?.lastState?.terminated).toMatchObject({ exitCode: 2, reason: 'Error' });
    expect(cs?.restartCount).toBe(1);
    // Any sync during the back-off (a resync, a probe) keeps showing it.
    await harness.clock.advance(5000);
    await sync();
    expect(written.at(-1)?.containerStatuses?.[0]?.state?.waiting?.reason).toBe('CrashLoopBackOff');
  });
});
