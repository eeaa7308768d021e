// Manager and worker lifecycle on a fake clock: which containers get workers, jitter only
// after an agent (re)start, deletion timestamp, terminal phase, container replacement,
// not-running containers, malformed probes, restart requests and the exec deadline.
import type { V1ContainerStatus } from '@kubernetes/client-node';
import { InvalidOptionsError } from '@nodeagent/core';
import { describe, expect, it } from 'vitest';
import { ProbeManager } from '../src/index.js';
import { StaticPodStatusProvider } from '../src/testing.js';
import { CID, CONTAINER, execProbe, harness, POD_UID, podWith, runningStatus } from './helpers.js';

const fail = { output: '', exitCode: 1 };

describe('which containers are probed', () => {
  it('regular containers and restartable init containers (sidecars) get workers, plain init containers do not', async () => {
    const h = await harness();
    const pod = podWith(
      { livenessProbe: execProbe(), readinessProbe: execProbe() },
      {
        initContainers: [
          {
            name: 'sidecar',
            image: 'x',
            restartPolicy: 'Always',
            readinessProbe: execProbe(),
            startupProbe: execProbe(),
          },
          { name: 'setup', image: 'x', readinessProbe: execProbe(), livenessProbe: execProbe() },
        ],
      },
    );
    h.manager.addPod(pod);
    expect(h.manager.workerCount).toBe(4);
    h.manager.addPod(pod);
    expect(h.manager.workerCount).toBe(4);
    h.statuses.set(POD_UID, {
      ...runningStatus(new Date(h.clock.now()), {
        name: 'sidecar',
        containerID: 'containerd://side',
        init: true,
        started: true,
      }),
    });
    await h.clock.advance(0);
    expect(h.manager.resultOf('readiness', 'containerd://side')).toBe('success');
    expect(h.runner.calls.every((c) => c.containerId === 'side')).toBe(true);
    h.manager.removePod(pod);
    expect(h.manager.workerCount).toBe(0);
    expect(h.manager.resultOf('readiness', 'containerd://side')).toBeUndefined();
    await h.manager.stop();
  });

  it('a sidecar that exited keeps its worker even with restartPolicy Never; a regular container does not', async () => {
    const h = await harness();
    const terminated = (name: string, init: boolean) => ({
      phase: 'Running' as const,
      [init ? 'initContainerStatuses' : 'containerStatuses']: [
        {
          name,
          containerID: `containerd://${name}`,
          image: 'x',
          imageID: '',
          ready: false,
          restartCount: 0,
          state: { terminated: { exitCode: 1 } },
        },
      ],
    });
    const pod = podWith(
      { readinessProbe: execProbe() },
      {
        pod: { spec: { restartPolicy: 'Never', containers: [] } },
        initContainers: [{ name: 'side', image: 'x', restartPolicy: 'Always', readinessProbe: execProbe() }],
      },
    );
    pod.spec = {
      ...pod.spec,
      containers: [{ name: CONTAINER, image: 'x', readinessProbe: execProbe() }],
    } as NonNullable<typeof pod.spec>;
    h.statuses.set(POD_UID, { ...terminated('side', true), ...terminated(CONTAINER, false) });
    h.manager.addPod(pod);
    await h.clock.advance(0);
    expect(h.manager.workerCount).toBe(1);
    expect(h.manager.resultOf('readiness', 'containerd://side')).toBe('failure');
    await h.manager.stop();
  });
});

