/**
 * `nodeagent-proxy doctor` over saved kernel outputs (iptables-save, nft list table of rules
 * that `apply` programmed into a real namespace with the CLUSTER_YAML fixture), fed through
 * an injected command runner; each broken variant is made by editing the saved text the way
 * the kernel would show the problem.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { startMiniApiServer } from '../../mini-apiserver/src/index.js';
import { runDoctorCli } from '../src/cli/doctor.js';
import type { DoctorRunner } from '../src/cli/doctor-read.js';
import { parseManifests } from '../src/cli/parse-manifests.js';
import { runProxyCli } from '../src/cli/run-proxy-cli.js';
import { CLUSTER_YAML, NODE, NODE_IP, POD_CIDR } from './cli-fixtures.js';

const FIX = join(import.meta.dirname, 'fixtures/doctor');

/** `### command` sections of a saved file. */
function sections(file: string): Map<string, string> {
  const out = new Map<string, string>();
  let cur = '';
  for (const line of readFileSync(join(FIX, file), 'utf8').split('\n')) {
    if (line.startsWith('### ')) {
      cur = line.slice(4);
      out.set(cur, '');
    } else out.set(cur, `${out.get(cur)}${line}\n`);
  }
  return out;
}

const GOOD_SYSCTLS: Record<string, string> = {
  'net.ipv4.ip_forward': '1',
  'net.ipv6.conf.all.forwarding': '1',
  'net.ipv4.conf.all.route_localnet': '1',
  'net.bridge.bridge-nf-call-iptables': '1',
  'net.bridge.bridge-nf-call-ip6tables': '1',
};

interface NodeFixture {
  saves: Map<string, string>;
  sysctls?: Record<string, string>;
  missing?: string[];
}

function runner(f: NodeFixture): { run: DoctorRunner; calls: string[] } {
  const calls: string[] = [];
  const sys = f.sysctls ?? GOOD_SYSCTLS;
  const run: DoctorRunner = async (argv) => {
    const cmd = argv.join(' ');
    calls.push(cmd);
    if ((f.missing ?? []).includes(argv[0]!)) return undefined;
    if (argv[0] === 'cat') {
      const key = argv[1]!.replace('/proc/sys/', '').replaceAll('/', '.');
      const v = sys[key];
      return v === undefined
        ? { code: 1, stdout: '', stderr: 'No such file or directory' }
        : { code: 0, stdout: `${v}\n`, stderr: '' };
    }
    const versions: Record<string, string> = {
      'nft --version': 'nftables v1.0.6 (Lester Gooch #5)\n',
      'iptables --version': 'iptables v1.8.9 (nf_tables)\n',
      'conntrack --version': 'conntrack v1.4.7 (conntrack-tools)\n',
      'uname -r': '6.1.0-13-amd64\n',
      'ip -j addr show': JSON.stringify([
        { ifname: 'lo', addr_info: [{ local: '127.0.0.1', scope: 'host' }] },
        { ifname: 'eth0', addr_info: [{ local: NODE_IP, scope: 'global' }] },
      ]),
    };
    if (versions[cmd] !== undefined) return { code: 0, stdout: versions[cmd]!, stderr: '' };
    if (cmd === 'ipvsadm -Ln' || cmd === 'ipvsadm --version') return undefined;
    const text = f.saves.get(cmd);
    if (text === undefined || (cmd.startsWith('nft list') && text.trim() === '')) {
      return { code: 1, stdout: '', stderr: 'Error: No such file or directory' };
    }
    return { code: 0, stdout: text, stderr: '' };
  };
  return { run, calls };
}

async function doctor(f: NodeFixture, args: string[]) {
  let stdout = '';
  let stderr = '';
  const { run, calls } = runner(f);
  const code = await runDoctorCli(args, {
    stdout: { write: (s: string) => (stdout += s) },
    stderr: { write: (s: string) => (stderr += s) },
    env: {},
    readFile: async () => CLUSTER_YAML,
    runner: run,
  });
  return { code, stdout, stderr, calls };
}

async function doctorJson(f: NodeFixture, args: string[] = []) {
  const r = await doctor(f, [...args, '--json']);
  return {
    ...r,
    report: JSON.parse(r.stdout) as {
      findings: { id: string; severity: string; message: string }[];
      modes: string[];
      traces: { outcome: string; endpoints: string[]; destIP: string; kind: string }[];
    },
  };
}

