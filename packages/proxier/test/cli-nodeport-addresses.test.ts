/**
 * `--nodeport-addresses` with current kube-proxy's semantics on render and trace: the keywords
 * `primary`, `localhost` and `all` combined with CIDRs (KubeProxyConfiguration.nodePortAddresses),
 * nftables' default `primary` (platformApplyDefaults), every other mode's default `all`, and
 * iptables' localhost node ports only when the list covers 127.0.0.0/8 (ContainsIPv4Loopback).
 */
import { renderIptables } from '@nodeagent/iptables';
import { renderNftables } from '@nodeagent/nftables';
import { describe, expect, it } from 'vitest';
import {
  expandNodePortAddresses,
  nodePortAddressesContainIPv4Loopback,
  resolveNodePortIPs,
} from '../src/cli/kube-proxy-flags.js';
import {
  CLUSTER_YAML,
  DETECTOR,
  LB_JSON,
  memoryNfacct,
  NODE,
  POD_CIDR,
  referenceSnapshots,
  runCli,
} from './cli-fixtures.js';

const TWO_IPS = ['192.168.0.2', '192.168.1.2'];
const ARGS = [
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
const { v4 } = referenceSnapshots([CLUSTER_YAML, LB_JSON], TWO_IPS);

async function traceJson(dst: string, extra: string[]): Promise<{ outcome: string; endpoints: string[] }> {
  const r = await runCli([
    'trace',
    '--json',
    '--src',
    '203.0.113.9',
    '--dst',
    dst,
    '--port',
    '30080',
    ...extra,
    ...ARGS,
  ]);
  expect(r.code).toBe(0);
  return JSON.parse(r.stdout);
}

describe('keywords (kube-proxy NewNodePortAddresses + GetNodeIPs)', () => {
  it('expand: primary = first node IP of the family as a host CIDR; localhost; all', () => {
    expect(
      expandNodePortAddresses(['primary', 'localhost', 'all', '10.0.0.0/8', 'fd00::/64'], TWO_IPS, 4),
    ).toEqual(['192.168.0.2/32', '127.0.0.0/8', '0.0.0.0/0', '10.0.0.0/8']);
    expect(expandNodePortAddresses(['primary', 'localhost', 'all'], ['192.168.0.2', 'fd00::2'], 6)).toEqual([
      'fd00::2/128',
      '::1/128',
      '::/0',
    ]);
    // A loopback primary IP is not used (kube-proxy's server.go skips it).
    expect(expandNodePortAddresses(['primary'], ['127.0.0.1'], 4)).toEqual([]);
  });

  it('resolve: undefined = every local IP (no CIDR of the family, or a zero CIDR)', () => {
    expect(resolveNodePortIPs([], TWO_IPS, 4)).toBeUndefined();
    expect(resolveNodePortIPs(['all'], TWO_IPS, 4)).toBeUndefined();
    expect(resolveNodePortIPs(['primary', 'all'], TWO_IPS, 4)).toBeUndefined();
    expect(resolveNodePortIPs(['fd00::/64'], TWO_IPS, 4)).toBeUndefined();
    expect(resolveNodePortIPs([], TWO_IPS, 4, { defaultPrimary: true })).toEqual(['192.168.0.2']);
    expect(resolveNodePortIPs(['primary', '192.168.1.0/24'], TWO_IPS, 4)).toEqual(TWO_IPS);
    // No node IP inside the CIDRs: no address accepts NodePorts.
    expect(resolveNodePortIPs(['10.0.0.0/8'], TWO_IPS, 4)).toEqual([]);
    // Loopback only where the mode serves localhost node ports (iptables, IPv4).
    expect(resolveNodePortIPs(['primary', 'localhost'], TWO_IPS, 4)).toEqual(['192.168.0.2']);
    expect(resolveNodePortIPs(['primary', 'localhost'], TWO_IPS, 4, { loopback: true })).toEqual([
      '192.168.0.2',
      '127.0.0.1',
    ]);
  });

  it('ContainsIPv4Loopback: unset, all, localhost or a CIDR covering 127.0.0.0/8', () => {
    expect(nodePortAddressesContainIPv4Loopback([], TWO_IPS)).toBe(true);
    expect(nodePortAddressesContainIPv4Loopback(['all'], TWO_IPS)).toBe(true);
    expect(nodePortAddressesContainIPv4Loopback(['primary', 'localhost'], TWO_IPS)).toBe(true);
    expect(nodePortAddressesContainIPv4Loopback(['127.0.0.1/32'], TWO_IPS)).toBe(true);
    expect(nodePortAddressesContainIPv4Loopback(['fd00::/64'], TWO_IPS)).toBe(true);
    expect(nodePortAddressesContainIPv4Loopback(['primary'], TWO_IPS)).toBe(false);
    expect(nodePortAddressesContainIPv4Loopback(['192.168.0.0/16'], TWO_IPS)).toBe(false);
  });
});

describe('nftables: primary by default', () => {
  it('render without the flag programs NodePorts on the primary node IP only', async () => {
    const r = await runCli(['render', '-b', 'nftables', ...ARGS]);
    expect(r.code).toBe(0);
    expect(r.stdout).toBe(renderNftables(v4, { localDetector: DETECTOR, nodePortIPs: ['192.168.0.2'] }));
    expect(r.stdout).toContain('add element ip kube-proxy nodeport-ips { 192.168.0.2 }');
  });

  it('--nodeport-addresses all: every local IP (no nodeport-ips set), as iptables by default', async () => {
    const r = await runCli(['render', '-b', 'nftables', '--nodeport-addresses', 'all', ...ARGS]);
    expect(r.stdout).toBe(renderNftables(v4, { localDetector: DETECTOR }));
    expect(r.stdout).not.toContain('nodeport-ips');
  });

  it('trace: a secondary local IP does not accept NodePorts; the primary does', async () => {
    const primary = await traceJson('192.168.0.2', ['-b', 'nftables']);
    expect(primary.outcome).toBe('endpoints');
    const secondary = await traceJson('192.168.1.2', ['-b', 'nftables']);
    expect(secondary.outcome).toBe('untouched');
    // With `all`, or a CIDR holding it, the secondary IP accepts them too.
    expect((await traceJson('192.168.1.2', ['-b', 'nftables', '--nodeport-addresses', 'all'])).outcome).toBe(
      'endpoints',
    );
    expect(
      (await traceJson('192.168.1.2', ['-b', 'nftables', '--nodeport-addresses', 'primary,192.168.1.0/24']))
        .outcome,
    ).toBe('endpoints');
  });

  it('the optimized layout agrees', async () => {
    const opt = ['-b', 'nftables', '--nftables-layout', 'optimized'];
    expect((await traceJson('192.168.0.2', opt)).outcome).toBe('endpoints');
    expect((await traceJson('192.168.1.2', opt)).outcome).toBe('untouched');
  });
});

describe('iptables: all by default', () => {
  it('every local IP and localhost without the flag; primary alone has no localhost node ports', async () => {
    const def = await runCli(['render', ...ARGS]);
    expect(def.stdout).toBe(renderIptables(v4, { localDetector: DETECTOR, localhostNodePorts: true }));
    expect((await traceJson('192.168.1.2', [])).outcome).toBe('endpoints');
    const primary = await runCli(['render', '--nodeport-addresses', 'primary', ...ARGS]);
    expect(primary.stdout).toBe(
      renderIptables(v4, {
        localDetector: DETECTOR,
        localhostNodePorts: false,
        nodePortIPs: ['192.168.0.2'],
      }),
    );
    expect((await traceJson('192.168.1.2', ['--nodeport-addresses', 'primary'])).outcome).toBe('untouched');
  });

  it('primary,localhost: the primary IP and 127.0.0.1, with localhost node ports', async () => {
    const r = await runCli(['render', '--nodeport-addresses', 'primary,localhost', ...ARGS]);
    expect(r.stdout).toBe(
      renderIptables(v4, {
        localDetector: DETECTOR,
        localhostNodePorts: true,
        nodePortIPs: ['192.168.0.2', '127.0.0.1'],
      }),
    );
    expect(r.stdout).toContain(
      '-A KUBE-SERVICES -m comment --comment "kubernetes service nodeports; NOTE: this must be the last rule in this chain" -d 127.0.0.1 -j KUBE-NODEPORTS',
    );
  });
});

describe('--nfacct auto|on|off (iptables)', () => {
  const counted = (t: string) => t.split('\n').filter((l) => l.includes('-m nfacct')).length;

  it('on: both counters, as upstream test proxier; off and auto on a node without nfacct: none', async () => {
    const on = await runCli(['render', '--nfacct', 'on', ...ARGS]);
    expect(on.stdout).toBe(
      renderIptables(v4, {
        localDetector: DETECTOR,
        localhostNodePorts: true,
        nfacct: { ctStateInvalid: true, localhostNodePorts: true },
      }),
    );
    expect(on.stdout).toContain(
      '-A KUBE-FORWARD -m conntrack --ctstate INVALID -m nfacct --nfacct-name ct_state_invalid_dropped_pkts -j DROP',
    );
    expect(counted(on.stdout)).toBeGreaterThan(1);
    expect(counted((await runCli(['render', '--nfacct', 'off', ...ARGS])).stdout)).toBe(0);
    expect(counted((await runCli(['render', ...ARGS])).stdout)).toBe(0);
  });

  it('auto asks the node: a kernel that answers `nfacct list` gets the counters, nothing is created', async () => {
    const node = memoryNfacct();
    const r = await runCli(['render', '--nfacct', 'auto', ...ARGS], { nfacct: node });
    expect(r.stdout).toBe((await runCli(['render', '--nfacct', 'on', ...ARGS])).stdout);
    expect([...node.names]).toEqual([]);
  });

  it('the localhost counter follows localhost node ports (none with primary)', async () => {
    const r = await runCli(['render', '--nfacct', 'on', '--nodeport-addresses', 'primary', ...ARGS]);
    expect(r.stdout).not.toContain('localhost_nps_accepted_pkts');
    expect(r.stdout).toContain('ct_state_invalid_dropped_pkts');
  });

  it('a bad value is a usage error; other backends ignore it', async () => {
    const bad = await runCli(['render', '--nfacct', 'yes', ...ARGS]);
    expect(bad.code).toBe(2);
    expect(bad.stderr.split('\n')[0]).toBe(
      'nodeagent-proxy: error: --nfacct must be auto, on or off, got "yes"',
    );
    const nft = await runCli(['render', '-b', 'nftables', '--nfacct', 'on', ...ARGS]);
    expect(nft.stdout).not.toContain('nfacct');
  });
});
