// `--config` (a KubeletConfiguration file), the kubelet flag names with their deprecated aliases,
// and the kubelet's precedence: command line over file over defaults. The expectations are
// upstream's: field names and types of staging/src/k8s.io/kubelet/config/v1beta1/types.go, the
// v1beta1 defaults of the kubelet API's auth (anonymous false, webhook true, mode Webhook) that
// the flags' legacy defaults (applyLegacyDefaults) do not have, Go's JSON decoder wording for a
// wrong type, the strict decoder's for an unknown field, Go durations.
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCli } from '../src/cli.js';
import { FlagError, parseFlags } from '../src/flags.js';
import { parseKubeletConfig } from '../src/kubelet-config.js';
import { FAST_AGENT_TIMINGS, waitFor } from './helpers.js';

const HEADER = 'apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\n';

function withConfig(yaml: string, argv: readonly string[] = []) {
  return parseFlags(['--config', '/etc/kubelet/config.yaml', ...argv], 'host', (path) => {
    expect(path).toBe('/etc/kubelet/config.yaml');
    return HEADER + yaml;
  });
}

function configError(yaml: string, argv: readonly string[] = []): string {
  try {
    withConfig(yaml, argv);
  } catch (err) {
    expect(err).toBeInstanceOf(FlagError);
    return (err as Error).message;
  }
  throw new Error('expected a FlagError');
}

describe('--config: fields become flags', () => {
  it('maps the supported fields to the same options as their flags', () => {
    const f = withConfig(`
staticPodPath: /etc/kubernetes/manifests
staticPodURL: http://127.0.0.1:8080/pods
staticPodURLHeader:
  X-Token: [a, b]
syncFrequency: 30s
nodeStatusUpdateFrequency: 1m0s
nodeStatusReportFrequency: 2m
nodeLeaseDurationSeconds: 20
maxPods: 50
podCIDR: 10.0.5.0/24
kubeReserved: {cpu: 100m, memory: 256Mi}
systemReserved: {memory: 1Gi}
evictionHard: {memory.available: 200Mi, nodefs.available: 5%}
evictionPressureTransitionPeriod: 30s
port: 11250
readOnlyPort: 11255
healthzPort: 11248
healthzBindAddress: 127.0.0.2
address: 127.0.0.1
failSwapOn: false
cgroupDriver: systemd
cgroupRoot: /test
cgroupsPerQOS: true
containerRuntimeEndpoint: unix:///run/containerd/containerd.sock
allowedUnsafeSysctls: [net.core.somaxconn, kernel.msg*]
registerWithTaints:
- {key: dedicated, value: infra, effect: NoSchedule}
containerLogMaxSize: 20Mi
containerLogMaxFiles: 3
imageGCHighThresholdPercent: 95
imageGCLowThresholdPercent: 90
imageMinimumGCAge: 5m
crashLoopBackOff:
  maxContainerRestartPeriod: 1m
clusterDNS: [10.96.0.10, fd00::a]
clusterDomain: example.internal
resolvConf: /run/systemd/resolve/resolv.conf
volumeStatsAggPeriod: 2m
`);
    expect(f).toMatchObject({
      config: '/etc/kubelet/config.yaml',
      podManifestPath: '/etc/kubernetes/manifests',
      manifestUrl: 'http://127.0.0.1:8080/pods',
      manifestUrlHeaders: [['X-Token', 'a,b']],
      syncFrequencyMs: 30_000,
      nodeStatusUpdateFrequencyMs: 60_000,
      nodeStatusReportFrequencyMs: 120_000,
      nodeLeaseDurationSeconds: 20,
      maxPods: 50,
      podCidr: '10.0.5.0/24',
      kubeReserved: { cpu: '100m', memory: '256Mi' },
      systemReserved: { memory: '1Gi' },
      failSwapOn: false,
      runtimeEndpoint: 'unix:///run/containerd/containerd.sock',
      allowedUnsafeSysctls: ['net.core.somaxconn', 'kernel.msg*'],
      registerWithTaints: [{ key: 'dedicated', value: 'infra', effect: 'NoSchedule' }],
      maxContainerRestartPeriodSeconds: 60,
      cgroups: { cgroupDriver: 'systemd', cgroupRoot: '/test', cgroupsPerQOS: true },
      logRotation: { containerLogMaxSize: '20Mi', containerLogMaxFiles: 3 },
      kubeletServer: {
        port: 11250,
        readOnlyPort: 11255,
        healthzPort: 11248,
        healthzBindAddress: '127.0.0.2',
        address: '127.0.0.1',
      },
      dns: {
        clusterDns: ['10.96.0.10', 'fd00::a'],
        clusterDomain: 'example.internal',
        resolvConf: '/run/systemd/resolve/resolv.conf',
      },
      volumeStatsAggPeriodMs: 120_000,
      warnings: [],
    });
    expect(f.eviction.thresholds.evictionHard).toEqual({
      'memory.available': '200Mi',
      'nodefs.available': '5%',
    });
    expect(f.eviction.pressureTransitionPeriodMs).toBe(30_000);
    expect(f.eviction.imageGC).toMatchObject({ highThresholdPercent: 95, lowThresholdPercent: 90 });
  });

  it('JSON works too (a JSON document is YAML)', () => {
    const f = parseFlags(['--config=/c.json'], 'host', () =>
      JSON.stringify({
        apiVersion: 'kubelet.config.k8s.io/v1beta1',
        kind: 'KubeletConfiguration',
        maxPods: 7,
      }),
    );
    expect(f.maxPods).toBe(7);
  });

  it('Go durations: "10s", "1m0s", "1h30m", "500ms"', () => {
    expect(withConfig('syncFrequency: 10s\n').syncFrequencyMs).toBe(10_000);
    expect(withConfig('syncFrequency: 1m0s\n').syncFrequencyMs).toBe(60_000);
    expect(withConfig('syncFrequency: 1h30m\n').syncFrequencyMs).toBe(5_400_000);
    expect(withConfig('nodeStatusUpdateFrequency: 500ms\n').nodeStatusUpdateFrequencyMs).toBe(500);
    expect(configError('syncFrequency: 10 seconds\n')).toMatch(
      /syncFrequency|time: invalid duration "10 seconds"/,
    );
    expect(configError('syncFrequency: 10 seconds\n')).toContain('time: invalid duration "10 seconds"');
  });

  it('quantities: reserved resources and the log size are checked as quantities, the field named', () => {
    expect(withConfig('kubeReserved: {memory: 1.5Gi, ephemeral-storage: 10G}\n').kubeReserved).toEqual({
      memory: '1.5Gi',
      'ephemeral-storage': '10G',
    });
    const bad = configError('kubeReserved: {memory: lots}\n');
    expect(bad).toContain('kubeReserved');
    expect(bad).toContain('lots');
    expect(configError('containerLogMaxSize: tenmegs\n')).toContain('containerLogMaxSize');
  });
});