const DRIFT = ['-f', 'cluster.yaml', '--node-name', NODE, '--node-ip', NODE_IP, '--cluster-cidr', POD_CIDR];
const ids = (fs: { id: string; severity: string }[]) =>
  fs.filter((f) => f.severity !== 'info').map((f) => f.id);

describe('doctor on a healthy node', () => {
  it('iptables: no problems, drift-free, exit 0, and a trace of the live rules', async () => {
    const r = await doctorJson({ saves: sections('iptables-node.txt') }, [...DRIFT, '--service', 'ns1/web']);
    expect(r.code).toBe(0);
    expect(r.report.modes).toEqual(['iptables']);
    expect(ids(r.report.findings)).toEqual([]);
    expect(r.report.findings.find((f) => f.id === 'drift')?.message).toMatch(/match what the objects imply/);
    expect(r.report.traces).toEqual([
      expect.objectContaining({
        kind: 'ClusterIP',
        destIP: '172.30.0.10',
        outcome: 'endpoints',
        endpoints: ['10.100.1.2:8080', '10.100.2.2:8080'],
      }),
    ]);
  });

  it('nftables: no problems, drift-free; NodePort and ClusterIP traced', async () => {
    const r = await doctorJson({ saves: sections('nft-node.txt') }, [
      ...DRIFT,
      '--service',
      'ns1/np',
      '--port',
      'http',
    ]);
    expect(r.code).toBe(0);
    expect(r.report.modes).toEqual(['nftables']);
    expect(ids(r.report.findings)).toEqual([]);
    expect(r.report.traces.map((t) => [t.kind, t.destIP, t.outcome, t.endpoints])).toEqual([
      ['ClusterIP', '172.30.0.20', 'endpoints', ['10.100.2.2:8080']],
      ['NodePort', NODE_IP, 'endpoints', ['10.100.2.2:8080']],
    ]);
  });

  it('a service without endpoints traces to REJECT (a warning with a remedy)', async () => {
    for (const file of ['iptables-node.txt', 'nft-node.txt']) {
      const r = await doctorJson({ saves: sections(file) }, ['--service', 'ns1/empty']);
      expect(r.report.traces.map((t) => t.outcome)).toEqual(['REJECT']);
      expect(r.code).toBe(1);
    }
  });

  it('text output: severity marks, remedies, summary line', async () => {
    const r = await doctor(
      { saves: sections('iptables-node.txt'), sysctls: { ...GOOD_SYSCTLS, 'net.ipv4.ip_forward': '0' } },
      [],
    );
    expect(r.code).toBe(1);
    expect(r.stdout).toMatch(/^ERROR \[ip-forward\] net\.ipv4\.ip_forward is 0/m);
    expect(r.stdout).toMatch(/^ {6}fix: sysctl -w net\.ipv4\.ip_forward=1/m);
    expect(r.stdout).toMatch(/^1 error\(s\), 0 warning\(s\)$/m);
  });
});

