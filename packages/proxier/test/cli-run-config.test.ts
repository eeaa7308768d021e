/**
 * `nodeagent-proxy run`'s configuration, as kube-proxy resolves it: v1alpha1 defaults, flags
 * written into the configuration, `--config` replacing every flag but `--hostname-override`
 * and `--v`, lenient decoding of unknown fields, and validation worded as kube-proxy's.
 */
import { describe, expect, it } from 'vitest';
import { CliUsageError } from '../src/cli/errors.js';
import {
  decodeKubeProxyConfiguration,
  KubeProxyConfigError,
  parseRunCommandLine,
  type RunCommand,
} from '../src/cli/run-config.js';
import { runProxyCli } from '../src/cli/run-proxy-cli.js';

const files: Record<string, string> = {};
const read = async (p: string) => {
  const f = files[p];
  if (f === undefined) throw new Error(`ENOENT: no such file or directory, open '${p}'`);
  return f;
};

async function parse(args: string[]): Promise<RunCommand> {
  const c = await parseRunCommandLine(args, read);
  if (c.command !== 'run') throw new Error('help');
  return c;
}

describe('flags', () => {
  it("resolves kube-proxy's defaults without flags", async () => {
    const { config, cleanup } = await parse([]);
    expect(cleanup).toBe(false);
    expect(config).toMatchObject({
      mode: 'iptables',
      kubeconfig: '',
      bindAddress: '0.0.0.0',
      healthzBindAddress: '0.0.0.0:10256',
      metricsBindAddress: '127.0.0.1:10249',
      masqueradeBit: 14,
      masqueradeAll: false,
      localhostNodePorts: true,
      syncPeriodMs: 30_000,
      minSyncPeriodMs: 1_000,
      configSyncPeriodMs: 15 * 60_000,
      clusterCIDRs: [],
      nodePortAddresses: [],
    });
  });

  it('writes the flags into the configuration, pflag booleans included', async () => {
    const { config } = await parse([
      '--proxy-mode=nftables',
      '--kubeconfig',
      '/etc/kube/proxy.conf',
      '--hostname-override',
      '  Node-A ',
      '--cluster-cidr',
      '10.0.0.0/8,fd00::/48',
      '--nodeport-addresses',
      '192.168.0.0/16',
      '--masquerade-all',
      '--iptables-min-sync-period',
      '250ms',
      '--iptables-sync-period=1m',
      '--healthz-bind-address',
      '127.0.0.1:20256',
      '--v=4',
    ]);
    expect(config).toMatchObject({
      mode: 'nftables',
      kubeconfig: '/etc/kube/proxy.conf',
      hostnameOverride: 'node-a',
      clusterCIDRs: ['10.0.0.0/8', 'fd00::/48'],
      nodePortAddresses: ['192.168.0.0/16'],
      masqueradeAll: true,
      minSyncPeriodMs: 250,
      syncPeriodMs: 60_000,
      healthzBindAddress: '127.0.0.1:20256',
      verbosity: 4,
    });
    expect((await parse(['--masquerade-all=false'])).config.masqueradeAll).toBe(false);
    expect((await parse(['--cleanup'])).cleanup).toBe(true);
  });

  it('refuses what kube-proxy refuses, worded as kube-proxy', async () => {
    await expect(parse(['--masquerade-all=yes'])).rejects.toThrow(
      'invalid argument "yes" for "--masquerade-all" flag: strconv.ParseBool: parsing "yes": invalid syntax',
    );
    await expect(parse(['--iptables-sync-period', '5x'])).rejects.toThrow(
      'invalid argument "5x" for "--iptables-sync-period" flag: time: invalid duration "5x"',
    );
    await expect(parse(['--proxy-mode', 'userspace'])).rejects.toThrow(
      'KubeProxyConfiguration.Mode: Unsupported value: "userspace": supported values: "iptables", "ipvs", "nftables"',
    );
    await expect(parse(['--cluster-cidr', '10.0.0.0/33'])).rejects.toThrow(
      'KubeProxyConfiguration.ClusterCIDR: Invalid value: "10.0.0.0/33": must be a valid CIDR block',
    );
    await expect(parse(['--cluster-cidr', '10.0.0.0/8,10.1.0.0/16'])).rejects.toThrow(
      'must be a valid DualStack CIDR',
    );
    await expect(parse(['--metrics-bind-address', '127.0.0.1'])).rejects.toThrow(
      'KubeProxyConfiguration.MetricsBindAddress: Invalid value: "127.0.0.1": must be IP:port',
    );
    await expect(parse(['--healthz-bind-address', 'localhost:10256'])).rejects.toThrow(
      'KubeProxyConfiguration.HealthzBindAddress: Invalid value: "localhost": must be a valid IP',
    );
    await expect(parse(['--iptables-masquerade-bit', '32'])).rejects.toThrow(
      'must be within the range [0, 31]',
    );
    await expect(parse(['--iptables-sync-period', '1s', '--iptables-min-sync-period', '2s'])).rejects.toThrow(
      'KubeProxyConfiguration.KubeProxyIPTablesConfiguration.SyncPeriod: Invalid value: "2s": must be greater than or equal to KubeProxyConfiguration.KubeProxyIPTablesConfiguration.MinSyncPeriod',
    );
    // Current kube-proxy: keywords combine with each other and with CIDRs.
    expect(
      (await parse(['--nodeport-addresses', 'primary,localhost,10.0.0.0/8'])).config.nodePortAddresses,
    ).toEqual(['primary', 'localhost', '10.0.0.0/8']);
    await expect(parse(['--nodeport-addresses', 'Primary'])).rejects.toThrow(
      'KubeProxyConfiguration.NodePortAddresses[0]: Invalid value: "Primary": must be a valid CIDR',
    );
    await expect(parse(['--nodeport-addresses', 'primary,10.0.0.0/8,localhost,all,all'])).rejects.toThrow(
      'KubeProxyConfiguration.NodePortAddresses[4]: Duplicate value: "all"',
    );
    await expect(parse(['--hostname-override', '  '])).rejects.toThrow('empty hostname-override is invalid');
    await expect(parse(['--no-such-flag'])).rejects.toBeInstanceOf(CliUsageError);
    await expect(parse(['--proxy-mode', 'ipvs', '--ipvs-scheduler', 'fastest'])).rejects.toThrow(
      'KubeProxyConfiguration.KubeProxyIPVSConfiguration.Scheduler: Invalid value: "fastest"',
    );
  });
});

