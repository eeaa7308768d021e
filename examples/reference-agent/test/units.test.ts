// The agent's own small pieces: flags and the healthz body (node status,
// Lease and pod status writing are @nodeagent/status's, tested there).

import { renderHealthz } from '@nodeagent/kubelet-server';
import { describe, expect, it } from 'vitest';
import { FlagError, parseFlags } from '../src/flags.js';

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
      '--node-labels=example.com/rack=r1,tier=edge',
      '--register-with-taints=dedicated=edge:NoSchedule,gpu:NoExecute',
      '--kube-reserved=cpu=100m,memory=256Mi',
      '--system-reserved=memory=128Mi',
      '--node-status-update-frequency=5s',
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
      nodeLabels: { 'example.com/rack': 'r1', tier: 'edge' },
      registerWithTaints: [
        { key: 'dedicated', value: 'edge', effect: 'NoSchedule' },
        { key: 'gpu', effect: 'NoExecute' },
      ],
      kubeReserved: { cpu: '100m', memory: '256Mi' },
      systemReserved: { memory: '128Mi' },
      nodeStatusUpdateFrequencyMs: 5_000,
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
    [['--node-labels=novalue'], /--node-labels: expected key=value/],
    [['--register-with-taints=a=b:Sometimes'], /--register-with-taints: invalid taint effect/],
    [['--kube-reserved=gpu=1'], /--kube-reserved: unsupported resource "gpu"/],
    [['--system-reserved=memory=lots'], /--system-reserved/],
    [['--node-ip=10.0.0.1,nonsense'], /--node-ip: "nonsense" is not an IP address/],
    [['--node-status-update-frequency=10'], /--node-status-update-frequency/],
    [['--port=65536'], /--port: expected a port/],
    [['--authorization-mode=RBAC'], /--authorization-mode: expected AlwaysAllow or Webhook/],
    [['--anonymous-auth=maybe'], /--anonymous-auth: expected true or false/],
    [['--tls-cert-file=/c'], /--tls-cert-file and --tls-private-key-file go together/],
  ])('rejects %j', (argv, message) => {
    expect(() => parseFlags(argv)).toThrow(FlagError);
    expect(() => parseFlags(argv)).toThrow(message);
  });
});

describe('kubelet server flags', () => {
  it('defaults as the kubelet: 10250, read-only off, healthz 10248 on 127.0.0.1, anonymous, AlwaysAllow', () => {
    expect(parseFlags([]).kubeletServer).toEqual({
      address: '0.0.0.0',
      port: 10250,
      readOnlyPort: 0,
      healthzPort: 10248,
      healthzBindAddress: '127.0.0.1',
      tlsCertFile: undefined,
      tlsPrivateKeyFile: undefined,
      clientCaFile: undefined,
      authenticationTokenWebhook: false,
      anonymousAuth: true,
      authorizationMode: 'AlwaysAllow',
    });
  });
  it('parses every flag, bare Go bools included', () => {
    expect(
      parseFlags([
        '--address=10.0.0.5',
        '--port=11250',
        '--read-only-port=10255',
        '--healthz-port=0',
        '--healthz-bind-address=0.0.0.0',
        '--tls-cert-file=/c',
        '--tls-private-key-file=/k',
        '--client-ca-file=/ca',
        '--authentication-token-webhook',
        '--anonymous-auth=false',
        '--authorization-mode=Webhook',
      ]).kubeletServer,
    ).toEqual({
      address: '10.0.0.5',
      port: 11250,
      readOnlyPort: 10255,
      healthzPort: 0,
      healthzBindAddress: '0.0.0.0',
      tlsCertFile: '/c',
      tlsPrivateKeyFile: '/k',
      clientCaFile: '/ca',
      authenticationTokenWebhook: true,
      anonymousAuth: false,
      authorizationMode: 'Webhook',
    });
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

describe('embedded container output', () => {
  it('prints the echo steps of a script, each after the sleeps before it, until a blocking step', async () => {
    const { scriptOutput } = await import('../src/embedded-container-output.js');
    expect(
      scriptOutput(
        `echo 'hello world'; sleep 2; echo "second" && echo x > /tmp/f; sleep 1; echo three; httpd -f; echo never`,
      ),
    ).toEqual([
      { atMs: 0, text: 'hello world' },
      { atMs: 2000, text: 'second' },
      { atMs: 3000, text: 'three' },
    ]);
  });
  it('answers exec echo with its words', async () => {
    const { busyboxLikeExec } = await import('../src/embedded-runtime.js');
    expect(busyboxLikeExec(['sh', '-c', 'echo hi there'], new Set())).toMatchObject({
      stdout: 'hi there\n',
      exitCode: 0,
    });
    expect(busyboxLikeExec(['echo', "'quoted'"], new Set()).stdout).toBe('quoted\n');
  });
});
