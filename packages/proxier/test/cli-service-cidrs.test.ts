/**
 * The service CIDRs of nftables' `cluster-ips-check` chain on render and trace: from
 * `ServiceCIDR` objects (`networking.k8s.io/v1`) in the manifests, as kube-proxy learns them
 * (`OnServiceCIDRsChanged`: the union of every object's `spec.cidrs` of the proxier's family),
 * and from `--service-cluster-ip-range` (our extension: kube-proxy has no such flag).
 */
import { renderNftables } from '@nodeagent/nftables';
import { describe, expect, it } from 'vitest';
import {
  BASE_ARGS,
  CLUSTER_YAML,
  DETECTOR,
  FILES,
  LB_JSON,
  NODE_IP,
  referenceSnapshots,
  runCli,
} from './cli-fixtures.js';

const { v4 } = referenceSnapshots([CLUSTER_YAML, LB_JSON]);
const PRIMARY = { nodePortIPs: [NODE_IP] };

const SERVICE_CIDRS_YAML = `apiVersion: networking.k8s.io/v1
kind: ServiceCIDR
metadata:
  name: kubernetes
spec:
  cidrs: [172.30.0.0/16, fd00:10:96::/112]
---
apiVersion: networking.k8s.io/v1
kind: ServiceCIDR
metadata:
  name: extra
spec:
  cidrs: [10.96.0.0/24]
---
apiVersion: networking.k8s.io/v1
kind: ServiceCIDR
metadata:
  name: broken
spec:
  cidrs: [10.97.0.0/33]
`;
const files = { ...FILES, 'cidrs.yaml': SERVICE_CIDRS_YAML };

async function outcome(dst: string, args: string[]): Promise<string> {
  const r = await runCli(
    [
      'trace',
      '-b',
      'nftables',
      '--json',
      '--src',
      '10.0.0.5',
      '--dst',
      dst,
      '--port',
      '80',
      ...args,
      ...BASE_ARGS,
    ],
    { files },
  );
  return (JSON.parse(r.stdout) as { outcome: string }).outcome;
}

describe('ServiceCIDR objects', () => {
  it("drop unallocated ClusterIPs of every object's CIDRs of the family; a bad object is reported and skipped", async () => {
    const r = await runCli(['render', '-b', 'nftables', '-f', 'cidrs.yaml', ...BASE_ARGS], { files });
    expect(r.stderr).toBe(
      'nodeagent-proxy: error: cidrs.yaml: ServiceCIDR broken skipped: spec.cidrs[0]: "10.97.0.0/33" is not a CIDR\n' +
        'nodeagent-proxy: note: 1 invalid object(s) skipped; 4 service port(s) used\n',
    );
    expect(r.stdout).toBe(
      renderNftables(v4, {
        localDetector: DETECTOR,
        ...PRIMARY,
        serviceCIDRs: ['10.96.0.0/24', '172.30.0.0/16'],
      }),
    );
    expect(r.stdout).toContain(
      'add rule ip kube-proxy cluster-ips-check ip daddr { 10.96.0.0/24,172.30.0.0/16 } drop comment "Drop traffic to unallocated ClusterIPs"',
    );
  });

  it('without any, unallocated ClusterIPs are untouched (no drop rule)', async () => {
    const r = await runCli(['render', '-b', 'nftables', ...BASE_ARGS]);
    expect(r.stdout).not.toContain('Drop traffic to unallocated ClusterIPs');
    expect(await outcome('172.30.99.99', [])).toBe('untouched');
  });

  it('trace: an unallocated ClusterIP inside a service CIDR is dropped; allocated ones still reach endpoints', async () => {
    expect(await outcome('172.30.99.99', ['-f', 'cidrs.yaml'])).toBe('DROP');
    expect(await outcome('10.96.0.77', ['-f', 'cidrs.yaml'])).toBe('DROP');
    expect(await outcome('172.30.0.10', ['-f', 'cidrs.yaml'])).toBe('endpoints');
    expect(await outcome('172.31.0.1', ['-f', 'cidrs.yaml'])).toBe('untouched');
  });
});

describe('--service-cluster-ip-range (extension)', () => {
  it('adds to the ServiceCIDR objects, per family, without duplicates', async () => {
    const r = await runCli(
      [
        'render',
        '-b',
        'nftables',
        '--service-cluster-ip-range',
        '172.30.0.0/16,fd00::/108',
        '--service-cluster-ip-range',
        '10.100.0.0/16',
        ...BASE_ARGS,
      ],
      { files },
    );
    expect(r.code).toBe(0);
    expect(r.stdout).toBe(
      renderNftables(v4, {
        localDetector: DETECTOR,
        ...PRIMARY,
        serviceCIDRs: ['10.100.0.0/16', '172.30.0.0/16'],
      }),
    );
    expect(await outcome('172.30.99.99', ['--service-cluster-ip-range', '172.30.0.0/16'])).toBe('DROP');
  });

  it('a bad CIDR is a usage error', async () => {
    const r = await runCli([
      'render',
      '-b',
      'nftables',
      '--service-cluster-ip-range',
      '10.0.0.0/40',
      ...BASE_ARGS,
    ]);
    expect(r.code).toBe(2);
    expect(r.stderr.split('\n')[0]).toBe(
      'nodeagent-proxy: error: --service-cluster-ip-range: "10.0.0.0/40" is not a CIDR',
    );
  });
});
