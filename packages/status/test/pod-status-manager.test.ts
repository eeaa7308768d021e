// The pod status manager's rules, against a recording API double in fake time: writes only on
// a real difference, the patch payload (UID precondition, strategic list directives), foreign
// conditions kept, terminal phases sticky, 404/409/500 handling, mirror pods, reconcile, final delete.
import type { V1Pod, V1PodStatus } from '@kubernetes/client-node';
import { FakeClock } from '@nodeagent/core/testing';
import { afterEach, describe, expect, it } from 'vitest';
import { type MirrorPodTranslator, PodStatusManager } from '../src/index.js';
import { type ApiCall, HttpError, RecordingApi } from './support/fetch-api.js';

const T0 = Date.UTC(2025, 0, 2, 3, 4, 5, 678);
const T0S = '2025-01-02T03:04:05Z';

function apiPod(over: Partial<V1Pod> = {}, status: V1PodStatus = { phase: 'Pending' }): V1Pod {
  return {
    metadata: { name: 'web', namespace: 'ns', uid: 'u1', ...over.metadata },
    spec: { containers: [{ name: 'c', image: 'nginx' }], restartPolicy: 'Always', ...over.spec },
    status,
  };
}

/** An API double holding one pod that applies status patches the simple way (tests read the patches). */
function podServer(pod: V1Pod | undefined) {
  const state = { pod, failPatches: [] as number[] };
  const api = new RecordingApi((call: ApiCall) => {
    const code = call.verb === 'patch' ? state.failPatches.shift() : undefined;
    if (code !== undefined) throw new HttpError(code, `injected ${code}`);
    if (call.verb === 'get') return state.pod === undefined ? undefined : structuredClone(state.pod);
    if (call.verb === 'patch' && state.pod !== undefined) {
      return structuredClone(state.pod);
    }
    if (call.verb === 'delete') return {};
    throw new Error(`unexpected ${call.verb} ${call.path}`);
  });
  return { api, state };
}

const managers: PodStatusManager[] = [];
function manager(api: RecordingApi, extra: Partial<ConstructorParameters<typeof PodStatusManager>[0]> = {}) {
  const clock = new FakeClock({ startMs: T0 });
  const m = new PodStatusManager({ api, clock, ...extra });
  managers.push(m);
  return { m, clock };
}
afterEach(async () => {
  await Promise.all(managers.splice(0).map((m) => m.stop()));
});

async function settle(clock: FakeClock): Promise<void> {
  await clock.advance(0);
}

