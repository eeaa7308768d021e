/**
 * `nodeagent-proxy render`: the output is exactly what the backend libraries render for the
 * same manifests (the CLI adds no rule of its own), and holds the rules kube-proxy writes for
 * a ClusterIP, a NodePort and a LoadBalancer with source ranges and externalTrafficPolicy Local.
 */
import { renderIptables } from '@nodeagent/iptables';
import { planIpvs, renderIpsetRestore, renderIpvsadmRestore, renderResidualIptables } from '@nodeagent/ipvs';
import { renderNftables } from '@nodeagent/nftables';
import { describe, expect, it } from 'vitest';
import {
  BASE_ARGS,
  CLUSTER_YAML,
  DETECTOR,
  FILES,
  LB_JSON,
  NODE,
  NODE_IP,
  referenceSnapshots,
  runCli,
} from './cli-fixtures.js';

const { v4 } = referenceSnapshots([CLUSTER_YAML, LB_JSON]);

describe('render --backend iptables', () => {
  it('prints the library renderer output for YAML + JSON input, with no error', async () => {
    const r = await runCli(['render', '--backend', 'iptables', ...BASE_ARGS]);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(r.stdout).toBe(renderIptables(v4, { localDetector: DETECTOR, localhostNodePorts: true }));
    // iptables is the default backend, as kube-proxy's default mode.
    expect((await runCli(['render', ...BASE_ARGS])).stdout).toBe(r.stdout);
  });

  it('writes the ClusterIP, NodePort, no-endpoint, LoadBalancer firewall and Local-policy rules', async () => {
    const { stdout } = await runCli(['render', ...BASE_ARGS]);
    const lines = stdout.split('\n');
    const has = (re: RegExp) =>
      expect(
        lines.some((l) => re.test(l)),
        String(re),
      ).toBe(true);
    has(/^-A KUBE-SERVICES .*"ns1\/web:http cluster IP".* -d 172\.30\.0\.10 --dport 80 -j KUBE-SVC-/);
    has(/^-A KUBE-NODEPORTS .*ns1\/np:http .*--dport 30080 -j KUBE-EXT-/);
    has(/^-A KUBE-SERVICES .*"ns1\/empty:http has no endpoints".* -d 172\.30\.0\.11 --dport 80 -j REJECT$/);
    has(/^-A KUBE-FW-\S+ .*"ns2\/lb:https loadbalancer IP" -s 203\.0\.113\.0\/25 -j KUBE-EXT-/);
    has(/^-A KUBE-PROXY-FIREWALL .* -d 1\.2\.3\.4 --dport 443 -j DROP$/);
    has(/^-A KUBE-NODEPORTS .*"ns2\/lb:https health check node port".*--dport 30999 -j ACCEPT$/);
    // externalTrafficPolicy Local: the SVL chain holds only the local endpoint.
    const svl = lines.filter((l) => l.startsWith('-A KUBE-SVL-'));
    expect(svl).toHaveLength(1);
    expect(svl[0]).toContain('10.100.1.3:8443');
    has(/! -s 10\.100\.0\.0\/16 -j KUBE-MARK-MASQ$/);
    has(/--comment "kubernetes service nodeports; NOTE: this must be the last rule in this chain"/);
  });

  it('passes --masquerade-all and --no-localhost-nodeports to the renderer', async () => {
    const r = await runCli(['render', ...BASE_ARGS, '--masquerade-all', '--no-localhost-nodeports']);
    expect(r.code).toBe(0);
    expect(r.stdout).toBe(
      renderIptables(v4, { localDetector: DETECTOR, masqueradeAll: true, localhostNodePorts: false }),
    );
    expect(r.stdout).not.toContain('KUBE-FIREWALL -m comment --comment "block incoming localnet');
    expect(r.stdout).not.toBe((await runCli(['render', ...BASE_ARGS])).stdout);
  });

  it('reads stdin for -f - and takes the node IPs from a Node object when --node-ip is absent', async () => {
    const node = `---\napiVersion: v1\nkind: Node\nmetadata: { name: ${NODE} }\nstatus:\n  addresses: [{ type: InternalIP, address: ${NODE_IP} }]\n`;
    const r = await runCli(['render', '-f', '-', '-f', 'lb.json', '--cluster-cidr', DETECTOR.cidr], {
      stdin: CLUSTER_YAML + node,
      env: { NODE_NAME: NODE },
    });
    expect(r.stderr).toBe('');
    expect(r.stdout).toBe((await runCli(['render', ...BASE_ARGS])).stdout);
  });

  it('renders IPv6 with --ip-family 6 (and says when the chosen family has no services)', async () => {
    const v6yaml = `apiVersion: v1
kind: Service
metadata: { namespace: ns6, name: web6 }
spec: { ipFamilies: [IPv6], clusterIP: 'fd00:30::10', ports: [{ name: http, port: 80 }] }
`;
    const files = { ...FILES, 'v6.yaml': v6yaml };
    const args = ['render', '-f', 'v6.yaml', '--node-name', NODE, '--node-ip', `${NODE_IP},fd00::2`];
    const v4run = await runCli(args, { files });
    expect(v4run.code).toBe(0);
    expect(v4run.stderr).toMatch(/note: no IPv4 service ports in the input; 1 IPv6 port\(s\) found/);
    const v6run = await runCli([...args, '--ip-family', '6'], { files });
    expect(v6run.code).toBe(0);
    const ref = referenceSnapshots([v6yaml], [NODE_IP, 'fd00::2']).v6;
    expect(v6run.stdout).toBe(renderIptables(ref));
    expect(v6run.stdout).toContain('-d fd00:30::10 --dport 80 -j REJECT');
  });
});

