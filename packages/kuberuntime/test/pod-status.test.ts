import type { V1Container, V1PodStatus } from '@kubernetes/client-node';
import { PodSandboxState } from '@nodeagent/cri';
import { describe, expect, it } from 'vitest';
import { computePodStatus, ReasonCache, SyncErrorReason } from '../src/index.js';
import { cstatus, makePod, podStatus, sandbox } from './fixtures.js';

const app: V1Container = { name: 'app', image: 'busybox:1.36' };
const b: V1Container = { name: 'b', image: 'busybox:1.36' };
const init: V1Container = { name: 'init', image: 'busybox:1.36' };
const side: V1Container = { name: 'side', image: 'busybox:1.36', restartPolicy: 'Always' };

function conds(s: V1PodStatus): Record<string, string> {
  return Object.fromEntries(
    (s.conditions ?? []).map((c) => [c.type, c.reason ? `${c.status}/${c.reason}` : c.status]),
  );
}

describe('computePodStatus: phase', () => {
  it.each([
    ['nothing yet', 'Always', [app], [], [], 'Pending'],
    ['running', 'Always', [app], [], [cstatus(app, 'running')], 'Running'],
    ['one running one waiting', 'Always', [app, b], [], [cstatus(app, 'running')], 'Pending'],
    ['exited 0, Always → Running (restarting)', 'Always', [app], [], [cstatus(app, 'exited')], 'Running'],
    ['exited 0, OnFailure → Succeeded', 'OnFailure', [app], [], [cstatus(app, 'exited')], 'Succeeded'],
    [
      'exited 1, OnFailure → Running',
      'OnFailure',
      [app],
      [],
      [cstatus(app, 'exited', { exitCode: 1 })],
      'Running',
    ],
    ['exited 1, Never → Failed', 'Never', [app], [], [cstatus(app, 'exited', { exitCode: 1 })], 'Failed'],
    ['exited 0, Never → Succeeded', 'Never', [app], [], [cstatus(app, 'exited')], 'Succeeded'],
    ['init running → Pending', 'Always', [app], [init], [cstatus(init, 'running')], 'Pending'],
    [
      'init failed, Never → Failed',
      'Never',
      [app],
      [init],
      [cstatus(init, 'exited', { exitCode: 1 })],
      'Failed',
    ],
    [
      'init failed, Always → Pending',
      'Always',
      [app],
      [init],
      [cstatus(init, 'exited', { exitCode: 1 })],
      'Pending',
    ],
    [
      'sidecar running, app running',
      'Never',
      [app],
      [side],
      [cstatus(app, 'running'), cstatus(side, 'running')],
      'Running',
    ],
    [
      'app done, sidecar still running (Never) → Running until the sidecar stops',
      'Never',
      [app],
      [side],
      [cstatus(app, 'exited'), cstatus(side, 'running')],
      'Running',
    ],
    [
      'app done, sidecar stopped (Never) → Succeeded',
      'Never',
      [app],
      [side],
      [cstatus(app, 'exited'), cstatus(side, 'exited', { exitCode: 143 })],
      'Succeeded',
    ],
  ] as const)('%s', (_t, restartPolicy, containers, initContainers, statuses, phase) => {
    const pod = makePod({ restartPolicy, containers: [...containers], initContainers: [...initContainers] });
    expect(computePodStatus(pod, podStatus([...statuses])).phase).toBe(phase);
  });

  it('a terminal phase never goes back', () => {
    const pod = makePod({ containers: [app] });
    pod.status = { phase: 'Succeeded' };
    expect(computePodStatus(pod, podStatus([cstatus(app, 'running')])).phase).toBe('Succeeded');
  });
});