describe('--config: precedence (command line > file > defaults)', () => {
  it('a flag given on the command line wins over the field; other fields still apply', () => {
    const f = withConfig('maxPods: 50\npodCIDR: 10.0.5.0/24\n', ['--max-pods', '20']);
    expect(f.maxPods).toBe(20);
    expect(f.podCidr).toBe('10.0.5.0/24');
    expect(withConfig('maxPods: 50\n', ['--max-pods=30']).maxPods).toBe(30);
    // The command line wins wherever --config appears in it.
    expect(
      parseFlags(['--max-pods=9', '--config', '/c'], 'host', () => `${HEADER}maxPods: 50\n`).maxPods,
    ).toBe(9);
  });

  it('a repeatable flag on the command line replaces the file map instead of adding to it', () => {
    const f = withConfig('evictionHard: {memory.available: 200Mi, nodefs.available: 5%}\n', [
      '--eviction-hard',
      'memory.available<1Gi',
    ]);
    expect(f.eviction.thresholds.evictionHard).toEqual({ 'memory.available': '1Gi' });
  });

  it('unset fields get the defaults; the kubelet API auth gets the v1beta1 ones, not the flags legacy ones', () => {
    const noFile = parseFlags([], 'host');
    expect(noFile.kubeletServer).toMatchObject({
      anonymousAuth: true,
      authenticationTokenWebhook: false,
      authorizationMode: 'AlwaysAllow',
    });
    expect(noFile.maxPods).toBeUndefined();
    const file = withConfig('maxPods: 50\n');
    expect(file.kubeletServer).toMatchObject({
      anonymousAuth: false,
      authenticationTokenWebhook: true,
      authorizationMode: 'Webhook',
    });
    const explicit = withConfig(
      'authentication: {anonymous: {enabled: true}, webhook: {enabled: false}, x509: {clientCAFile: /ca.crt}}\nauthorization: {mode: AlwaysAllow}\n',
    );
    expect(explicit.kubeletServer).toMatchObject({
      anonymousAuth: true,
      authenticationTokenWebhook: false,
      authorizationMode: 'AlwaysAllow',
      clientCaFile: '/ca.crt',
    });
    // ... and the command line over both.
    expect(withConfig('maxPods: 1\n', ['--anonymous-auth=true']).kubeletServer.anonymousAuth).toBe(true);
  });

  it('rules between fields are checked on the file as a whole (a soft threshold needs its grace period)', () => {
    const f = withConfig(
      'evictionSoft: {memory.available: 1Gi}\nevictionSoftGracePeriod: {memory.available: 1m30s}\n',
    );
    expect(f.eviction.thresholds).toMatchObject({
      evictionSoft: { 'memory.available': '1Gi' },
      evictionSoftGracePeriod: { 'memory.available': '1m30s' },
    });
    const message = configError('evictionSoft: {memory.available: 1Gi}\n');
    expect(message).toContain('evictionSoft');
    expect(message).toContain(
      'grace period must be specified for the soft eviction threshold memory.available',
    );
  });
});