describe('jitter only on the first probe after the agent (re)started', () => {
  it('a worker created within one period of start waits random × period before its first probe', async () => {
    const h = await harness({ random: () => 0.5 });
    h.statuses.set(POD_UID, runningStatus(new Date(h.clock.now()), { started: true }));
    h.manager.addPod(podWith({ readinessProbe: execProbe({ periodSeconds: 10 }) }));
    await h.clock.advance(4_999);
    expect(h.runner.calls).toHaveLength(0);
    await h.clock.advance(1);
    expect(h.runner.calls).toHaveLength(1);
    await h.clock.advance(10_000);
    expect(h.runner.calls).toHaveLength(2);
    await h.manager.stop();
  });

  it('a worker created more than a period after start probes at once', async () => {
    const h = await harness({ random: () => 0.5 });
    await h.clock.advance(11_000);
    h.statuses.set(POD_UID, runningStatus(new Date(h.clock.now()), { started: true }));
    h.manager.addPod(podWith({ readinessProbe: execProbe({ periodSeconds: 10 }) }));
    await h.clock.advance(0);
    expect(h.runner.calls).toHaveLength(1);
    await h.manager.stop();
  });

  it('other probes keep their schedule: one probe per period each', async () => {
    const h = await harness();
    h.statuses.set(POD_UID, runningStatus(new Date(h.clock.now()), { started: true }));
    h.manager.addPod(
      podWith({
        readinessProbe: execProbe({ periodSeconds: 2 }),
        livenessProbe: execProbe({ periodSeconds: 3 }),
      }),
    );
    await h.clock.advance(12_000);
    // t=0 both; readiness every 2 s (0..12: 7 probes), liveness every 3 s (0..12: 5 probes)
    expect(h.runner.calls).toHaveLength(12);
    await h.manager.stop();
  });
});

describe('when workers stop', () => {
  it('a deletion timestamp sets liveness and startup to success and stops them; readiness continues', async () => {
    const h = await harness();
    h.runner.script = () => fail;
    const pod = podWith(
      { livenessProbe: execProbe({ failureThreshold: 1 }), readinessProbe: execProbe() },
      {
        pod: { metadata: { name: 'web', namespace: 'default', uid: POD_UID, deletionTimestamp: new Date() } },
      },
    );
    h.statuses.set(POD_UID, runningStatus(new Date(h.clock.now()), { started: true }));
    h.manager.addPod(pod);
    await h.clock.advance(0);
    expect(h.manager.workerCount).toBe(1);
    expect(h.manager.shouldRestart(CID)).toBe(false);
    await h.clock.advance(5_000);
    expect(h.runner.calls.length).toBeGreaterThanOrEqual(5);
    await h.manager.stop();
  });

  it('a terminal pod phase stops every worker of the pod', async () => {
    const h = await harness();
    h.statuses.set(POD_UID, runningStatus(new Date(h.clock.now()), { started: true }));
    h.manager.addPod(podWith({ livenessProbe: execProbe(), readinessProbe: execProbe() }));
    await h.clock.advance(0);
    expect(h.manager.workerCount).toBe(2);
    h.statuses.set(POD_UID, { ...runningStatus(new Date(h.clock.now())), phase: 'Succeeded' });
    await h.clock.advance(1000);
    expect(h.manager.workerCount).toBe(0);
    expect(h.manager.resultOf('readiness', CID)).toBeUndefined();
    await h.manager.stop();
  });

  it('stopLivenessAndStartup keeps readiness; cleanupPods stops pods that are not desired', async () => {
    const h = await harness();
    const pod = podWith({
      livenessProbe: execProbe(),
      readinessProbe: execProbe(),
      startupProbe: execProbe(),
    });
    h.manager.addPod(pod);
    h.manager.stopLivenessAndStartup(pod);
    expect(h.manager.workerCount).toBe(1);
    h.manager.cleanupPods([POD_UID]);
    expect(h.manager.workerCount).toBe(1);
    h.manager.cleanupPods([]);
    expect(h.manager.workerCount).toBe(0);
    await h.manager.stop();
  });

  it('a not-running container publishes failure; with restartPolicy Never and terminated the worker ends', async () => {
    const h = await harness();
    const pod = podWith(
      { readinessProbe: execProbe() },
      { pod: { spec: { restartPolicy: 'Never', containers: [] } } },
    );
    pod.spec = {
      ...pod.spec,
      containers: [{ name: CONTAINER, image: 'x', readinessProbe: execProbe() }],
    } as NonNullable<typeof pod.spec>;
    const waiting = runningStatus(new Date());
    const cs = waiting.containerStatuses?.[0];
    if (cs) cs.state = { waiting: { reason: 'ContainerCreating' } };
    h.statuses.set(POD_UID, waiting);
    h.manager.addPod(pod);
    await h.clock.advance(0);
    expect(h.manager.resultOf('readiness', CID)).toBe('failure');
    expect(h.manager.workerCount).toBe(1);
    if (cs) cs.state = { terminated: { exitCode: 0 } };
    await h.clock.advance(1000);
    expect(h.manager.workerCount).toBe(0);
    await h.manager.stop();
  });

  it('no status yet, or no container ID yet: the worker waits', async () => {
    const h = await harness();
    h.manager.addPod(podWith({ readinessProbe: execProbe() }));
    await h.clock.advance(3000);
    h.statuses.set(POD_UID, runningStatus(new Date(h.clock.now()), { containerID: '', started: true }));
    await h.clock.advance(3000);
    expect(h.runner.calls).toHaveLength(0);
    expect(h.manager.workerCount).toBe(1);
    await h.manager.stop();
  });
});