describe('computePodStatus: container statuses', () => {
  it('default waiting reasons: ContainerCreating, or PodInitializing with init containers', () => {
    expect(
      computePodStatus(makePod({ containers: [app] }), podStatus([])).containerStatuses?.[0]?.state,
    ).toEqual({
      waiting: { reason: 'ContainerCreating' },
    });
    const withInit = computePodStatus(makePod({ containers: [app], initContainers: [init] }), podStatus([]));
    expect(withInit.containerStatuses?.[0]?.state).toEqual({ waiting: { reason: 'PodInitializing' } });
    expect(withInit.initContainerStatuses?.[0]?.state).toEqual({ waiting: { reason: 'PodInitializing' } });
    expect(conds(withInit)).toMatchObject({
      Initialized: 'False/ContainersNotInitialized',
      PodReadyToStartContainers: 'True',
    });
    expect(withInit.conditions?.find((c) => c.type === 'Initialized')?.message).toBe(
      'containers with incomplete status: [init]',
    );
  });

  it('state, lastState and restart count from the two newest instances', () => {
    const pod = makePod({ containers: [app] });
    const old = cstatus(app, 'exited', { exitCode: 1, restartCount: 2, reason: 'OOMKilled', createdAt: 1 });
    const cur = cstatus(app, 'running', { restartCount: 3, createdAt: 2 });
    const s = computePodStatus(pod, podStatus([cur, old])).containerStatuses?.[0];
    expect(s).toMatchObject({
      name: 'app',
      restartCount: 3,
      ready: true,
      started: true,
      containerID: `containerd://${cur.id}`,
      lastState: { terminated: { exitCode: 1, reason: 'OOMKilled' } },
    });
    expect(s?.state?.running?.startedAt).toEqual(new Date(2000));
  });

  it.each([
    [
      SyncErrorReason.CrashLoopBackOff,
      'back-off 10s restarting failed container=app pod=web_default(uid-web)',
    ],
    [SyncErrorReason.ImagePullBackOff, 'Back-off pulling image "x"'],
    [SyncErrorReason.ErrImagePull, 'Failed to pull image "x": nope'],
    [SyncErrorReason.CreateContainerError, 'boom'],
    [SyncErrorReason.CreateContainerConfigError, 'configmap "cfg" not found'],
  ])('a cached start failure %s becomes the waiting reason', (reason, message) => {
    const pod = makePod({ containers: [app] });
    const cache = new ReasonCache();
    cache.add('uid-web', 'app', { reason, message });
    const exited = cstatus(app, 'exited', { exitCode: 1 });
    const s = computePodStatus(pod, podStatus([exited]), { reasonCache: cache }).containerStatuses?.[0];
    expect(s?.state).toEqual({ waiting: { reason, message } });
    expect(s?.lastState?.terminated).toMatchObject({ exitCode: 1, reason: 'Error' });
  });

  it('Completed containers of a finished pod keep their terminated state', () => {
    const pod = makePod({ containers: [app], restartPolicy: 'Never' });
    const cache = new ReasonCache();
    cache.add('uid-web', 'app', { reason: SyncErrorReason.CrashLoopBackOff, message: 'x' });
    const s = computePodStatus(pod, podStatus([cstatus(app, 'exited')]), { reasonCache: cache });
    expect(s.containerStatuses?.[0]?.state?.terminated?.reason).toBe('Completed');
    expect(conds(s)).toMatchObject({
      Ready: 'False/PodCompleted',
      ContainersReady: 'False/PodCompleted',
      Initialized: 'True',
    });
  });

  it('a container that vanished after running is reported as ContainerStatusUnknown', () => {
    const pod = makePod({ containers: [app] });
    pod.status = {
      containerStatuses: [
        {
          name: 'app',
          image: 'busybox:1.36',
          imageID: '',
          ready: true,
          restartCount: 1,
          state: { running: {} },
        },
      ],
    };
    const s = computePodStatus(pod, podStatus([])).containerStatuses?.[0];
    expect(s?.lastState?.terminated).toMatchObject({ reason: 'ContainerStatusUnknown', exitCode: 137 });
    expect(s?.restartCount).toBe(2);
  });

  it('readiness probe results gate Ready; readiness gates too', () => {
    const pod = makePod({ containers: [{ ...app, readinessProbe: { exec: { command: ['true'] } } }] });
    const running = cstatus(app, 'running');
    expect(conds(computePodStatus(pod, podStatus([running])))).toMatchObject({
      Ready: 'False/ContainersNotReady',
    });
    expect(
      conds(computePodStatus(pod, podStatus([running]), { probes: { readiness: () => 'success' } })),
    ).toMatchObject({
      Ready: 'True',
    });
    const gated = makePod({ containers: [app], readinessGates: [{ conditionType: 'example.com/lb' }] });
    const s = computePodStatus(gated, podStatus([cstatus(app, 'running')]));
    expect(s.conditions?.find((c) => c.type === 'Ready')).toMatchObject({
      status: 'False',
      reason: 'ReadinessGatesNotReady',
      message: 'corresponding condition of pod readiness gate "example.com/lb" does not exist.',
    });
  });

  it('lastTransitionTime is kept while a condition holds and moves when it flips', () => {
    const pod = makePod({ containers: [app] });
    const first = computePodStatus(pod, podStatus([cstatus(app, 'running')]), { now: 1000 });
    const same = computePodStatus(pod, podStatus([cstatus(app, 'running')]), { now: 5000, oldStatus: first });
    expect(same.conditions?.find((c) => c.type === 'Ready')?.lastTransitionTime).toEqual(new Date(1000));
    const flipped = computePodStatus(pod, podStatus([cstatus(app, 'exited', { exitCode: 1 })]), {
      now: 9000,
      oldStatus: same,
    });
    expect(flipped.conditions?.find((c) => c.type === 'Ready')?.lastTransitionTime).toEqual(new Date(9000));
    expect(flipped.conditions?.find((c) => c.type === 'PodScheduled')?.lastTransitionTime).toEqual(
      new Date(1000),
    );
  });

  it('DisruptionTarget from the previous status is carried, replacing the API copy; reason/message go with the phase', () => {
    const disruption = {
      type: 'DisruptionTarget',
      status: 'True',
      reason: 'TerminationByKubelet',
      message: 'The node was low on resource: memory. ',
      lastTransitionTime: new Date(3000),
    };
    const pod = makePod({ containers: [app], restartPolicy: 'Never' });
    pod.status = {
      phase: 'Running',
      conditions: [{ type: 'DisruptionTarget', status: 'False', reason: 'Stale' }],
    };
    const evicted: V1PodStatus = {
      phase: 'Failed',
      reason: 'Evicted',
      message: 'The node was low on resource: memory. ',
      conditions: [disruption],
    };
    const exited = podStatus([cstatus(app, 'exited', { exitCode: 137 })]);
    const s = computePodStatus(pod, exited, { oldStatus: evicted, podIsTerminal: true });
    expect(s).toMatchObject({ phase: 'Failed', reason: 'Evicted', message: evicted.message });
    expect(s.conditions?.filter((c) => c.type === 'DisruptionTarget')).toEqual([disruption]);
    // No previous reason: the API's, for the same phase.
    pod.status = { phase: 'Failed', reason: 'Evicted', message: 'from the API' };
    const fromApi = computePodStatus(pod, exited, { oldStatus: { phase: 'Failed' }, podIsTerminal: true });
    expect(fromApi).toMatchObject({ reason: 'Evicted', message: 'from the API' });
    expect(fromApi.conditions?.some((c) => c.type === 'DisruptionTarget')).toBe(false);
  });

  it("drops every kubelet-owned condition of the API's status and keeps the others, as upstream", () => {
    const pod = makePod({ containers: [app] });
    pod.status = {
      phase: 'Running',
      conditions: [
        { type: 'PodResizePending', status: 'True', reason: 'Deferred' },
        { type: 'PodResizeInProgress', status: 'True' },
        { type: 'Ready', status: 'False' },
        { type: 'example.com/gate', status: 'True' },
      ],
    };
    const s = computePodStatus(pod, podStatus([cstatus(app, 'running')]));
    expect(s.conditions?.map((c) => c.type)).toEqual([
      'example.com/gate',
      'PodReadyToStartContainers',
      'Initialized',
      'Ready',
      'ContainersReady',
      'PodScheduled',
    ]);
  });

  it('IPs, host IPs, QoS; no ready sandbox → PodReadyToStartContainers False', () => {
    const pod = makePod({ containers: [app] });
    const s = computePodStatus(pod, podStatus([cstatus(app, 'running')]), { hostIps: ['192.0.2.1'] });
    expect(s).toMatchObject({
      podIP: '10.88.0.5',
      podIPs: [{ ip: '10.88.0.5' }],
      hostIP: '192.0.2.1',
      qosClass: 'BestEffort',
    });
    const dead = computePodStatus(pod, podStatus([], [sandbox(0, PodSandboxState.SANDBOX_NOTREADY)]));
    expect(conds(dead).PodReadyToStartContainers).toBe('False');
    const host = computePodStatus(makePod({ containers: [app], hostNetwork: true }), podStatus([], []), {
      hostIps: ['192.0.2.1'],
    });
    expect(host.podIP).toBe('192.0.2.1');
  });
});