describe('render --backend nftables', () => {
  // kube-proxy's platformApplyDefaults: nftables mode without --nodeport-addresses is `primary`.
  const PRIMARY = { nodePortIPs: [NODE_IP] };

  it('prints renderNftables output for both layouts', async () => {
    for (const layout of ['kube-proxy', 'optimized'] as const) {
      const r = await runCli(['render', '-b', 'nftables', '--nftables-layout', layout, ...BASE_ARGS]);
      expect(r.stderr).toBe('');
      expect(r.code).toBe(0);
      expect(r.stdout).toBe(renderNftables(v4, { layout, localDetector: DETECTOR, ...PRIMARY }));
    }
    const def = await runCli(['render', '-b', 'nftables', ...BASE_ARGS]);
    expect(def.stdout).toBe(renderNftables(v4, { localDetector: DETECTOR, ...PRIMARY }));
    expect(def.stdout).toContain(`add element ip kube-proxy nodeport-ips { ${NODE_IP} }`);
  });

  it("writes kube-proxy's table, maps and per-service chains", async () => {
    const { stdout } = await runCli(['render', '-b', 'nftables', ...BASE_ARGS]);
    expect(stdout).toMatch(/^add table ip kube-proxy /);
    expect(stdout).toMatch(
      /add element ip kube-proxy service-ips \{.*172\.30\.0\.10 \. tcp \. 80 : goto service-\w{8}-ns1\/web\/tcp\/http/,
    );
    expect(stdout).toMatch(
      /add element ip kube-proxy service-nodeports \{.*tcp \. 30080 : goto external-\w{8}-ns1\/np\/tcp\/http/,
    );
    expect(stdout).toMatch(
      /add element ip kube-proxy no-endpoint-services \{ 172\.30\.0\.11 \. tcp \. 80 .*: goto reject-chain \}/,
    );
    expect(stdout).toMatch(
      /add rule ip kube-proxy firewall-\w{8}-ns2\/lb\/tcp\/https ip saddr != \{ 203\.0\.113\.0\/25 \} drop/,
    );
    expect(stdout).toMatch(
      /local-\w{8}-ns2\/lb\/tcp\/https numgen random mod 1 vmap \{ 0 : goto endpoint-\w{8}-ns2\/lb\/tcp\/https__10\.100\.1\.3\/8443 \}/,
    );
  });

  it('--masquerade-all changes the rendered table', async () => {
    const r = await runCli(['render', '-b', 'nftables', '--masquerade-all', ...BASE_ARGS]);
    expect(r.stdout).toBe(renderNftables(v4, { localDetector: DETECTOR, masqueradeAll: true, ...PRIMARY }));
  });
});

describe('render --backend ipvs', () => {
  it('prints the ipvsadm-restore, ipset restore, address and residual iptables texts under headers', async () => {
    const r = await runCli(['render', '-b', 'ipvs', ...BASE_ARGS]);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    const plan = planIpvs(v4, { localDetector: DETECTOR, masqueradeAll: false });
    const sections = r.stdout.split(/^# --- /m).filter(Boolean);
    expect(sections.map((s) => s.split(':')[0])).toEqual([
      'ipvsadm-restore',
      'ipset restore',
      'ip -batch',
      'iptables-restore --noflush',
    ]);
    const body = (i: number) => sections[i]!.slice(sections[i]!.indexOf('\n') + 1);
    expect(body(0)).toBe(renderIpvsadmRestore(plan));
    expect(body(1)).toBe(renderIpsetRestore(plan.ipsets));
    expect(body(2).trim().split('\n').sort()).toEqual(
      plan.boundAddresses.map((a) => `address add ${a}/32 dev kube-ipvs0`).sort(),
    );
    expect(body(3)).toBe(renderResidualIptables(plan.iptables));
    expect(body(0)).toContain(
      '-A -t 172.30.0.10:80 -s rr\n-a -t 172.30.0.10:80 -r 10.100.1.2:8080 -m -w 1\n',
    );
    expect(body(0)).toContain(`-A -t ${NODE_IP}:30080 -s rr`);
    expect(body(1)).toContain('add KUBE-LOAD-BALANCER-SOURCE-CIDR 1.2.3.4,tcp:443,203.0.113.0/25 -exist');
    expect(body(2)).toContain('address add 172.30.0.10/32 dev kube-ipvs0');
  });
});
