import type { V1Pod } from '@kubernetes/client-node';
import { afterEach, describe, expect, it } from 'vitest';
import { type Harness, startHarness } from './harness.js';

// The consequences of probe results in a full sync (upstream `computePodActions` with the
// liveness/startup managers, `convertToAPIContainerStatuses` with the readiness manager).
let h: Harness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

type Result = 'success' | 'failure' | undefined;

function probedPod(restartPolicy: 'Always' | 'Never' = 'Always'): V1Pod {
  return {
    metadata: { name: 'web', namespace: 'default', uid: 'uid-web' },
    spec: {
      restartPolicy,
      terminationGracePeriodSeconds: 30,
      containers: [
        {
          name: 'app',
          image: 'busybox:1.36',
          imagePullPolicy: 'IfNotPresent',
          livenessProbe: { exec: { command: ['true'] }, terminationGracePeriodSeconds: 7 },
          startupProbe: { exec: { command: ['true'] }, terminationGracePeriodSeconds: 4 },
          readinessProbe: { exec: { command: ['true'] } },
        },
      ],
    },
  };
}

function stopTimeouts(): number[] {
  return (h?.fake.calls('StopContainer') ?? []).map((c) =>
    Number((c.request as { timeout: bigint }).timeout),
  );
}

async function withResults() {
  const results = {
    liveness: new Map<string, Result>(),
    startup: new Map<string, Result>(),
    readiness: new Map<string, Result>(),
  };
  h = await startHarness(
    {},
    {
      probes: {
        liveness: (id) => results.liveness.get(id),
        startup: (id) => results.startup.get(id),
        readiness: (id) => results.readiness.get(id),
      },
    },
  );
  return results;
}

async function sync(p: V1Pod) {
  if (h === undefined) throw new Error('no harness');
  const result = await h.manager.syncPod(p, await h.manager.getPodStatus(p));
  expect(result.error()).toBeUndefined();
  const status = await h.manager.getPodStatus(p);
  return { status, api: h.manager.computePodStatus(p, status) };
}

describe('probe results in syncPod and computePodStatus', () => {
  it('started only after the startup probe succeeds; ready only after readiness succeeds', async () => {
    const results = await withResults();
    const p = probedPod();
    let out = await sync(p);
    const id = out.status.containerStatuses[0]?.id as string;
    const app = () => out.api.containerStatuses?.[0];
    expect(app()).toMatchObject({ started: false, ready: false });
    expect(out.api.conditions?.find((c) => c.type === 'ContainersReady')).toMatchObject({
      status: 'False',
      reason: 'ContainersNotReady',
      message: 'containers with unready status: [app]',
    });
    expect(out.api.conditions?.find((c) => c.type === 'Ready')).toMatchObject({
      status: 'False',
      reason: 'ContainersNotReady',
      message: 'containers with unready status: [app]',
    });
    results.startup.set(id, 'success');
    out = await sync(p);
    expect(app()).toMatchObject({ started: true, ready: false });
    results.readiness.set(id, 'success');
    out = await sync(p);
    expect(app()).toMatchObject({ started: true, ready: true });
    expect(
      out.api.conditions?.filter((c) => c.type.endsWith('Ready')).map((c) => `${c.type}=${c.status}`),
    ).toEqual(['Ready=True', 'ContainersReady=True']);
    expect(stopTimeouts()).toEqual([]);
  });

  it('a liveness failure kills with the probe grace period and restarts (restartCount +1)', async () => {
    const results = await withResults();
    const p = probedPod();
    let out = await sync(p);
    const first = out.status.containerStatuses[0]?.id as string;
    results.startup.set(first, 'success');
    results.liveness.set(first, 'failure');
    out = await sync(p);
    expect(stopTimeouts()).toEqual([7]);
    expect(
      h?.logger.records.some((r) => r.msg === 'Container app failed liveness probe, will be restarted'),
    ).toBe(true);
    const running = out.status.containerStatuses.filter((c) => c.state === 'running');
    expect(running).toHaveLength(1);
    expect(running[0]?.id).not.toBe(first);
    expect(out.api.containerStatuses?.[0]).toMatchObject({ restartCount: 1, started: false, ready: false });
    expect(out.api.containerStatuses?.[0]?.lastState?.terminated).toBeDefined();
  });

  it('a startup failure kills with the startup probe grace period and restarts', async () => {
    const results = await withResults();
    const p = probedPod();
    let out = await sync(p);
    results.startup.set(out.status.containerStatuses[0]?.id as string, 'failure');
    out = await sync(p);
    expect(stopTimeouts()).toEqual([4]);
    expect(out.api.containerStatuses?.[0]).toMatchObject({ restartCount: 1 });
  });

  it('restartPolicy Never: a liveness failure kills without restarting (the whole pod, its grace)', async () => {
    const results = await withResults();
    const p = probedPod('Never');
    let out = await sync(p);
    results.liveness.set(out.status.containerStatuses[0]?.id as string, 'failure');
    out = await sync(p);
    // Nothing left to keep or start: upstream turns it into KillPod, which uses the pod's grace.
    expect(stopTimeouts()).toEqual([30]);
    expect(out.status.containerStatuses.filter((c) => c.state === 'running')).toHaveLength(0);
    expect(out.api.containerStatuses?.[0]).toMatchObject({ restartCount: 0 });
  });
});