describe('container replacement', () => {
  it('a new container ID drops the old result and starts from the initial value', async () => {
    const h = await harness();
    h.statuses.set(POD_UID, runningStatus(new Date(h.clock.now()), { started: true }));
    h.manager.addPod(podWith({ readinessProbe: execProbe() }));
    await h.clock.advance(0);
    expect(h.manager.resultOf('readiness', CID)).toBe('success');
    const updates: string[] = [];
    h.manager.on('result', (u) => updates.push(`${u.containerID} ${u.result}`));
    h.runner.script = () => fail;
    h.statuses.set(
      POD_UID,
      runningStatus(new Date(h.clock.now()), { started: true, containerID: 'containerd://c2' }),
    );
    await h.clock.advance(1000);
    expect(h.manager.resultOf('readiness', CID)).toBeUndefined();
    expect(updates).toEqual(['containerd://c2 failure']);
    await h.manager.stop();
  });
});

describe('restart requests', () => {
  it('a liveness failure asks for a restart with the probe-level grace period, until the container is replaced', async () => {
    const h = await harness();
    h.runner.script = () => fail;
    const requests: unknown[] = [];
    h.manager.on('restart', (r) => requests.push(r));
    const pod = podWith(
      { livenessProbe: execProbe({ failureThreshold: 2, terminationGracePeriodSeconds: 5 }) },
      { pod: { spec: { terminationGracePeriodSeconds: 30, containers: [] } } },
    );
    pod.spec = {
      ...pod.spec,
      containers: [
        {
          name: CONTAINER,
          image: 'x',
          livenessProbe: execProbe({ failureThreshold: 2, terminationGracePeriodSeconds: 5 }),
        },
      ],
    } as NonNullable<typeof pod.spec>;
    h.statuses.set(POD_UID, runningStatus(new Date(h.clock.now()), { started: true }));
    h.manager.addPod(pod);
    await h.clock.advance(0);
    expect(h.manager.shouldRestart(CID)).toBe(false);
    await h.clock.advance(1000);
    expect(h.manager.shouldRestart('c1')).toBe(true);
    expect(h.manager.restartRequest(CID)).toMatchObject({
      probeType: 'liveness',
      reason: 'LivenessProbe',
      message: `Container ${CONTAINER} failed liveness probe`,
      gracePeriodSeconds: 5,
      containerID: CID,
    });
    expect(requests).toHaveLength(1);
    expect(h.manager.resultLookup('liveness')('c1')).toBe('failure');
    h.runner.script = () => ({ output: '', exitCode: 0 });
    h.statuses.set(
      POD_UID,
      runningStatus(new Date(h.clock.now()), { started: true, containerID: 'containerd://c2' }),
    );
    await h.clock.advance(1000);
    expect(h.manager.shouldRestart(CID)).toBe(false);
    expect(h.manager.shouldRestart('containerd://c2')).toBe(false);
    await h.manager.stop();
  });

  it('a startup failure asks for a restart with the pod grace period when the probe has none', async () => {
    const h = await harness();
    h.runner.script = () => fail;
    const pod = podWith({ startupProbe: execProbe({ failureThreshold: 1 }) });
    pod.spec = { ...pod.spec, terminationGracePeriodSeconds: 30 } as NonNullable<typeof pod.spec>;
    h.statuses.set(POD_UID, runningStatus(new Date(h.clock.now()), { started: false }));
    h.manager.addPod(pod);
    await h.clock.advance(0);
    expect(h.manager.restartRequest(CID)).toMatchObject({ reason: 'StartupProbe', gracePeriodSeconds: 30 });
    await h.manager.stop();
  });
});