describe('PodStatusManager writes', () => {
  it("starts a pass after the caller's turn, in the event loop's check phase (the pod's sync goes first)", async () => {
    const { api } = podServer(apiPod());
    const { m } = manager(api);
    await m.start();
    await new Promise<void>((resolve) => setImmediate(resolve));
    expect(api.calls).toHaveLength(0);
    m.setPodStatus(apiPod(), { phase: 'Running' });
    for (let i = 0; i < 20; i++) await Promise.resolve();
    expect(api.calls).toHaveLength(0);
    await new Promise<void>((resolve) => setImmediate(resolve));
    expect(api.calls.map((c) => c.verb)).toEqual(['get', 'patch']);
  });

  it('patches a new status at once: GET, then a strategic patch with metadata.uid and only the changed fields', async () => {
    const { api } = podServer(apiPod());
    const { m, clock } = manager(api);
    await m.start();
    m.setPodStatus(apiPod(), {
      phase: 'Running',
      podIP: '10.0.0.2',
      conditions: [{ type: 'Ready', status: 'True' }],
    });
    await settle(clock);
    expect(api.calls.map((c) => `${c.verb} ${c.path}`)).toEqual([
      'get /api/v1/namespaces/ns/pods/web',
      'patch /api/v1/namespaces/ns/pods/web/status',
    ]);
    const patch = api.calls[1];
    expect(patch?.kind).toBe('strategic');
    expect(patch?.body).toEqual({
      metadata: { uid: 'u1' },
      status: {
        phase: 'Running',
        podIP: '10.0.0.2',
        startTime: T0S,
        '$setElementOrder/conditions': [{ type: 'Ready' }],
        conditions: [{ type: 'Ready', status: 'True', lastTransitionTime: T0S }],
      },
    });
    expect(m.patches).toBe(1);
  });

  it('does not write an identical status again, nor one differing only below a second', async () => {
    const { api, state } = podServer(apiPod());
    const { m, clock } = manager(api);
    await m.start();
    const status: V1PodStatus = { phase: 'Running', startTime: new Date(T0) };
    m.setPodStatus(apiPod(), status);
    await settle(clock);
    expect(api.writes()).toHaveLength(1);
    // The API now stores the status with whole seconds.
    state.pod = apiPod({}, { phase: 'Running', startTime: T0S as unknown as Date });
    m.setPodStatus(apiPod(), { phase: 'Running', startTime: new Date(T0 + 200) });
    await settle(clock);
    await clock.advance(60_000); // six full syncs
    expect(api.writes()).toHaveLength(1);
  });

  it('keeps the conditions it does not own and patches only its own', async () => {
    const gate = { type: 'example.com/gate', status: 'True', lastTransitionTime: T0S as unknown as Date };
    const { api } = podServer(apiPod({}, { phase: 'Pending', conditions: [gate] }));
    const { m, clock } = manager(api);
    await m.start();
    m.setPodStatus(apiPod(), { phase: 'Running', conditions: [{ type: 'Ready', status: 'False' }] });
    await settle(clock);
    const body = api.calls[1]?.body as { status: Record<string, unknown> };
    expect(body.status['$setElementOrder/conditions']).toEqual([
      { type: 'example.com/gate' },
      { type: 'Ready' },
    ]);
    expect(body.status.conditions).toEqual([{ type: 'Ready', status: 'False', lastTransitionTime: T0S }]);
  });

  it('removes a kubelet condition that vanished with $patch: delete, and a vanished field with null', async () => {
    const { api } = podServer(
      apiPod(
        {},
        {
          phase: 'Running',
          message: 'old',
          conditions: [
            { type: 'PodScheduled', status: 'True' },
            { type: 'Ready', status: 'True' },
          ],
        },
      ),
    );
    const { m, clock } = manager(api);
    await m.start();
    m.setPodStatus(apiPod(), { phase: 'Running', conditions: [{ type: 'PodScheduled', status: 'True' }] });
    await settle(clock);
    const body = api.calls[1]?.body as { status: Record<string, unknown> };
    expect(body.status.message).toBeNull();
    expect(body.status.conditions).toContainEqual({ type: 'Ready', $patch: 'delete' });
  });

  it('never moves a terminal phase back', async () => {
    const { api } = podServer(apiPod());
    const { m, clock } = manager(api);
    await m.start();
    m.setPodStatus(apiPod(), { phase: 'Succeeded' });
    m.setPodStatus(apiPod(), { phase: 'Running' });
    await settle(clock);
    expect(m.getPodStatus('u1')?.phase).toBe('Succeeded');
  });

  it('refuses a terminated container that runs again under restartPolicy Never', async () => {
    const { api } = podServer(apiPod());
    const { m } = manager(api);
    const pod = apiPod({ spec: { containers: [{ name: 'c' }], restartPolicy: 'Never' } });
    m.setPodStatus(pod, {
      phase: 'Running',
      containerStatuses: [
        {
          name: 'c',
          image: 'i',
          imageID: '',
          ready: false,
          restartCount: 0,
          state: { terminated: { exitCode: 0 } },
        },
      ],
    });
    m.setPodStatus(pod, {
      phase: 'Running',
      containerStatuses: [
        { name: 'c', image: 'i', imageID: '', ready: true, restartCount: 0, state: { running: {} } },
      ],
    });
    expect(m.getPodStatus('u1')?.containerStatuses?.[0]?.state?.terminated).toEqual({ exitCode: 0 });
  });

  it('keeps lastTransitionTime while a condition keeps its status, and moves it on a flip', async () => {
    const { api } = podServer(apiPod());
    const { m, clock } = manager(api);
    m.setPodStatus(apiPod(), { phase: 'Running', conditions: [{ type: 'Ready', status: 'False' }] });
    await clock.advance(5_000);
    m.setPodStatus(apiPod(), {
      phase: 'Running',
      conditions: [{ type: 'Ready', status: 'False', reason: 'x' }],
    });
    expect(m.getPodStatus('u1')?.conditions?.[0]?.lastTransitionTime).toBe(T0S);
    await clock.advance(5_000);
    m.setPodStatus(apiPod(), { phase: 'Running', conditions: [{ type: 'Ready', status: 'True' }] });
    expect(m.getPodStatus('u1')?.conditions?.[0]?.lastTransitionTime).toBe('2025-01-02T03:04:15Z');
  });

  it('sends DisruptionTarget only with the transition to a terminal phase', async () => {
    const { api } = podServer(apiPod({}, { phase: 'Running' }));
    const { m, clock } = manager(api);
    await m.start();
    const dt = { type: 'DisruptionTarget', status: 'True', reason: 'TerminationByKubelet' };
    m.setPodStatus(apiPod(), { phase: 'Running', conditions: [dt] });
    await settle(clock);
    expect(JSON.stringify(api.calls[1]?.body)).not.toContain('DisruptionTarget');
    m.setPodStatus(apiPod(), { phase: 'Failed', conditions: [dt] });
    await settle(clock);
    expect(JSON.stringify(api.calls.at(-1)?.body)).toContain('DisruptionTarget');
  });

  it('holds a terminal phase back while containers could still run', async () => {
    const { api } = podServer(apiPod({}, { phase: 'Running' }));
    const { m, clock } = manager(api, { couldHaveRunningContainers: () => true });
    await m.start();
    m.setPodStatus(apiPod(), { phase: 'Failed', reason: 'Evicted' });
    await settle(clock);
    const body = api.calls[1]?.body as { status?: Record<string, unknown> } | undefined;
    expect(body?.status?.phase).toBeUndefined();
    expect(body?.status?.reason).toBeUndefined();
  });
});