describe('--config: unknown, unsupported and mistyped fields are reported by name', () => {
  it('an unknown field is an error worded as the strict decoder words it', () => {
    expect(configError('maxPod: 50\n')).toContain('strict decoding error: unknown field "maxPod"');
    expect(configError('authentication: {anonymous: {enabld: true}}\n')).toContain(
      'unknown field "authentication.anonymous.enabld"',
    );
    expect(configError('maxPod: 50\n')).toContain('/etc/kubelet/config.yaml');
  });

  it('a known field this agent does not implement is a warning naming it, and the rest loads', () => {
    const f = withConfig('shutdownGracePeriod: 30s\nrotateCertificates: true\nmaxPods: 12\n');
    expect(f.maxPods).toBe(12);
    expect(f.warnings).toEqual([
      'shutdownGracePeriod is not supported by this agent; the value in /etc/kubelet/config.yaml is ignored',
      'rotateCertificates is not supported by this agent; the value in /etc/kubelet/config.yaml is ignored',
    ]);
  });

  it('a wrong type is an error naming the field with its Go type', () => {
    expect(configError('maxPods: "fifty"\n')).toContain(
      'json: cannot unmarshal string into Go struct field KubeletConfiguration.maxPods of type int32',
    );
    expect(configError('failSwapOn: "yes"\n')).toContain(
      'cannot unmarshal string into Go struct field KubeletConfiguration.failSwapOn of type bool',
    );
    expect(configError('kubeReserved: [cpu]\n')).toContain(
      'cannot unmarshal array into Go struct field KubeletConfiguration.kubeReserved of type map[string]string',
    );
    expect(configError('kubeReserved: {cpu: 1}\n')).toContain(
      'KubeletConfiguration.kubeReserved.cpu of type string',
    );
    expect(configError('maxPods: 1.5\n')).toContain('cannot unmarshal number 1.5');
    expect(configError('syncFrequency: 10\n')).toContain(
      'KubeletConfiguration.syncFrequency of type v1.Duration',
    );
    expect(configError('authentication: true\n')).toContain('KubeletConfiguration.authentication');
  });

  it('a bad value of a known field names the field', () => {
    const message = configError('containerRuntimeEndpoint: /run/containerd.sock\n');
    expect(message).toContain('containerRuntimeEndpoint');
    expect(message).toContain('unix:///path');
  });

  it('the file must be a KubeletConfiguration of kubelet.config.k8s.io', () => {
    const read = (text: string) => () => parseFlags(['--config', '/c'], 'host', () => text);
    expect(read('apiVersion: v1\nkind: KubeletConfiguration\n')).toThrow(/apiVersion "v1"/);
    expect(read('apiVersion: kubelet.config.k8s.io/v1beta1\nkind: Pod\n')).toThrow(/no kind "Pod"/);
    expect(read('[1, 2]')).toThrow(FlagError);
    expect(read('a: [')).toThrow(/failed to decode/);
    expect(() => parseFlags(['--config', '/nonexistent/kubelet.yaml'], 'host')).toThrow(
      /failed to load kubelet config file, path: \/nonexistent\/kubelet.yaml/,
    );
  });

  it('parseKubeletConfig lists the flags with the fields they came from', () => {
    const file = parseKubeletConfig(`${HEADER}maxPods: 3\n`, 'f');
    expect(file.flags).toEqual([
      { flag: 'max-pods', value: '3', field: 'maxPods' },
      { flag: 'anonymous-auth', value: 'false', field: undefined },
      { flag: 'authentication-token-webhook', value: 'true', field: undefined },
      { flag: 'authorization-mode', value: 'Webhook', field: undefined },
    ]);
  });
});

