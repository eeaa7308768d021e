import type { V1Container } from '@kubernetes/client-node';
import { NamespaceMode, PodSandboxState } from '@nodeagent/cri';
import { describe, expect, it } from 'vitest';
import { computePodActions } from '../src/index.js';
import { cstatus, makePod, podStatus, sandbox } from './fixtures.js';

const app: V1Container = { name: 'app', image: 'busybox:1.36' };
const app2: V1Container = { name: 'app2', image: 'busybox:1.36' };
const init1: V1Container = { name: 'init1', image: 'busybox:1.36' };
const init2: V1Container = { name: 'init2', image: 'busybox:1.36' };
const side1: V1Container = { name: 'side1', image: 'busybox:1.36', restartPolicy: 'Always' };
const side2: V1Container = { name: 'side2', image: 'busybox:1.36', restartPolicy: 'Always' };

function summary(a: ReturnType<typeof computePodActions>) {
  return {
    killPod: a.killPod,
    createSandbox: a.createSandbox,
    attempt: a.attempt,
    init: a.initContainersToStart,
    start: a.containersToStart,
    kill: a.containersToKill.map((k) => `${k.name}:${k.reason}:${k.message}`),
  };
}

describe('computePodActions: sandbox', () => {
  it.each([
    [
      'no sandbox yet: create attempt 0',
      podStatus([], []),
      { killPod: true, createSandbox: true, attempt: 0, start: [0, 1] },
    ],
    [
      'sandbox not ready: recreate with attempt+1',
      podStatus([], [sandbox(2, PodSandboxState.SANDBOX_NOTREADY)]),
      { killPod: true, createSandbox: true, attempt: 3, start: [0, 1] },
    ],
    [
      'two ready sandboxes: reconcile',
      podStatus([], [sandbox(1), sandbox(0)]),
      { killPod: true, createSandbox: true, attempt: 2 },
    ],
    [
      'network namespace changed',
      podStatus([], [sandbox(0, PodSandboxState.SANDBOX_READY, '10.88.0.5', NamespaceMode.NODE)]),
      { createSandbox: true, attempt: 1 },
    ],
    [
      'no IP: recreate',
      podStatus([], [sandbox(0, PodSandboxState.SANDBOX_READY, '')]),
      { createSandbox: true, attempt: 1 },
    ],
    [
      'ready sandbox: keep',
      podStatus([], [sandbox(4)]),
      { killPod: false, createSandbox: false, attempt: 4, start: [0, 1] },
    ],
  ])('%s', (_title, status, expected) => {
    const pod = makePod({ containers: [app, app2] });
    expect(summary(computePodActions(pod, status))).toMatchObject(expected);
  });

  it('a finished Never pod whose sandbox died is only killed, not recreated', () => {
    const pod = makePod({ containers: [app], restartPolicy: 'Never' });
    const status = podStatus([cstatus(app, 'exited')], [sandbox(0, PodSandboxState.SANDBOX_NOTREADY)]);
    expect(summary(computePodActions(pod, status))).toMatchObject({ killPod: true, createSandbox: false });
  });

  it('OnFailure: succeeded containers are not restarted in the new sandbox; all done → no sandbox', () => {
    const pod = makePod({ containers: [app, app2], restartPolicy: 'OnFailure' });
    const dead = sandbox(0, PodSandboxState.SANDBOX_NOTREADY);
    const some = podStatus([cstatus(app, 'exited'), cstatus(app2, 'exited', { exitCode: 1 })], [dead]);
    expect(summary(computePodActions(pod, some))).toMatchObject({ createSandbox: true, start: [1] });
    const all = podStatus([cstatus(app, 'exited'), cstatus(app2, 'exited')], [dead]);
    expect(summary(computePodActions(pod, all))).toMatchObject({
      killPod: true,
      createSandbox: false,
      start: [],
    });
  });

  it('new sandbox with init containers starts from the first init container', () => {
    const pod = makePod({ containers: [app], initContainers: [init1, init2] });
    expect(summary(computePodActions(pod, podStatus([], [])))).toMatchObject({
      createSandbox: true,
      init: [0],
      start: [],
    });
  });
});

