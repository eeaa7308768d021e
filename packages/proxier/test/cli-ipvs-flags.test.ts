/**
 * kube-proxy's IPVS flags and `--nodeport-addresses` on `nodeagent-proxy`: accepted values
 * change the rendered rules exactly as the library options do; bad values are usage errors
 * (exit 2) worded as kube-proxy words them (pflag for a duration that does not parse, the
 * configuration validation's `<field>: Invalid value: "<v>": <why>` for the rest).
 */
import { renderIptables } from '@nodeagent/iptables';
import { planIpvs, renderIpvsadmRestore } from '@nodeagent/ipvs';
import { describe, expect, it } from 'vitest';
import {
  BASE_ARGS,
  CLUSTER_YAML,
  DETECTOR,
  LB_JSON,
  NODE,
  POD_CIDR,
  referenceSnapshots,
  runCli,
} from './cli-fixtures.js';

const TWO_IPS = ['192.168.0.2', '192.168.1.2'];
const ARGS_TWO_IPS = [
  '-f',
  'cluster.yaml',
  '-f',
  'lb.json',
  '--node-name',
  NODE,
  '--node-ip',
  TWO_IPS.join(','),
  '--cluster-cidr',
  POD_CIDR,
];
const { v4 } = referenceSnapshots([CLUSTER_YAML, LB_JSON]);
const v4two = referenceSnapshots([CLUSTER_YAML, LB_JSON], TWO_IPS).v4;