describe('--kube-api-qps / --kube-api-burst (clientConnection.qps / burst)', () => {
  it("defaults to kube-proxy's 5 / 10; flags and the file set them; the file's clientConnection keeps unset defaults", async () => {
    expect((await parse([])).config).toMatchObject({ kubeApiQps: 5, kubeApiBurst: 10 });
    expect((await parse(['--kube-api-qps', '20.5', '--kube-api-burst=40'])).config).toMatchObject({
      kubeApiQps: 20.5,
      kubeApiBurst: 40,
    });
    // A negative QPS is kube-proxy's (and client-go's) "no client-side limit", not an error.
    expect((await parse(['--kube-api-qps=-1'])).config.kubeApiQps).toBe(-1);
    files['/qps.yaml'] = `apiVersion: kubeproxy.config.k8s.io/v1alpha1
kind: KubeProxyConfiguration
clientConnection:
  qps: 50
  burst: 100
`;
    expect((await parse(['--config', '/qps.yaml'])).config).toMatchObject({
      kubeApiQps: 50,
      kubeApiBurst: 100,
    });
    files['/kc.yaml'] = `apiVersion: kubeproxy.config.k8s.io/v1alpha1
kind: KubeProxyConfiguration
clientConnection:
  kubeconfig: /k
`;
    expect((await parse(['--config', '/kc.yaml'])).config).toMatchObject({ kubeApiQps: 5, kubeApiBurst: 10 });
  });

  it('refuses a bad value as kube-proxy: pflag wording for the flag, validation wording for a negative burst', async () => {
    await expect(parse(['--kube-api-qps', 'abc'])).rejects.toThrow(
      'invalid argument "abc" for "--kube-api-qps" flag: strconv.ParseFloat: parsing "abc": invalid syntax',
    );
    await expect(parse(['--kube-api-burst', 'x'])).rejects.toThrow(
      'invalid argument "x" for "--kube-api-burst" flag: strconv.ParseInt: parsing "x": invalid syntax',
    );
    await expect(parse(['--kube-api-burst=-1'])).rejects.toThrow(
      'KubeProxyConfiguration.ClientConnection.Burst: Invalid value: -1: must be greater than or equal to 0',
    );
  });
});

