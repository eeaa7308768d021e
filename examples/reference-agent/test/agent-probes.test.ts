// Probes on the embedded defaults: the prober runs exec probes through CRI ExecSync on the
// embedded runtime, whose containers play their `touch` / `rm` / `sleep` scripts on their files.
// A readiness-probed pod becomes Ready (and its EndpointSlice endpoint ready) once the probe
// passes; a pod whose liveness file disappears is restarted with restartCount +1, killed with
// the probe's grace period; a startup-probed pod reports `started: true` only after the probe passes.
import type { V1EndpointSlice } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import { EMBEDDED_BUSYBOX_IMAGE } from '../src/embedded-runtime.js';
import { makePod, podCondition, shContainer, useEmbeddedAgent, waitFor } from './helpers.js';

const NODE = 'probe-node';
const IMAGE = EMBEDDED_BUSYBOX_IMAGE;

describe('reference agent probes (embedded defaults)', () => {
  const h = useEmbeddedAgent({
    nodeName: NODE,
    podCidr: '127.78.0.0/24',
    nodeIp: '192.0.2.11',
  });
  const store = h.store;
  const getPod = h.pod;
  const condition = podCondition;

  it('readiness: Running but not Ready until the probe passes, then Ready and the endpoint ready', async () => {
    await h.agent.api.create('/api/v1/namespaces/default/services', {
      apiVersion: 'v1',
      kind: 'Service',
      metadata: { name: 'ready-later', namespace: 'default' },
      spec: { selector: { app: 'ready-later' }, ports: [{ port: 80, targetPort: 8080, protocol: 'TCP' }] },
    });
    const pod = makePod('ready-later', NODE, [
      {
        ...shContainer('app', IMAGE, 'sleep 2; touch /tmp/ready; while true; do sleep 10; done'),
        readinessProbe: { exec: { command: ['cat', '/tmp/ready'] }, periodSeconds: 1 },
      },
    ]);
    pod.metadata = { ...pod.metadata, labels: { app: 'ready-later' } };
    await h.agent.api.create('/api/v1/namespaces/default/pods', pod);

    const unready = await waitFor('ready-later Running, not ready', () => {
      const p = getPod('ready-later');
      return p?.status?.phase === 'Running' && p.status.containerStatuses?.[0]?.state?.running
        ? p
        : undefined;
    });
    expect(unready.status?.containerStatuses?.[0]).toMatchObject({ ready: false, started: true });
    expect(condition(unready, 'ContainersReady')).toMatchObject({
      status: 'False',
      reason: 'ContainersNotReady',
      message: 'containers with unready status: [app]',
    });
    expect(condition(unready, 'Ready')).toMatchObject({
      status: 'False',
      reason: 'ContainersNotReady',
      message: 'containers with unready status: [app]',
    });
    const slice = () =>
      (store().list('endpointslices', 'default') as unknown as V1EndpointSlice[]).find(
        (s) => s.metadata?.labels?.['kubernetes.io/service-name'] === 'ready-later',
      );
    const notReadyEndpoint = await waitFor('a not-ready endpoint', () => slice()?.endpoints?.[0]);
    expect(notReadyEndpoint.conditions?.ready).toBe(false);

    const ready = await waitFor('ready-later Ready', () => {
      const p = getPod('ready-later');
      return condition(p, 'Ready')?.status === 'True' ? p : undefined;
    });
    expect(ready.status?.containerStatuses?.[0]?.ready).toBe(true);
    expect(condition(ready, 'ContainersReady')?.status).toBe('True');
    const readyEndpoint = await waitFor('the endpoint ready', () => {
      const e = slice()?.endpoints?.[0];
      return e?.conditions?.ready === true ? e : undefined;
    });
    expect(readyEndpoint.addresses).toEqual([ready.status?.podIP]);
  });

  it('liveness: the container is killed with the probe grace period and restarted (restartCount +1)', async () => {
    await h.agent.api.create(
      '/api/v1/namespaces/default/pods',
      makePod('live-fail', NODE, [
        {
          ...shContainer('app', IMAGE, 'touch /tmp/healthy; sleep 2; rm -f /tmp/healthy; sleep 600'),
          livenessProbe: {
            exec: { command: ['cat', '/tmp/healthy'] },
            periodSeconds: 1,
            failureThreshold: 1,
            terminationGracePeriodSeconds: 3, // the pod's is 5; below 2 the kubelet uses 2
          },
        },
      ]),
    );
    const running = await waitFor('live-fail running', () => {
      const cs = getPod('live-fail')?.status?.containerStatuses?.[0];
      return cs?.state?.running ? cs : undefined;
    });
    expect(running.restartCount).toBe(0);
    const restarted = await waitFor(
      'live-fail restarted once',
      () => {
        const cs = getPod('live-fail')?.status?.containerStatuses?.[0];
        return cs !== undefined && cs.restartCount >= 1 && cs.state?.running ? cs : undefined;
      },
      15_000,
    );
    expect(restarted.restartCount).toBe(1);
    expect(restarted.containerID).not.toBe(running.containerID);
    expect(restarted.lastState?.terminated).toBeDefined();
    const firstId = running.containerID?.replace(/^[A-Za-z0-9.-]+:\/\//, '');
    const stop = h.agent.fakeRuntime
      ?.calls('StopContainer')
      .map((c) => c.request as { containerId: string; timeout: bigint })
      .find((r) => r.containerId === firstId);
    expect(Number(stop?.timeout)).toBe(3);
  });

  it('startup: started only after the startup probe passes', async () => {
    await h.agent.api.create(
      '/api/v1/namespaces/default/pods',
      makePod('slow-start', NODE, [
        {
          ...shContainer('app', IMAGE, 'sleep 3; touch /tmp/started; while true; do sleep 10; done'),
          startupProbe: {
            exec: { command: ['cat', '/tmp/started'] },
            periodSeconds: 1,
            failureThreshold: 30,
          },
        },
      ]),
    );
    const notStarted = await waitFor('slow-start running', () => {
      const cs = getPod('slow-start')?.status?.containerStatuses?.[0];
      return cs?.state?.running ? cs : undefined;
    });
    expect(notStarted).toMatchObject({ started: false, ready: false });
    const started = await waitFor(
      'slow-start started',
      () => {
        const cs = getPod('slow-start')?.status?.containerStatuses?.[0];
        return cs?.started === true ? cs : undefined;
      },
      15_000,
    );
    expect(started).toMatchObject({ ready: true, restartCount: 0 });
    expect(started.containerID).toBe(notStarted.containerID);
    expect(Date.now() - new Date(started.state?.running?.startedAt ?? 0).getTime()).toBeGreaterThanOrEqual(
      3_000,
    );
    expect(condition(getPod('slow-start'), 'Ready')?.status).toBe('True');
  });
});
