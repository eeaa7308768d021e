// The agent's own small pieces: flags, the node Ready condition, the status-only filter,
// the healthz body, the PodStatusWriter's change detection and the Lease's MicroTime.
import type { V1Pod } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import type { ApiClient } from '../src/api-client.js';
import { FlagError, parseFlags } from '../src/flags.js';
import { renderHealthz } from '../src/health-server.js';
import { microTime } from '../src/node-lease.js';
import { notReadyReasons, readyCondition } from '../src/node-ready.js';
import { PodStatusWriter } from '../src/pod-status-writer.js';

describe('parseFlags', () => {
  it('defaults to the embedded setup with the host name as node name', () => {
    const f = parseFlags([], 'My-Host');
    expect(f).toMatchObject({
      nodeName: 'my-host',
      kubeconfig: undefined,
      runtimeEndpoint: undefined,
      demo: false,
    });
    expect(f.logLevel).toBe('info');
  });
  it('parses every flag', () => {
    const f = parseFlags([
      '--kubeconfig=/k',
      '--runtime-endpoint',
      'unix:///run/containerd/containerd.sock',
      '--node-name=n1',
      '--pod-cidr=10.1.0.0/24',
      '--demo',
      '--exit-after=2.5',
      '--log-level=debug',
      '--health-port=0',
      '--max-container-restart-period=5',
      '--pod-manifest-path=/etc/kubernetes/manifests',
      '--manifest-url=http://127.0.0.1:8080/pods',
      '--manifest-url-header=Authorization: Bearer x',
      '--manifest-url-header',
      'X-Node:n1',
      '--max-pods=20',
      '--allowed-unsafe-sysctls=net.core.somaxconn, kernel.msg*',
    ]);
    expect(f).toMatchObject({
      kubeconfig: '/k',
      runtimeEndpoint: 'unix:///run/containerd/containerd.sock',
      nodeName: 'n1',
      podCidr: '10.1.0.0/24',
      demo: true,
      exitAfterSeconds: 2.5,
      logLevel: 'debug',
      healthPort: 0,
      maxContainerRestartPeriodSeconds: 5,
      podManifestPath: '/etc/kubernetes/manifests',
      manifestUrl: 'http://127.0.0.1:8080/pods',
      manifestUrlHeaders: [
        ['Authorization', 'Bearer x'],
        ['X-Node', 'n1'],
      ],
      maxPods: 20,
      allowedUnsafeSysctls: ['net.core.somaxconn', 'kernel.msg*'],
    });
  });
  it.each([
    [['--bogus'], /bogus/],
    [['--exit-after=soon'], /--exit-after: expected a number/],
    [['--runtime-endpoint=/run/x.sock'], /unix:\/\/\/path/],
    [['--node-name=Bad_Name'], /not a valid DNS subdomain/],
    [['--log-level=loud'], /--log-level/],
    [['--health-port=70000'], /--health-port/],
    [['--pod-cidr=10.0.0.0'], /--pod-cidr/],
    [['--max-pods=0'], /--max-pods/],
    [
      ['--allowed-unsafe-sysctls=kernel.panic'],
      /--allowed-unsafe-sysctls: .*"kernel.panic" are not known to be namespaced/,
    ],
    [['--max-pods=1.5'], /--max-pods: expected an integer/],
    [['--manifest-url-header=NoColon'], /--manifest-url-header: expected 'Name:value'/],
  ])('rejects %j', (argv, message) => {
    expect(() => parseFlags(argv)).toThrow(FlagError);
    expect(() => parseFlags(argv)).toThrow(message);
  });
});

describe('node Ready condition', () => {
  const ok = { type: 'RuntimeReady', status: true, reason: '', message: '' };
  const net = { type: 'NetworkReady', status: true, reason: '', message: '' };
  it('is True with KubeletReady when runtime, network and PLEG are fine', () => {
    const c = readyCondition(
      { runtime: { conditions: [ok, net] }, pleg: { ok: true, message: '' } },
      undefined,
      'T1',
    );
    expect(c).toMatchObject({
      status: 'True',
      reason: 'KubeletReady',
      message: 'kubelet is posting ready status',
    });
    expect(c.lastTransitionTime).toBe('T1');
  });
  it('joins the kubelet messages when not ready', () => {
    const reasons = notReadyReasons({
      runtime: {
        conditions: [
          ok,
          { ...net, status: false, reason: 'NetworkPluginNotReady', message: 'cni config uninitialized' },
        ],
      },
      pleg: { ok: false, message: 'pleg has yet to be successful' },
    });
    expect(reasons).toEqual([
      'container runtime network not ready: NetworkReady=false reason:NetworkPluginNotReady message:cni config uninitialized',
      'PLEG is not healthy: pleg has yet to be successful',
    ]);
    expect(notReadyReasons({ runtime: { error: 'UNAVAILABLE' }, pleg: { ok: true, message: '' } })).toEqual([
      'container runtime is down: UNAVAILABLE',
    ]);
  });
  it('keeps lastTransitionTime until the status flips', () => {
    const ready = { runtime: { conditions: [ok, net] }, pleg: { ok: true, message: '' } };
    const first = readyCondition(ready, undefined, 'T1');
    const second = readyCondition(ready, first, 'T2');
    expect(second.lastTransitionTime).toBe('T1');
    expect(second.lastHeartbeatTime).toBe('T2');
    const down = readyCondition({ ...ready, pleg: { ok: false, message: 'x' } }, second, 'T3');
    expect(down).toMatchObject({ status: 'False', reason: 'KubeletNotReady', lastTransitionTime: 'T3' });
  });
});

describe('renderHealthz', () => {
  it('answers ok, or 500 with the failed checks', () => {
    expect(renderHealthz({ ping: () => undefined }, false)).toEqual({ code: 200, body: 'ok' });
    expect(
      renderHealthz({ ping: () => undefined, pleg: () => 'pleg was last seen active 3m0.1s ago' }, false),
    ).toEqual({
      code: 500,
      body: '[+]ping ok\n[-]pleg failed: pleg was last seen active 3m0.1s ago\nhealthz check failed\n',
    });
  });
});

describe('PodStatusWriter', () => {
  it('patches only changed statuses, nulls vanished fields and keeps foreign ones', async () => {
    const sent: { path: string; body: unknown }[] = [];
    const api = {
      patch: async (path: string, _kind: string, body: unknown) => {
        sent.push({ path, body });
        return {};
      },
    } as unknown as ApiClient;
    const writer = new PodStatusWriter(api);
    const pod: V1Pod = {
      metadata: { name: 'p', namespace: 'ns', uid: 'u' },
      status: { phase: 'Pending', nominatedNodeName: 'x', message: 'old' },
    };
    expect(await writer.setStatus(pod, { phase: 'Running', podIP: '10.0.0.2' })).toBe(true);
    expect(sent).toEqual([
      {
        path: '/api/v1/namespaces/ns/pods/p/status',
        body: { status: { phase: 'Running', podIP: '10.0.0.2', message: null } },
      },
    ]);
    expect(await writer.setStatus(pod, { phase: 'Running', podIP: '10.0.0.2' })).toBe(false);
    expect(await writer.setStatus(pod, { phase: 'Running' })).toBe(true);
    expect(sent[1]?.body).toEqual({ status: { phase: 'Running', podIP: null } });
  });
});

it('microTime writes RFC 3339 with microseconds', () => {
  expect(microTime(Date.UTC(2025, 0, 2, 3, 4, 5, 678))).toBe('2025-01-02T03:04:05.678000Z');
});
