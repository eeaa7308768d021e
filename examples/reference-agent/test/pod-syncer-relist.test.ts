// The syncer reads a pod back into the PLEG right after a sync or kill that changed the runtime (its
// new state reaches the status without waiting for the next periodic relist), and not after a
// sync that changed nothing (a steady pod, a container in CrashLoopBackOff).
import type { V1Pod } from '@kubernetes/client-node';
import type { KnownRuntimeIds } from '@nodeagent/kubecontainer';
import { type RuntimeManagerHarness, startRuntimeManagerHarness } from '@nodeagent/kuberuntime/testing';
import { afterEach, describe, expect, it } from 'vitest';
import { AgentPodSyncer } from '../src/pod-syncer.js';

let h: RuntimeManagerHarness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

const pod = (name: string): V1Pod => ({
  metadata: { name, namespace: 'default', uid: `uid-${name}` },
  spec: {
    restartPolicy: 'Always',
    containers: [{ name, image: 'busybox:1.36', imagePullPolicy: 'IfNotPresent' }],
  },
});

async function setup(crash: boolean) {
  h = await startRuntimeManagerHarness(
    crash
      ? { behaviours: [{ match: { name: 'crash' }, behaviour: { crashOnStart: true, exitCode: 2 } }] }
      : {},
  );
  const harness = h;
  const relisted: string[] = [];
  const known: KnownRuntimeIds[] = [];
  const syncer = new AgentPodSyncer({
    runtime: harness.manager,
    statuses: { getPodStatus: () => undefined, setPodStatus: () => {}, terminatePod: () => {} },
    inspectPod: async (uid, ids) => {
      relisted.push(uid);
      known.push(ids);
    },
  });
  const ctx = { signal: new AbortController().signal };
  const sync = async (p: V1Pod) => {
    const status = await harness.manager.getPodStatus(p);
    return syncer.syncPod(ctx, 'update', p, undefined, { status, error: undefined });
  };
  const kill = async (p: V1Pod) => {
    const status = await harness.manager.getPodStatus(p);
    return syncer.syncTerminatingPod(ctx, p, { status, error: undefined }, 0, undefined);
  };
  return { harness, relisted, known, sync, kill };
}

describe('AgentPodSyncer: relist of the pod after a sync that changed the runtime', () => {
  it('after the sync that created the sandbox and started the container, after the kill; not after a steady sync', async () => {
    const { harness, relisted, known, sync, kill } = await setup(false);
    const app = pod('app');
    await sync(app);
    expect(relisted).toEqual(['uid-app']);
    // The relist is told of the sandbox and the container the sync made.
    const made = await harness.manager.getPodStatus(app);
    const ids = {
      sandboxIds: made.sandboxStatuses.map((s) => s.id),
      containerIds: made.containerStatuses.map((c) => c.id),
    };
    expect(ids.sandboxIds).toHaveLength(1);
    expect(ids.containerIds).toHaveLength(1);
    expect(known).toEqual([ids]);
    await sync(app); // running as specified: nothing to do
    expect(relisted).toEqual(['uid-app']);
    await kill(app);
    expect(relisted).toEqual(['uid-app', 'uid-app']);
    // A kill makes nothing; the relist is told of what the pod had.
    expect(known[1]).toEqual(ids);
  });

  it('not after a sync whose only start was skipped by the CrashLoopBackOff', async () => {
    const { harness, relisted, sync } = await setup(true);
    const crasher = pod('crash');
    await sync(crasher); // sandbox + first start; it crashes
    await harness.clock.advance(1000);
    await sync(crasher); // first failure: restarted at once
    expect(relisted).toEqual(['uid-crash', 'uid-crash']);
    await harness.clock.advance(1000);
    const outcome = await sync(crasher); // in back-off: nothing started
    expect(outcome.requeueAfterMs).toBeGreaterThan(0);
    expect(relisted).toEqual(['uid-crash', 'uid-crash']);
  });
});