describe('kubelet flag names and deprecated aliases', () => {
  it('--container-runtime-endpoint and --hostname-override are the kubelet flags', () => {
    const f = parseFlags(
      ['--container-runtime-endpoint', 'unix:///run/c.sock', '--hostname-override', 'Node-A'],
      'h',
    );
    expect(f.runtimeEndpoint).toBe('unix:///run/c.sock');
    expect(f.nodeName).toBe('node-a');
    expect(f.warnings).toEqual([]);
  });

  it('--runtime-endpoint and --node-name still work, with a deprecation warning naming the replacement', () => {
    const f = parseFlags(['--runtime-endpoint=unix:///run/c.sock', '--node-name', 'n1'], 'h');
    expect(f.runtimeEndpoint).toBe('unix:///run/c.sock');
    expect(f.nodeName).toBe('n1');
    expect(f.warnings).toEqual([
      'Flag --runtime-endpoint has been deprecated, use --container-runtime-endpoint instead',
      'Flag --node-name has been deprecated, use --hostname-override instead',
    ]);
    // An alias on the command line overrides the file's field like the flag itself.
    expect(
      parseFlags(
        ['--config', '/c', '--runtime-endpoint', 'unix:///b.sock'],
        'h',
        () => `${HEADER}containerRuntimeEndpoint: unix:///a.sock\n`,
      ).runtimeEndpoint,
    ).toBe('unix:///b.sock');
  });

  it('--fail-swap-on: unset, bare (true), =false; bad values refused', () => {
    expect(parseFlags([], 'h').failSwapOn).toBeUndefined();
    expect(parseFlags(['--fail-swap-on'], 'h').failSwapOn).toBe(true);
    expect(parseFlags(['--fail-swap-on=false'], 'h').failSwapOn).toBe(false);
    expect(() => parseFlags(['--fail-swap-on=maybe'], 'h')).toThrow(/--fail-swap-on/);
  });

  it('--embedded-image-policy: simulate (default) or known-only', () => {
    expect(parseFlags([], 'h').embeddedImagePolicy).toBe('simulate');
    expect(parseFlags(['--embedded-image-policy', 'known-only'], 'h').embeddedImagePolicy).toBe('known-only');
    expect(() => parseFlags(['--embedded-image-policy', 'all'], 'h')).toThrow(/simulate\|known-only/);
  });
});

describe('--config end to end', () => {
  it('the CLI runs the agent with the file: the Lease duration from it, the pod capacity from the command line over it', async () => {
    const dir = await mkdtemp(join(os.tmpdir(), 'kubelet-config-cli-'));
    const file = join(dir, 'kubelet.yaml');
    await writeFile(file, `${HEADER}maxPods: 7\nnodeLeaseDurationSeconds: 20\nshutdownGracePeriod: 30s\n`);
    const stop = new AbortController();
    let out = '';
    let err = '';
    const exit = runCli(['--config', file, '--hostname-override', 'cfg-node', '--max-pods', '9'], {
      stdout: { write: (t: string) => (out += t) },
      stderr: { write: (t: string) => (err += t) },
      signal: stop.signal,
      handleSignals: false,
      agentOptions: { ...FAST_AGENT_TIMINGS },
    });
    try {
      const kubeconfig = await waitFor(
        'the kubeconfig line',
        () => /kubeconfig: (\S+)/.exec(out)?.[1],
        60_000,
      );
      const kc = JSON.parse(await readFile(kubeconfig, 'utf8')) as {
        clusters: { cluster: { server: string } }[];
      };
      const server = kc.clusters[0]?.cluster.server ?? '';
      const get = async (path: string) => {
        const r = await fetch(`${server}${path}`);
        return r.ok ? ((await r.json()) as Record<string, Record<string, unknown>>) : undefined;
      };
      // --max-pods on the command line wins over the file's maxPods.
      const node = await waitFor('the Node', () => get('/api/v1/nodes/cfg-node'), 30_000);
      expect((node.status?.capacity as Record<string, string> | undefined)?.pods).toBe('9');
      const lease = await waitFor(
        'the Lease',
        () => get('/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases/cfg-node'),
        30_000,
      );
      expect(lease.spec?.leaseDurationSeconds).toBe(20);
      expect(err).toContain('shutdownGracePeriod is not supported by this agent; the value in');
    } finally {
      stop.abort();
      expect(await exit).toBe(0);
      await rm(dir, { recursive: true, force: true });
    }
  }, 90_000);
});