describe('doctor finds what is broken', () => {
  it('a deleted dispatch rule: stale chain, drift, and the service traces to nothing', async () => {
    const saves = sections('iptables-node.txt');
    const nft = saves.get('iptables-nft-save')!;
    const broken = nft.replace(/^-A KUBE-SERVICES -d 172\.30\.0\.10\/32 .*\n/m, '');
    expect(broken).not.toBe(nft);
    saves.set('iptables-nft-save', broken);
    const r = await doctorJson({ saves }, [...DRIFT, '--service', 'ns1/web']);
    expect(r.code).toBe(1);
    const f = r.report.findings;
    expect(f.find((x) => x.id === 'stale-chain')?.message).toMatch(
      /KUBE-SVC-4LVCYZMTA5CQO6SX is not referenced/,
    );
    expect(f.find((x) => x.id === 'drift' && x.severity === 'error')?.message).toMatch(
      /rule missing in the kernel: .*172\.30\.0\.10/,
    );
    expect(f.find((x) => x.id === 'service-not-programmed')).toBeDefined();
  });

  it('nftables: a removed map element leaves its service chains stale and shows as drift', async () => {
    const saves = sections('nft-node.txt');
    const t = saves.get('nft list table ip kube-proxy')!;
    const broken = t.replace(
      /172\.30\.0\.10 \. tcp \. 80 : goto service-DK7ABAZC-ns1\/web\/tcp\/http,\s*/,
      '',
    );
    expect(broken).not.toBe(t);
    saves.set('nft list table ip kube-proxy', broken);
    const r = await doctorJson({ saves }, [...DRIFT]);
    const stale = r.report.findings.filter((x) => x.id === 'stale-chain').map((x) => x.message);
    expect(stale).toEqual([
      expect.stringMatching(/chain service-DK7ABAZC-ns1\/web\/tcp\/http is not referenced/),
    ]);
    expect(
      r.report.findings.some(
        (x) => x.id === 'drift' && /element 172\.30\.0\.10 \. tcp \. 80 .*missing/.test(x.message),
      ),
    ).toBe(true);
    expect(r.code).toBe(1);
  });

  it('iptables-mode chains next to the nftables table: mixed modes and leftovers', async () => {
    const saves = sections('nft-node.txt');
    saves.set('iptables-nft-save', sections('iptables-node.txt').get('iptables-nft-save')!);
    const r = await doctorJson({ saves });
    expect(r.report.modes).toEqual(['iptables', 'nftables']);
    expect(ids(r.report.findings)).toEqual(
      expect.arrayContaining(['mixed-modes', 'leftover-iptables-rules']),
    );
    expect(r.code).toBe(1);
  });

  it('kube-proxy chains in both iptables backends: rules of another kube-proxy', async () => {
    const saves = sections('iptables-node.txt');
    saves.set('iptables-legacy-save', saves.get('iptables-nft-save')!);
    const r = await doctorJson({ saves });
    expect(ids(r.report.findings)).toContain('iptables-both-backends');
  });

  it('IPVS virtual servers next to iptables-mode chains: "are you mixing IPVS and iptables?"', async () => {
    const { run } = runner({ saves: sections('iptables-node.txt') });
    let stdout = '';
    const code = await runDoctorCli(['--json'], {
      stdout: { write: (s: string) => (stdout += s) },
      stderr: { write: () => true },
      env: {},
      runner: async (argv: readonly string[]) =>
        argv.join(' ') === 'ipvsadm -Ln'
          ? {
              code: 0,
              stdout:
                'IP Virtual Server version 1.2.1 (size=4096)\nProt LocalAddress:Port Scheduler Flags\n  -> RemoteAddress:Port           Forward Weight ActiveConn InActConn\nTCP  172.30.0.10:80 rr\n  -> 10.100.1.2:8080              Masq    1      0          0\n',
              stderr: '',
            }
          : run(argv),
    });
    const report = JSON.parse(stdout) as { findings: { id: string; message: string }[]; modes: string[] };
    expect(code).toBe(1);
    expect(report.modes).toEqual(['iptables', 'ipvs']);
    expect(report.findings.find((f) => f.id === 'mixed-modes')?.message).toMatch(
      /are you mixing IPVS and iptables\?/,
    );
  });

  it('an old-layout base chain in table ip kube-proxy', async () => {
    const saves = sections('nft-node.txt');
    const t = saves.get('nft list table ip kube-proxy')!;
    saves.set(
      'nft list table ip kube-proxy',
      t.replace(
        /\n}\s*$/,
        '\n\tchain filter-output-post-dnat {\n\t\ttype filter hook output priority dstnat + 10; policy accept;\n\t}\n}\n',
      ),
    );
    const r = await doctorJson({ saves });
    expect(r.report.findings.find((f) => f.id === 'old-nft-layout')?.message).toMatch(
      /base chain filter-output-post-dnat .* not part of the current kube-proxy layout/,
    );
  });

  it('prerequisites: ip_forward off, br_netfilter not loaded, route_localnet off, no conntrack, old nft', async () => {
    const sysctls = { 'net.ipv4.ip_forward': '0', 'net.ipv4.conf.all.route_localnet': '0' };
    const ipt = await doctorJson({ saves: sections('iptables-node.txt'), sysctls, missing: ['conntrack'] });
    expect(ids(ipt.report.findings).sort()).toEqual([
      'br-netfilter',
      'conntrack-missing',
      'ip-forward',
      'route-localnet',
    ]);
    // nftables mode has no localhost NodePorts: route_localnet is not its concern.
    const nftr = await doctorJson({ saves: sections('nft-node.txt'), sysctls });
    expect(ids(nftr.report.findings).sort()).toEqual(['br-netfilter', 'ip-forward']);
  });

  it('no proxy rules at all: a warning', async () => {
    const r = await doctorJson({ saves: new Map() });
    expect(r.report.modes).toEqual([]);
    expect(ids(r.report.findings)).toEqual(['no-proxy-rules']);
    expect(r.code).toBe(1);
  });
});