/** The ipvsadm-restore section of `render -b ipvs` output. */
const ipvsadmSection = (stdout: string) => stdout.split(/^# --- /m)[1]!.replace(/^[^\n]*\n/, '');

describe('accepted', () => {
  it('--ipvs-scheduler sets the scheduler of every virtual server', async () => {
    for (const scheduler of ['wlc', 'mh']) {
      const r = await runCli(['render', '-b', 'ipvs', '--ipvs-scheduler', scheduler, ...BASE_ARGS]);
      expect(r.code).toBe(0);
      expect(ipvsadmSection(r.stdout)).toBe(
        renderIpvsadmRestore(planIpvs(v4, { localDetector: DETECTOR, masqueradeAll: false, scheduler })),
      );
      expect(ipvsadmSection(r.stdout)).toContain(`-A -t 172.30.0.10:80 -s ${scheduler}`);
    }
  });

  it('--nodeport-addresses CIDRs keep the node IPs inside them; primary keeps the first', async () => {
    const nodePorts = (stdout: string) =>
      ipvsadmSection(stdout)
        .split('\n')
        .filter((l) => /^-A -t 192\.168\.[0-9.]+:30080 /.test(l));
    const all = await runCli(['render', '-b', 'ipvs', ...ARGS_TWO_IPS]);
    expect(nodePorts(all.stdout)).toEqual(['-A -t 192.168.0.2:30080 -s rr', '-A -t 192.168.1.2:30080 -s rr']);
    const cidr = await runCli([
      'render',
      '-b',
      'ipvs',
      '--nodeport-addresses',
      '192.168.1.0/24',
      ...ARGS_TWO_IPS,
    ]);
    expect(nodePorts(cidr.stdout)).toEqual(['-A -t 192.168.1.2:30080 -s rr']);
    const primary = await runCli([
      'render',
      '-b',
      'ipvs',
      '--nodeport-addresses',
      'primary',
      ...ARGS_TWO_IPS,
    ]);
    expect(nodePorts(primary.stdout)).toEqual(['-A -t 192.168.0.2:30080 -s rr']);
    // A CIDR of the other family only: every IPv4 node IP, as kube-proxy.
    const v6only = await runCli([
      'render',
      '-b',
      'ipvs',
      '--nodeport-addresses',
      'fd00::/64',
      ...ARGS_TWO_IPS,
    ]);
    expect(nodePorts(v6only.stdout)).toEqual(nodePorts(all.stdout));
  });

  it('--nodeport-addresses applies to iptables too, which then has no localhost node ports', async () => {
    const r = await runCli(['render', '--nodeport-addresses', '192.168.1.0/24', ...ARGS_TWO_IPS]);
    expect(r.code).toBe(0);
    expect(r.stdout).toBe(
      renderIptables(v4two, {
        localDetector: DETECTOR,
        localhostNodePorts: false,
        nodePortIPs: ['192.168.1.2'],
      }),
    );
  });

  it('the apply-time IPVS flags parse with render/trace and are noted as ignored for other backends', async () => {
    const flags = [
      '--ipvs-strict-arp',
      '--ipvs-tcp-timeout',
      '15m',
      '--ipvs-tcpfin-timeout',
      '0',
      '--ipvs-udp-timeout',
      '1m30s',
      '--ipvs-exclude-cidrs',
      '10.96.0.0/12,fd00::/64',
    ];
    const ipvs = await runCli(['render', '-b', 'ipvs', ...flags, ...BASE_ARGS]);
    expect({ code: ipvs.code, stderr: ipvs.stderr }).toEqual({ code: 0, stderr: '' });
    const ipt = await runCli(['render', '-b', 'iptables', ...flags, '--ipvs-scheduler', 'sh', ...BASE_ARGS]);
    expect(ipt.code).toBe(0);
    expect(ipt.stderr).toBe(
      'nodeagent-proxy: note: --ipvs-scheduler, --ipvs-exclude-cidrs, --ipvs-strict-arp, --ipvs-tcp-timeout, --ipvs-udp-timeout only apply to ipvs; ignored for iptables\n',
    );
  });
});

describe('refused as kube-proxy refuses them (exit 2)', () => {
  const cases: [string, string[], string][] = [
    [
      'unknown scheduler',
      ['--ipvs-scheduler', 'fifo'],
      'KubeProxyConfiguration.KubeProxyIPVSConfiguration.Scheduler: Invalid value: "fifo": must be in [rr wrr lc wlc lblc lblcr sh dh sed nq mh], blank means the default algorithm method (currently rr)',
    ],
    [
      'bad exclude CIDR',
      ['--ipvs-exclude-cidrs', '10.0.0.0/8,10.0.0.0/33'],
      'KubeProxyConfiguration.KubeProxyIPVSConfiguration.ExcludeCidrs[1]: Invalid value: "10.0.0.0/33": must be a valid CIDR',
    ],
    [
      'duration that does not parse',
      ['--ipvs-tcp-timeout', '5 minutes'],
      'invalid argument "5 minutes" for "--ipvs-tcp-timeout" flag: time: invalid duration "5 minutes"',
    ],
    [
      'duration without a unit',
      ['--ipvs-udp-timeout', '30'],
      'invalid argument "30" for "--ipvs-udp-timeout" flag: time: invalid duration "30"',
    ],
    [
      'negative duration',
      ['--ipvs-tcpfin-timeout=-1s'],
      'KubeProxyConfiguration.KubeProxyIPVSConfiguration.TCPFinTimeout: Invalid value: "-1s": must be greater than or equal to 0',
    ],
    [
      'bad node-port CIDR',
      ['--nodeport-addresses', '192.168.0.0/16,192.168.0.300/32'],
      'KubeProxyConfiguration.NodePortAddresses[1]: Invalid value: "192.168.0.300/32": must be a valid CIDR',
    ],
    [
      // Current kube-proxy: keywords combine with CIDRs, but no entry twice.
      'the same keyword twice',
      ['--nodeport-addresses', 'primary,192.168.0.0/16,primary'],
      'KubeProxyConfiguration.NodePortAddresses[2]: Duplicate value: "primary"',
    ],
    [
      'a keyword spelled otherwise',
      ['--nodeport-addresses', 'Localhost'],
      'KubeProxyConfiguration.NodePortAddresses[0]: Invalid value: "Localhost": must be a valid CIDR',
    ],
  ];
  for (const [name, flags, message] of cases) {
    it(name, async () => {
      for (const command of ['render', 'apply']) {
        const extra = command === 'apply' ? ['--netns', 'x'] : [];
        const r = await runCli([command, '-b', 'ipvs', ...flags, ...extra, ...BASE_ARGS]);
        expect(r.code).toBe(2);
        expect(r.stdout).toBe('');
        expect(r.stderr.split('\n')[0]).toBe(`nodeagent-proxy: error: ${message}`);
      }
    });
  }
});