describe('PodStatusManager and API errors', () => {
  it('skips a pod the API does not have (404) and writes it once it exists', async () => {
    const { api, state } = podServer(undefined);
    const { m, clock } = manager(api);
    await m.start();
    m.setPodStatus(apiPod(), { phase: 'Running' });
    await settle(clock);
    expect(api.writes()).toHaveLength(0);
    state.pod = apiPod();
    await clock.advance(10_000);
    expect(api.writes().map((c) => c.verb)).toEqual(['patch']);
  });

  it('retries a patch that failed with 500 or 409 on the next 10 s sync, and loses nothing', async () => {
    for (const code of [500, 409]) {
      const { api, state } = podServer(apiPod());
      const { m, clock } = manager(api);
      await m.start();
      state.failPatches.push(code);
      m.setPodStatus(apiPod(), { phase: 'Running' });
      await settle(clock);
      expect(m.patches).toBe(0);
      await clock.advance(9_999);
      expect(m.patches).toBe(0);
      await clock.advance(1);
      expect(m.patches).toBe(1);
      await m.stop();
    }
  });

  it('drops the status of a pod that was deleted and recreated under the same name (other UID)', async () => {
    const { api } = podServer(apiPod({ metadata: { name: 'web', namespace: 'ns', uid: 'u2' } }));
    const { m, clock } = manager(api);
    await m.start();
    m.setPodStatus(apiPod(), { phase: 'Running' });
    await settle(clock);
    expect(api.writes()).toHaveLength(0);
    expect(m.getPodStatus('u1')).toBeUndefined();
  });
});