describe('--config', () => {
  it('replaces the flags, except --hostname-override and --v', async () => {
    files['/c.yaml'] = `apiVersion: kubeproxy.config.k8s.io/v1alpha1
kind: KubeProxyConfiguration
mode: nftables
clientConnection:
  kubeconfig: /var/lib/kube-proxy/kubeconfig.conf
clusterCIDR: 10.244.0.0/16
hostnameOverride: from-file
nftables:
  minSyncPeriod: 2s
  syncPeriod: 45s
  masqueradeAll: true
`;
    const { config, warnings } = await parse([
      '--config',
      '/c.yaml',
      '--proxy-mode',
      'iptables',
      '--cluster-cidr',
      '10.0.0.0/8',
      '--hostname-override',
      'from-flag',
      '--v',
      '2',
    ]);
    expect(warnings).toEqual([]);
    expect(config).toMatchObject({
      mode: 'nftables',
      kubeconfig: '/var/lib/kube-proxy/kubeconfig.conf',
      clusterCIDRs: ['10.244.0.0/16'],
      hostnameOverride: 'from-flag',
      verbosity: 2,
      minSyncPeriodMs: 2_000,
      syncPeriodMs: 45_000,
      masqueradeAll: true,
      // Defaults fill what the file leaves out.
      healthzBindAddress: '0.0.0.0:10256',
      masqueradeBit: 14,
    });
    expect(config.configz).toMatchObject({ mode: 'nftables', hostnameOverride: 'from-flag' });
  });

  it('warns about unknown fields and decodes the rest (lenient, as kube-proxy)', () => {
    const { config, warnings } = decodeKubeProxyConfiguration(
      'apiVersion: kubeproxy.config.k8s.io/v1alpha1\nkind: KubeProxyConfiguration\nmode: ipvs\nfancyFeature: true\n',
      'proxy.yaml',
    );
    expect(config.mode).toBe('ipvs');
    expect(warnings).toEqual([
      'proxy.yaml: unknown field "fancyFeature" (ignored; lenient decoding as kube-proxy)',
    ]);
  });

  it('names the file and field of what cannot be used', async () => {
    const cases: [string, RegExp][] = [
      [
        'kind: KubeletConfiguration\napiVersion: kubelet.config.k8s.io/v1beta1\n',
        /no kind "KubeletConfiguration" is registered/,
      ],
      [
        'apiVersion: kubeproxy.config.k8s.io/v1alpha1\nkind: KubeProxyConfiguration\nmode: [a\n',
        /failed to decode \/bad\.yaml/,
      ],
      [
        'apiVersion: kubeproxy.config.k8s.io/v1alpha1\nkind: KubeProxyConfiguration\nnodePortAddresses: 10.0.0.0/8\n',
        /\/bad\.yaml: nodePortAddresses: expected a list of strings/,
      ],
      [
        'apiVersion: kubeproxy.config.k8s.io/v1alpha1\nkind: KubeProxyConfiguration\niptables:\n  masqueradeBit: "14"\n',
        /\/bad\.yaml: iptables\.masqueradeBit: expected an integer/,
      ],
      [
        'apiVersion: kubeproxy.config.k8s.io/v1alpha1\nkind: KubeProxyConfiguration\niptables:\n  syncPeriod: soon\n',
        /iptables\.syncPeriod: time: invalid duration "soon"/,
      ],
    ];
    for (const [text, want] of cases) {
      files['/bad.yaml'] = text;
      const err = await parse(['--config', '/bad.yaml']).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(KubeProxyConfigError);
      expect((err as Error).message).toMatch(want);
    }
    await expect(parse(['--config', '/missing.yaml'])).rejects.toThrow(
      /failed to read \/missing\.yaml: ENOENT/,
    );
  });
});

describe('runProxyCli run', () => {
  const io = () => {
    let out = '';
    let err = '';
    return {
      io: {
        stdout: { write: (t: string) => (out += t) },
        stderr: { write: (t: string) => (err += t) },
        env: {},
        stopSignal: Promise.resolve('SIGTERM'),
      },
      out: () => out,
      err: () => err,
    };
  };

  it('prints its help and exits 2 on a usage error, 1 on a bad configuration', async () => {
    const a = io();
    expect(await runProxyCli(['run', '--help'], a.io)).toBe(0);
    expect(a.out()).toContain('Usage: nodeagent-proxy run');
    const b = io();
    expect(await runProxyCli(['run', '--bogus'], b.io)).toBe(2);
    const c = io();
    expect(await runProxyCli(['run', '--proxy-mode', 'kernelspace'], c.io)).toBe(1);
    expect(c.err()).toContain('Unsupported value: "kernelspace"');
  });

  it('without a kubeconfig, master or in-cluster environment, says what is missing (exit 1)', async () => {
    const a = io();
    expect(await runProxyCli(['run', '--hostname-override', 'n1'], a.io)).toBe(1);
    expect(a.err()).toContain('Neither --kubeconfig nor --master was specified. Using the inClusterConfig.');
    expect(a.err()).toContain(
      'unable to load in-cluster configuration, KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT must be defined',
    );
  });
});