describe('bad input stays with its container', () => {
  it('a probe with no handler reports upstream\'s "missing probe handler" each period; the other container probes on', async () => {
    const h = await harness();
    const pod = podWith({ readinessProbe: { periodSeconds: 1 } });
    pod.spec?.containers.push({ name: 'other', image: 'x', readinessProbe: execProbe() });
    const status = runningStatus(new Date(h.clock.now()), { started: true });
    status.containerStatuses?.push({
      ...(status.containerStatuses?.[0] as V1ContainerStatus),
      name: 'other',
      containerID: 'containerd://o1',
    });
    h.statuses.set(POD_UID, status);
    h.manager.addPod(pod);
    await h.clock.advance(0);
    expect(h.recorder.lines()).toEqual([
      `Warning Unhealthy Readiness probe errored and resulted in unknown state: missing probe handler for web_default(${POD_UID}):${CONTAINER}`,
    ]);
    expect(h.manager.resultOf('readiness', CID)).toBe('failure');
    expect(h.manager.resultOf('readiness', 'containerd://o1')).toBe('success');
    await h.clock.advance(1000);
    expect(h.recorder.events).toHaveLength(2);
    await h.manager.stop();
  });

  it('negative or wrong-typed numbers are an invalid probe for that container, never a crash', async () => {
    const h = await harness();
    const probe = { ...execProbe(), periodSeconds: -5, failureThreshold: 'three' } as never;
    h.statuses.set(POD_UID, runningStatus(new Date(h.clock.now()), { started: true }));
    h.manager.addPod(podWith({ livenessProbe: probe }));
    await h.clock.advance(0);
    expect(h.recorder.lines()).toEqual([
      'Warning Unhealthy Liveness probe errored and resulted in unknown state: invalid probe: periodSeconds must be an integer >= 1, got -5; failureThreshold must be an integer >= 1, got "three"',
    ]);
    expect(h.manager.resultOf('liveness', CID)).toBe('success');
    expect(h.runner.calls).toHaveLength(0);
    // The API default period (10 s) schedules the next report.
    await h.clock.advance(10_000);
    expect(h.recorder.events).toHaveLength(2);
    await h.manager.stop();
  });

  it('malformed pod objects are skipped, never thrown from addPod', async () => {
    const h = await harness();
    expect(() =>
      h.manager.addPod({ metadata: { uid: 'x' }, spec: { containers: 'oops' } } as never),
    ).not.toThrow();
    expect(() => h.manager.addPod({} as never)).not.toThrow();
    expect(() =>
      h.manager.addPod({
        metadata: { uid: 'y' },
        spec: {
          containers: [null, { name: 'c', readinessProbe: { httpGet: { path: 5, httpHeaders: 'x' } } }],
        },
      } as never),
    ).not.toThrow();
    expect(h.manager.workerCount).toBe(1);
    h.statuses.set('y', runningStatus(new Date(h.clock.now()), { name: 'c', started: true }));
    await h.clock.advance(0);
    expect(h.recorder.lines()[0]).toMatch(
      /^Warning Unhealthy Readiness probe errored and resulted in unknown state: /,
    );
    await h.manager.stop();
  });

  it('a provider that throws, or a status without containers, only skips that probe', async () => {
    const h = await harness({
      statusProvider: {
        getPodStatus: () => {
          throw new Error('boom');
        },
      },
    });
    h.manager.addPod(podWith({ readinessProbe: execProbe() }));
    await h.clock.advance(3000);
    expect(h.manager.workerCount).toBe(1);
    await h.manager.stop();
  });
});