describe('computePodActions: restartPolicy', () => {
  it.each([
    ['Always', 0, [0]],
    ['Always', 1, [0]],
    ['OnFailure', 0, []],
    ['OnFailure', 2, [0]],
    ['Never', 0, []],
    ['Never', 1, []],
  ] as const)('%s with exit code %i restarts %j', (policy, exitCode, start) => {
    const pod = makePod({ containers: [app], restartPolicy: policy });
    const a = computePodActions(pod, podStatus([cstatus(app, 'exited', { exitCode })]));
    expect(a.containersToStart).toEqual(start);
    // nothing left running or to start: the pod is killed
    expect(a.killPod).toBe(start.length === 0);
  });

  it('running containers are kept; missing ones started', () => {
    const pod = makePod({ containers: [app, app2] });
    const a = computePodActions(pod, podStatus([cstatus(app, 'running')]));
    expect(summary(a)).toMatchObject({ killPod: false, start: [1], kill: [] });
  });

  it('created or unknown containers are (re)started; unknown ones are killed first', () => {
    const pod = makePod({ containers: [app, app2], restartPolicy: 'Never' });
    const a = computePodActions(pod, podStatus([cstatus(app, 'created'), cstatus(app2, 'unknown')]));
    expect(summary(a)).toMatchObject({
      start: [0, 1],
      kill: ['app2:Unknown:Container is in "unknown" state, try killing it before restart'],
    });
  });

  it('a spec change restarts the container whatever the policy', () => {
    const pod = makePod({ containers: [{ ...app, image: 'busybox:1.37' }], restartPolicy: 'Never' });
    const a = computePodActions(pod, podStatus([cstatus(app, 'running')]));
    expect(summary(a)).toMatchObject({
      start: [0],
      kill: ['app::Container app definition changed, will be restarted'],
    });
  });

  it('liveness failure kills and restarts (Always) or only kills (Never)', () => {
    const running = cstatus(app, 'running');
    const liveness = (id: string) => (id === running.id ? ('failure' as const) : undefined);
    const always = computePodActions(makePod({ containers: [app] }), podStatus([running]), { liveness });
    expect(summary(always).kill).toEqual([
      'app:LivenessProbe:Container app failed liveness probe, will be restarted',
    ]);
    expect(always.containersToStart).toEqual([0]);
    const never = computePodActions(
      makePod({ containers: [app], restartPolicy: 'Never' }),
      podStatus([running]),
      { liveness },
    );
    expect(summary(never)).toMatchObject({
      killPod: true,
      kill: ['app:LivenessProbe:Container app failed liveness probe'],
    });
  });

  it('a pod being deleted restarts nothing', () => {
    const pod = makePod({ containers: [app] });
    pod.metadata = { ...pod.metadata, deletionTimestamp: new Date() };
    expect(
      computePodActions(pod, podStatus([cstatus(app, 'exited', { exitCode: 1 })])).containersToStart,
    ).toEqual([]);
  });
});

describe('computePodActions: init containers', () => {
  const pod = makePod({ containers: [app], initContainers: [init1, init2] });

  it.each([
    ['none ran: first', [], { init: [0], start: [] }],
    ['first running: wait', [cstatus(init1, 'running')], { init: [], start: [] }],
    ['first done: second', [cstatus(init1, 'exited')], { init: [1], start: [] }],
    [
      'both done: app containers',
      [cstatus(init2, 'exited'), cstatus(init1, 'exited')],
      { init: [], start: [0] },
    ],
    [
      'second failed: retry it',
      [cstatus(init2, 'exited', { exitCode: 1 }), cstatus(init1, 'exited')],
      { init: [1] },
    ],
    [
      'OOMKilled counts as failed',
      [cstatus(init1, 'exited', { reason: 'OOMKilled', exitCode: 0 })],
      { init: [0] },
    ],
    ['created init container is restarted', [cstatus(init1, 'created')], { init: [0] }],
    [
      'app running, init records gone: initialized',
      [cstatus(app, 'running')],
      { init: [], start: [], killPod: false },
    ],
  ] as const)('%s', (_t, statuses, expected) => {
    expect(summary(computePodActions(pod, podStatus([...statuses])))).toMatchObject(expected);
  });

  it('failed init container with restartPolicy Never kills the pod', () => {
    const never = makePod({ containers: [app], initContainers: [init1], restartPolicy: 'Never' });
    const a = computePodActions(never, podStatus([cstatus(init1, 'exited', { exitCode: 2 })]));
    expect(summary(a)).toMatchObject({ killPod: true, init: [], start: [] });
  });
});