describe('PodStatusManager sync loop', () => {
  it('reconciles a status the API lost on the 10 s full sync', async () => {
    const { api, state } = podServer(apiPod());
    let informerCopy = apiPod();
    const { m, clock } = manager(api, { podLookup: (uid) => (uid === 'u1' ? informerCopy : undefined) });
    await m.start();
    m.setPodStatus(apiPod(), { phase: 'Running' });
    await settle(clock);
    expect(api.writes()).toHaveLength(1);
    // The API (and the informer) still show Pending: someone overwrote the status.
    informerCopy = apiPod({}, { phase: 'Pending' });
    state.pod = informerCopy;
    await clock.advance(10_000);
    expect(api.writes()).toHaveLength(2);
    // Once the informer shows our status, nothing more is written.
    informerCopy = apiPod({}, { phase: 'Running', startTime: T0S as unknown as Date });
    state.pod = informerCopy;
    await clock.advance(30_000);
    expect(api.writes()).toHaveLength(2);
  });

  it('writes statuses set before start on start (reconcile on start)', async () => {
    const { api } = podServer(apiPod());
    const { m } = manager(api);
    m.setPodStatus(apiPod(), { phase: 'Running' });
    expect(api.calls).toHaveLength(0);
    await m.start();
    expect(api.writes()).toHaveLength(1);
  });

  it('deletes a finished pod that is being deleted, with grace 0 and the UID precondition', async () => {
    const deleting = apiPod({
      metadata: { name: 'web', namespace: 'ns', uid: 'u1', deletionTimestamp: new Date(T0) },
    });
    const { api, state } = podServer(deleting);
    const { m, clock } = manager(api);
    await m.start();
    m.setPodStatus(deleting, { phase: 'Succeeded' });
    await settle(clock);
    expect(api.writes().map((c) => c.verb)).toEqual(['patch']);
    state.pod = { ...deleting, status: { phase: 'Succeeded' } };
    m.terminatePod(state.pod);
    await settle(clock);
    expect(api.writes().at(-1)).toEqual({
      verb: 'delete',
      path: '/api/v1/namespaces/ns/pods/web',
      body: { gracePeriodSeconds: 0, preconditions: { uid: 'u1' } },
    });
    expect(m.getPodStatus('u1')).toBeUndefined();
  });

  it('terminatePod marks containers without a terminated state as ContainerStatusUnknown and the phase Failed', async () => {
    const { api } = podServer(apiPod());
    const { m } = manager(api);
    const pod = apiPod();
    m.setPodStatus(pod, {
      phase: 'Running',
      containerStatuses: [
        { name: 'c', image: 'i', imageID: '', ready: true, restartCount: 0, state: { running: {} } },
      ],
    });
    m.terminatePod(pod);
    const s = m.getPodStatus('u1');
    expect(s?.phase).toBe('Failed');
    expect(s?.containerStatuses?.[0]?.state).toEqual({
      terminated: {
        reason: 'ContainerStatusUnknown',
        message: 'The container could not be located when the pod was terminated',
        exitCode: 137,
      },
    });
  });
});

describe('PodStatusManager and static pods', () => {
  const translator = (mirror: { uid: string | null }): MirrorPodTranslator => ({
    mirrorPodUid: (uid) => (uid === 'static-1' ? mirror.uid : undefined),
    staticPodUid: (uid) => (mirror.uid !== null && uid === mirror.uid ? 'static-1' : undefined),
  });

  it('writes nothing while the mirror pod is missing, then writes to the mirror pod with its UID', async () => {
    const mirror = { uid: null as string | null };
    const { api } = podServer(apiPod({ metadata: { name: 'web', namespace: 'ns', uid: 'mirror-1' } }));
    const { m, clock } = manager(api, { mirrorPods: translator(mirror) });
    await m.start();
    const staticPod = apiPod({ metadata: { name: 'web', namespace: 'ns', uid: 'static-1' } });
    m.setPodStatus(staticPod, { phase: 'Running' });
    await settle(clock);
    expect(api.calls).toHaveLength(0);
    mirror.uid = 'mirror-1';
    await clock.advance(10_000);
    expect(api.writes()).toHaveLength(1);
    expect(api.writes()[0]?.body).toMatchObject({ metadata: { uid: 'mirror-1' } });
    expect(m.getPodStatus('mirror-1')?.phase).toBe('Running');
  });
});

describe('PodStatusManager and throwing peers', () => {
  it('a pod lookup that throws loses that pass only; the next pass reconciles', async () => {
    const { api, state } = podServer(apiPod());
    let broken = false;
    const { m, clock } = manager(api, {
      podLookup: () => {
        if (broken) throw new Error('informer gone');
        return state.pod;
      },
    });
    await m.start();
    m.setPodStatus(apiPod(), { phase: 'Running' });
    await settle(clock);
    expect(api.writes()).toHaveLength(1);
    state.pod = apiPod({}, { phase: 'Pending' }); // someone overwrote the status
    broken = true;
    await clock.advance(10_000);
    expect(api.writes()).toHaveLength(1);
    broken = false;
    await clock.advance(10_000);
    expect(api.writes()).toHaveLength(2);
  });
});