describe('exec timeouts', () => {
  it("a runner that never answers is cut off at timeout + runtime request timeout: upstream's timeout message", async () => {
    const h = await harness({ runtimeRequestTimeoutMs: 2_000 });
    h.runner.script = () => 'hang';
    const pod = podWith({
      livenessProbe: {
        exec: { command: ['sleep', '100'] },
        periodSeconds: 10,
        timeoutSeconds: 1,
        failureThreshold: 1,
      },
    });
    h.statuses.set(POD_UID, runningStatus(new Date(h.clock.now()), { started: true }));
    h.manager.addPod(pod);
    await h.clock.advance(2_999);
    expect(h.recorder.events).toHaveLength(0);
    await h.clock.advance(1);
    expect(h.recorder.lines()).toEqual([
      'Warning Unhealthy Liveness probe failed: command "sleep 100" timed out',
    ]);
    expect(h.manager.shouldRestart(CID)).toBe(true);
    expect(h.runner.calls[0]).toMatchObject({ containerId: 'c1', cmd: ['sleep', '100'], timeoutMs: 1000 });
    await h.manager.stop();
  });

  it('a runner that reports a timeout is a failure with the same message; $(VAR) expands from literal env', async () => {
    const h = await harness();
    h.runner.script = () => 'timeout';
    const pod = podWith(
      { readinessProbe: { exec: { command: ['sh', '-c', 'check $(A) $(B)'] }, periodSeconds: 1 } },
      { container: { env: [{ name: 'A', value: 'x' }] } },
    );
    h.statuses.set(POD_UID, runningStatus(new Date(h.clock.now()), { started: true }));
    h.manager.addPod(pod);
    await h.clock.advance(0);
    expect(h.recorder.lines()).toEqual([
      'Warning Unhealthy Readiness probe failed: command "sh -c check x $(B)" timed out',
    ]);
    await h.manager.stop();
  });
});

describe('options and lifecycle', () => {
  it('rejects a missing status provider and bad numbers with InvalidOptionsError', () => {
    expect(() => new ProbeManager({} as never)).toThrow(InvalidOptionsError);
    expect(
      () => new ProbeManager({ statusProvider: new StaticPodStatusProvider(), runtimeRequestTimeoutMs: -1 }),
    ).toThrow('runtimeRequestTimeoutMs must be a finite number >= 0, got -1');
    expect(() => new ProbeManager({ statusProvider: new StaticPodStatusProvider(), userAgent: '' })).toThrow(
      InvalidOptionsError,
    );
  });

  it('a second start rejects; stop is idempotent and safe before start; workers wait for start', async () => {
    const m = new ProbeManager({ statusProvider: new StaticPodStatusProvider() });
    await m.stop();
    const h = await harness();
    await expect(h.manager.start()).rejects.toThrow('ProbeManager was already started');
    await h.manager.stop();
    await h.manager.stop();
    h.manager.addPod(podWith({ readinessProbe: execProbe() }));
    expect(h.manager.workerCount).toBe(0);
  });

  it('a throwing event handler is logged and does not stop the worker', async () => {
    const h = await harness();
    h.manager.on('result', () => {
      throw new Error('handler bug');
    });
    h.statuses.set(POD_UID, runningStatus(new Date(h.clock.now()), { started: true }));
    h.manager.addPod(podWith({ readinessProbe: execProbe() }));
    await h.clock.advance(0);
    h.runner.script = () => fail;
    await h.clock.advance(3000);
    expect(h.manager.resultOf('readiness', CID)).toBe('failure');
    await h.manager.stop();
  });
});