describe('computePodActions: sidecars (KEP-753)', () => {
  const pod = makePod({ containers: [app], initContainers: [side1, init1, side2] });

  it.each([
    ['start with the first sidecar', [], { init: [0] }],
    ['sidecar running → next init container', [cstatus(side1, 'running')], { init: [1] }],
    ['init done → second sidecar', [cstatus(init1, 'exited'), cstatus(side1, 'running')], { init: [2] }],
    [
      'last sidecar running → app containers',
      [cstatus(side2, 'running'), cstatus(init1, 'exited'), cstatus(side1, 'running')],
      { init: [], start: [0] },
    ],
    [
      'exited sidecar is restarted even with app running (and for Never pods)',
      [cstatus(app, 'running'), cstatus(side2, 'running'), cstatus(side1, 'exited', { exitCode: 0 })],
      { init: [0], start: [] },
    ],
    [
      'sidecar record removed after initialization: restarted',
      [cstatus(app, 'running'), cstatus(side2, 'running')],
      { init: [0] },
    ],
  ] as const)('%s', (_t, statuses, expected) => {
    const never = { ...pod, spec: { ...pod.spec, restartPolicy: 'Never' } } as typeof pod;
    expect(summary(computePodActions(never, podStatus([...statuses])))).toMatchObject(expected);
  });

  it('a sidecar with a startup probe gates the next init container until it succeeds', () => {
    const probed = makePod({
      containers: [app],
      initContainers: [{ ...side1, startupProbe: { exec: { command: ['true'] } } }, init1],
    });
    const s = cstatus(side1, 'running');
    expect(computePodActions(probed, podStatus([s])).initContainersToStart).toEqual([]);
    expect(
      computePodActions(probed, podStatus([s]), { startup: () => 'success' }).initContainersToStart,
    ).toEqual([1]);
    const failed = computePodActions(probed, podStatus([s]), { startup: () => 'failure' });
    expect(summary(failed)).toMatchObject({
      init: [0],
      kill: ['side1:StartupProbe:Init container side1 failed startup probe'],
    });
  });

  it('changed sidecar is killed and restarted', () => {
    const changed = makePod({ containers: [app], initContainers: [{ ...side1, image: 'busybox:2' }] });
    const a = computePodActions(changed, podStatus([cstatus(app, 'running'), cstatus(side1, 'running')]));
    expect(summary(a)).toMatchObject({ init: [0], kill: ['side1::Init container side1 definition changed'] });
  });

  it('all regular containers done (Never): pod killed once the sidecars are up, sidecars not restarted', () => {
    const never = makePod({ containers: [app], initContainers: [side1], restartPolicy: 'Never' });
    const a = computePodActions(never, podStatus([cstatus(app, 'exited'), cstatus(side1, 'running')]));
    expect(summary(a)).toMatchObject({ killPod: true, init: [], start: [] });
    // Like upstream, an exited app container does not count as "initialized", so a dead
    // sidecar is first brought back and the pod killed on the next sync.
    const b = computePodActions(
      never,
      podStatus([cstatus(app, 'exited'), cstatus(side1, 'exited', { exitCode: 143 })]),
    );
    expect(summary(b)).toMatchObject({ killPod: false, init: [0], start: [] });
  });
});