describe('doctor command line', () => {
  it('usage errors exit 2; --help exits 0', async () => {
    const f = { saves: new Map<string, string>() };
    expect((await doctor(f, ['--service', 'bad'])).code).toBe(2);
    expect((await doctor(f, ['--port', '80'])).code).toBe(2);
    expect((await doctor(f, ['--bogus'])).code).toBe(2);
    expect((await doctor(f, ['-f', 'a.yaml', '--kubeconfig', 'k'])).code).toBe(2);
    let out = '';
    const io = { stdout: { write: (s: string) => (out += s) }, stderr: { write: () => true }, env: {} };
    expect(await runProxyCli(['doctor', '--help'], io)).toBe(0);
    expect(out).toMatch(/^Usage: nodeagent-proxy doctor/);
    out = '';
    expect(await runProxyCli(['help', 'doctor'], io)).toBe(0);
    expect(out).toMatch(/^Usage: nodeagent-proxy doctor/);
    out = '';
    expect(await runProxyCli(['--help'], io)).toBe(0);
    expect(out).toMatch(/^ {2}doctor {3}explain/m);
  });

  it('reads only: every command it runs is a read', async () => {
    const { calls } = await doctor({ saves: sections('nft-node.txt') }, [...DRIFT, '--service', 'ns1/web']);
    for (const c of calls)
      expect(c).toMatch(
        /^(cat \/proc\/sys\/|iptables-(legacy|nft)-save$|ip6tables-(legacy|nft)-save$|nft list table|nft --version|iptables --version|conntrack --version|ipvsadm (-Ln|--version)|uname -r|ip -j addr show)/,
      );
  });
});

describe('doctor --kubeconfig', () => {
  it('lists Services and EndpointSlices from the API server and diffs them against the kernel', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'kpdoc-'));
    const server = await startMiniApiServer({
      host: '127.0.0.1',
      autoCreateNamespaces: true,
      endpointSliceController: false,
      kubeconfigPath: join(dir, 'kubeconfig'),
    });
    try {
      const parsed = parseManifests(CLUSTER_YAML);
      for (const s of parsed.services) server.store.create('services', s as never);
      for (const e of parsed.endpointSlices) server.store.create('endpointslices', e as never);
      const args = [
        '--kubeconfig',
        join(dir, 'kubeconfig'),
        '--node-name',
        NODE,
        '--node-ip',
        NODE_IP,
        '--cluster-cidr',
        POD_CIDR,
      ];
      const ok = await doctorJson({ saves: sections('nft-node.txt') }, args);
      expect(ok.report.findings.find((f) => f.id === 'drift')?.message).toMatch(
        /match what the objects imply \(3 service port/,
      );
      // A new endpoint in the API that the kernel does not have yet.
      server.store.update('endpointslices', {
        ...parsed.endpointSlices.find((e) => e.metadata?.name === 'web-1'),
        endpoints: [
          { addresses: ['10.100.1.2'], nodeName: NODE },
          { addresses: ['10.100.3.3'], nodeName: 'node-c' },
        ],
      } as never);
      const drift = await doctorJson({ saves: sections('nft-node.txt') }, args);
      expect(drift.code).toBe(1);
      expect(
        drift.report.findings
          .filter((f) => f.id === 'drift')
          .map((f) => f.message)
          .join('\n'),
      ).toMatch(/10\.100\.3\.3/);
    } finally {
      await server.stop();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('an unreadable kubeconfig is a failure (exit 1) naming it', async () => {
    const r = await doctor({ saves: sections('nft-node.txt') }, [
      '--kubeconfig',
      '/nonexistent/kubeconfig',
      '--node-name',
      NODE,
    ]);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/cannot load the API server configuration/);
  });
});
