// Network probes on the embedded defaults: embedded pods get loopback IPs and their containers
// listen on their declared containerPorts (HTTP from the script's files, TCP, grpc.health.v1),
// so the prober reaches them from the agent as the kubelet reaches a real pod. An httpGet
// readiness-probed pod becomes Ready and its EndpointSlice endpoint ready; a pod whose httpGet
// liveness endpoint starts failing is restarted with restartCount +1 (and listens again); a grpc
// readiness probe passes only while the health service answers SERVING.
import type { V1EndpointSlice } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import { EMBEDDED_BUSYBOX_IMAGE } from '../src/embedded-runtime.js';
import { makePod, podCondition, shContainer, useEmbeddedAgent, waitFor } from './helpers.js';

const NODE = 'net-probe-node';
const IMAGE = EMBEDDED_BUSYBOX_IMAGE;

describe('reference agent network probes (embedded defaults)', () => {
  const h = useEmbeddedAgent({
    nodeName: NODE,
    nodeIp: '192.0.2.12',
  });
  const store = h.store;
  const getPod = h.pod;
  const condition = podCondition;

  it('pods get loopback IPs from 127.88.0.0/16 by default, and listen on their container ports', async () => {
    await h.agent.api.create(
      '/api/v1/namespaces/default/pods',
      makePod('listener', NODE, [
        {
          ...shContainer('app', IMAGE, 'mkdir -p /www; touch /www/index.html; httpd -f -p 8080 -h /www'),
          ports: [{ containerPort: 8080 }],
        },
      ]),
    );
    const pod = await waitFor('listener running with an IP', () => {
      const p = getPod('listener');
      return p?.status?.containerStatuses?.[0]?.state?.running && p.status.podIP ? p : undefined;
    });
    expect(pod.status?.podIP).toMatch(/^127\.88\.\d+\.\d+$/);
    const base = `http://${pod.status?.podIP}:8080`;
    const index = await waitFor('GET /index.html', () => fetch(`${base}/index.html`).catch(() => undefined));
    expect(index.status).toBe(200);
    expect((await fetch(`${base}/missing`)).status).toBe(404);
  });

  it('httpGet readiness: Ready once the endpoint answers 200, then the EndpointSlice endpoint is ready', async () => {
    await h.agent.api.create('/api/v1/namespaces/default/services', {
      apiVersion: 'v1',
      kind: 'Service',
      metadata: { name: 'http-ready', namespace: 'default' },
      spec: { selector: { app: 'http-ready' }, ports: [{ port: 80, targetPort: 'http', protocol: 'TCP' }] },
    });
    const pod = makePod('http-ready', NODE, [
      {
        ...shContainer(
          'app',
          IMAGE,
          'mkdir -p /www; httpd -p 8080 -h /www; sleep 2; touch /www/ready; while true; do sleep 10; done',
        ),
        ports: [{ name: 'http', containerPort: 8080 }],
        readinessProbe: { httpGet: { path: '/ready', port: 'http' }, periodSeconds: 1 },
        livenessProbe: { tcpSocket: { port: 8080 }, periodSeconds: 1, failureThreshold: 1 },
      },
    ]);
    pod.metadata = { ...pod.metadata, labels: { app: 'http-ready' } };
    await h.agent.api.create('/api/v1/namespaces/default/pods', pod);

    const unready = await waitFor('http-ready running, not ready', () => {
      const p = getPod('http-ready');
      return p?.status?.containerStatuses?.[0]?.state?.running ? p : undefined;
    });
    expect(unready.status?.containerStatuses?.[0]?.ready).toBe(false);
    const slice = () =>
      (store().list('endpointslices', 'default') as unknown as V1EndpointSlice[]).find(
        (s) => s.metadata?.labels?.['kubernetes.io/service-name'] === 'http-ready',
      );
    const ready = await waitFor('http-ready Ready', () => {
      const p = getPod('http-ready');
      return condition(p, 'Ready')?.status === 'True' ? p : undefined;
    });
    expect(ready.status?.containerStatuses?.[0]).toMatchObject({ ready: true, restartCount: 0 });
    expect(condition(ready, 'ContainersReady')?.status).toBe('True');
    const endpoint = await waitFor('the endpoint ready', () => {
      const e = slice()?.endpoints?.[0];
      return e?.conditions?.ready === true ? e : undefined;
    });
    expect(endpoint.addresses).toEqual([ready.status?.podIP]);
    // The tcpSocket liveness probe (failureThreshold 1) kept passing: no restart.
    expect(getPod('http-ready')?.status?.containerStatuses?.[0]?.restartCount).toBe(0);
  });

  it('httpGet liveness: once /healthz is gone the container is restarted (restartCount +1) and listens again', async () => {
    await h.agent.api.create(
      '/api/v1/namespaces/default/pods',
      makePod('http-live', NODE, [
        {
          ...shContainer(
            'app',
            IMAGE,
            'mkdir -p /www; touch /www/healthz; httpd -p 8080 -h /www; sleep 3; rm -f /www/healthz; sleep 600',
          ),
          ports: [{ containerPort: 8080 }],
          livenessProbe: {
            httpGet: { path: '/healthz', port: 8080 },
            periodSeconds: 1,
            failureThreshold: 2,
            terminationGracePeriodSeconds: 2,
          },
        },
      ]),
    );
    const running = await waitFor('http-live running', () => {
      const cs = getPod('http-live')?.status?.containerStatuses?.[0];
      return cs?.state?.running ? cs : undefined;
    });
    expect(running.restartCount).toBe(0);
    const podIP = getPod('http-live')?.status?.podIP;
    const healthz = await waitFor('GET /healthz', () =>
      fetch(`http://${podIP}:8080/healthz`).catch(() => undefined),
    );
    expect(healthz.status).toBe(200);
    const restarted = await waitFor(
      'http-live restarted once',
      () => {
        const cs = getPod('http-live')?.status?.containerStatuses?.[0];
        return cs !== undefined && cs.restartCount >= 1 && cs.state?.running ? cs : undefined;
      },
      20_000,
    );
    expect(restarted.restartCount).toBe(1);
    expect(restarted.containerID).not.toBe(running.containerID);
    expect(restarted.lastState?.terminated).toBeDefined();
    // The new container serves /healthz again from its own start.
    const again = await waitFor('GET /healthz after the restart', () =>
      fetch(`http://${podIP}:8080/healthz`)
        .then((r) => (r.status === 200 ? r : undefined))
        .catch(() => undefined),
    );
    expect(again.status).toBe(200);
  });

  it('grpc readiness: ready only while the health service answers SERVING', async () => {
    await h.agent.api.create(
      '/api/v1/namespaces/default/pods',
      makePod('grpc-health', NODE, [
        {
          ...shContainer(
            'app',
            IMAGE,
            'sleep 2; touch /tmp/grpc-serving; sleep 4; rm -f /tmp/grpc-serving; sleep 600',
          ),
          ports: [{ containerPort: 9090 }],
          readinessProbe: { grpc: { port: 9090 }, periodSeconds: 1 },
        },
      ]),
    );
    const readyFlag = () => getPod('grpc-health')?.status?.containerStatuses?.[0]?.ready;
    const running = await waitFor('grpc-health running', () => {
      const cs = getPod('grpc-health')?.status?.containerStatuses?.[0];
      return cs?.state?.running ? cs : undefined;
    });
    expect(running.ready).toBe(false); // NOT_SERVING for the first ~2 s
    await waitFor('grpc-health ready (SERVING)', () => readyFlag() === true);
    await waitFor('grpc-health not ready again (NOT_SERVING)', () => readyFlag() === false, 10_000);
    expect(getPod('grpc-health')?.status?.containerStatuses?.[0]?.restartCount).toBe(0);
  });
});
