/**
 * `nodeagent-proxy` with bad input: one error line per bad document or object (naming its
 * file), the rest still rendered; exit codes 0 / 1 / 2; hostile object names never break a
 * line; usage errors and `--help`.
 */
import { renderIptables } from '@nodeagent/iptables';
import { describe, expect, it } from 'vitest';
import {
  BASE_ARGS,
  CLUSTER_YAML,
  DETECTOR,
  FILES,
  NODE,
  NODE_IP,
  referenceSnapshots,
  runCli,
} from './cli-fixtures.js';

const BAD_YAML = `kind: Service
metadata: { name: broken
  spec: [unclosed
---
apiVersion: v1
kind: Service
metadata: { namespace: ns1, name: badip }
spec: { clusterIP: 999.1.1.1, ports: [{ name: http, port: 80 }] }
---
apiVersion: v1
kind: Service
metadata: { namespace: ns1, name: badport }
spec: { clusterIP: 172.30.0.50, ports: [{ name: http, port: 70000 }] }
---
apiVersion: v1
kind: Service
metadata: { namespace: ns1, name: badproto }
spec: { clusterIP: 172.30.0.51, ports: [{ name: http, port: 80, protocol: ICMP }] }
---
apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata: { namespace: ns1, name: nolabel }
addressType: IPv4
endpoints: [{ addresses: [10.100.9.9] }]
---
just a string
`;

const FILES_WITH_BAD = { ...FILES, 'bad.yaml': BAD_YAML };
const CLUSTER_ONLY = [
  '-f',
  'cluster.yaml',
  '--node-name',
  NODE,
  '--node-ip',
  NODE_IP,
  '--cluster-cidr',
  DETECTOR.cidr,
];

function errorLines(stderr: string): string[] {
  return stderr.split('\n').filter((l) => l.startsWith('nodeagent-proxy: error: '));
}

describe('bad objects', () => {
  it('are reported one line each with their file; the rest is rendered and the exit code is 0', async () => {
    const r = await runCli(['render', ...CLUSTER_ONLY, '-f', 'bad.yaml'], { files: FILES_WITH_BAD });
    expect(r.code).toBe(0);
    expect(r.stdout).toBe(renderIptables(referenceSnapshots([CLUSTER_YAML]).v4, { localDetector: DETECTOR }));
    const errors = errorLines(r.stderr);
    expect(errors).toHaveLength(6);
    for (const e of errors) expect(e).toMatch(/^nodeagent-proxy: error: bad\.yaml: /);
    const text = errors.join('\n');
    expect(text).toMatch(/manifest document 0: /);
    expect(text).toMatch(/Service ns1\/badip skipped: .*999\.1\.1\.1/);
    expect(text).toMatch(/Service ns1\/badport skipped: .*70000/);
    expect(text).toMatch(/Service ns1\/badproto skipped: .*ICMP/);
    expect(text).toMatch(/EndpointSlice ns1\/nolabel skipped: .*kubernetes\.io\/service-name/);
    expect(text).toMatch(/manifest document 5: not a Kubernetes object/);
    expect(r.stderr).toMatch(
      /nodeagent-proxy: note: 6 invalid object\(s\) skipped; 3 service port\(s\) used\n$/,
    );
  });

  it('the same objects are skipped by every backend, each still rendering the valid ones', async () => {
    for (const backend of ['nftables', 'ipvs']) {
      const r = await runCli(['render', '-b', backend, ...CLUSTER_ONLY, '-f', 'bad.yaml'], {
        files: FILES_WITH_BAD,
      });
      expect(r.code, backend).toBe(0);
      expect(errorLines(r.stderr), backend).toHaveLength(6);
      expect(r.stdout, backend).toContain('172.30.0.10');
      expect(r.stdout, backend).not.toContain('172.30.0.50');
    }
  });

  it('exit 1 and no output when nothing usable is left', async () => {
    const r = await runCli(['render', '-f', 'bad.yaml', '--node-name', NODE, '--node-ip', NODE_IP], {
      files: FILES_WITH_BAD,
    });
    expect(r.code).toBe(1);
    expect(r.stdout).toBe('');
    expect(errorLines(r.stderr)).toHaveLength(7);
    expect(r.stderr).toContain('no valid service port left in the input: nothing written');
  });

  it('--strict: exit 1 and no output as soon as one object is invalid', async () => {
    const r = await runCli(['render', ...CLUSTER_ONLY, '-f', 'bad.yaml', '--strict'], {
      files: FILES_WITH_BAD,
    });
    expect(r.code).toBe(1);
    expect(r.stdout).toBe('');
    expect(r.stderr).toContain('6 invalid object(s) with --strict: nothing written');
    const ok = await runCli(['render', ...CLUSTER_ONLY, '--strict']);
    expect(ok.code).toBe(0);
  });

  it('an empty input is valid: the shared chains only, exit 0', async () => {
    const r = await runCli(['render', '-f', 'empty.yaml', '--node-name', NODE, '--node-ip', NODE_IP], {
      files: { 'empty.yaml': '' },
    });
    expect(r.code).toBe(0);
    expect(r.stderr).toBe('');
    expect(r.stdout).toContain(':KUBE-SERVICES - [0:0]');
    expect(r.stdout).not.toContain('KUBE-SVC-');
  });

  it('an unreadable file fails the command (exit 1) before anything is written', async () => {
    const r = await runCli(['render', ...CLUSTER_ONLY, '-f', 'missing.yaml']);
    expect(r.code).toBe(1);
    expect(r.stdout).toBe('');
    expect(r.stderr).toMatch(/^nodeagent-proxy: error: cannot read missing\.yaml: ENOENT/);
  });

  it('notes duplicates (the last wins) and options that do not apply to the backend', async () => {
    const r = await runCli(
      ['render', '-b', 'nftables', ...CLUSTER_ONLY, '-f', 'cluster.yaml', '--no-localhost-nodeports'],
      { files: FILES },
    );
    expect(r.code).toBe(0);
    expect(r.stderr).toContain(
      'note: --no-localhost-nodeports only applies to iptables; ignored for nftables',
    );
    expect(r.stderr).toContain(
      'note: Service ns1/web appears again in cluster.yaml (first in cluster.yaml): the last one is used',
    );
    expect(errorLines(r.stderr)).toEqual([]);
  });
});

describe('hostile names', () => {
  const hostile = `apiVersion: v1
kind: Service
metadata: { namespace: "ns 1", name: "evil\\nname \\"q\\" $(reboot) \\u001b[2J" }
spec: { clusterIP: 172.30.0.60, ports: [{ name: "p\\n80", port: 80 }] }
---
apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata:
  namespace: "ns 1"
  name: "evil-1"
  labels: { kubernetes.io/service-name: "evil\\nname \\"q\\" $(reboot) \\u001b[2J" }
addressType: IPv4
ports: [{ name: "p\\n80", port: 8080 }]
endpoints: [{ addresses: [10.100.3.3] }]
---
apiVersion: v1
kind: Service
metadata: { namespace: ns1, name: "bad\\u001b]0;pwned\\u0007ip" }
spec: { clusterIP: "1.2.3.999\\nX", ports: [{ port: 80 }] }
`;
  const files = { ...FILES, 'hostile.yaml': hostile };

  it.each(['iptables', 'nftables', 'ipvs'])(
    '%s: every stderr line is one clean line; valid services are still rendered',
    async (backend) => {
      const r = await runCli(['render', '-b', backend, ...CLUSTER_ONLY, '-f', 'hostile.yaml'], { files });
      expect(r.code).toBe(0);
      expect(r.stdout).toContain('172.30.0.10');
      for (const line of r.stderr.split('\n').filter(Boolean)) {
        expect(line).toMatch(/^nodeagent-proxy: (error|note): /);
      }
      // biome-ignore lint/suspicious/noControlCharactersInRegex: asserting their absence.
      expect(r.stderr).not.toMatch(/[\u0000-\u0009\u000b-\u001f]/);
      const errors = errorLines(r.stderr);
      expect(errors.some((e) => e.includes('bad\\x1b]0;pwned\\x07ip'))).toBe(true);
      // Nothing the names contain reaches the output unescaped as a new line or escape.
      // biome-ignore lint/suspicious/noControlCharactersInRegex: asserting their absence.
      expect(r.stdout).not.toMatch(/\u001b/);
      expect(r.stdout.split('\n').some((l) => l.startsWith('name '))).toBe(false);
    },
  );

  it('iptables keeps the hostile service (escaped comment) and traces through it', async () => {
    const r = await runCli(['render', ...CLUSTER_ONLY, '-f', 'hostile.yaml'], { files });
    expect(r.stdout).toContain('-d 172.30.0.60 --dport 80');
    const t = await runCli(
      [
        'trace',
        ...CLUSTER_ONLY,
        '-f',
        'hostile.yaml',
        '--src',
        '10.100.1.5',
        '--dst',
        '172.30.0.60',
        '--port',
        '80',
        '--json',
      ],
      { files },
    );
    expect(JSON.parse(t.stdout)).toMatchObject({ outcome: 'endpoints', endpoints: ['10.100.3.3:8080'] });
  });
});

describe('usage errors (exit 2, short usage on stderr, nothing on stdout)', () => {
  const trace = ['trace', ...BASE_ARGS];
  const cases: [string, string[], RegExp][] = [
    ['no command', [], /a command is required/],
    ['unknown command', ['frobnicate'], /unknown command "frobnicate"/],
    ['unknown option', ['render', ...BASE_ARGS, '--bogus'], /Unknown option '--bogus'/],
    [
      'unknown backend',
      ['render', '-b', 'userspace', ...BASE_ARGS],
      /--backend must be iptables, nftables or ipvs/,
    ],
    ['no -f', ['render', '--node-name', NODE, '--node-ip', NODE_IP], /at least one -f/],
    ['no node name', ['render', '-f', 'cluster.yaml', '--node-ip', NODE_IP], /--node-name is required/],
    [
      'no node IP and no Node object',
      ['render', '-f', 'cluster.yaml', '--node-name', NODE],
      /--node-ip is required/,
    ],
    [
      'invalid node IP',
      ['render', '-f', 'cluster.yaml', '--node-name', NODE, '--node-ip', '1.2.3'],
      /"1\.2\.3" is not an IP/,
    ],
    ['invalid cluster CIDR', ['render', ...BASE_ARGS, '--cluster-cidr', '10.0.0.0/33'], /is not a CIDR/],
    ['bad layout', ['render', ...BASE_ARGS, '--nftables-layout', 'fast'], /--nftables-layout must be/],
    ['bad family', ['render', ...BASE_ARGS, '--ip-family', '5'], /--ip-family must be 4 or 6/],
    ['trace without --src', [...trace, '--dst', '172.30.0.10', '--port', '80'], /--src is required/],
    ['invalid --src', [...trace, '--src', 'x', '--dst', '172.30.0.10', '--port', '80'], /"x" is not an IP/],
    [
      'port 0',
      [...trace, '--src', '10.0.0.1', '--dst', '172.30.0.10', '--port', '0'],
      /--port must be a number from 1 to 65535/,
    ],
    ['port text', [...trace, '--src', '10.0.0.1', '--dst', '172.30.0.10', '--port', '8o'], /--port must be/],
    [
      'unknown protocol',
      [...trace, '--src', '10.0.0.1', '--dst', '172.30.0.10', '--port', '80', '--proto', 'icmp'],
      /--proto must be tcp, udp or sctp/,
    ],
    [
      'mixed families',
      [...trace, '--src', 'fd00::1', '--dst', '172.30.0.10', '--port', '80'],
      /different IP families/,
    ],
    ['apply without --netns', ['apply', ...BASE_ARGS], /--netns <name> is required/],
    [
      'apply with a path as netns',
      ['apply', ...BASE_ARGS, '--netns', '../etc'],
      /not a valid namespace name/,
    ],
    ['stray argument', ['render', 'extra', ...BASE_ARGS], /unexpected argument "extra"/],
  ];
  it.each(cases)('%s', async (_name, argv, message) => {
    const r = await runCli(argv);
    expect(r.code).toBe(2);
    expect(r.stdout).toBe('');
    expect(r.stderr).toMatch(message);
    expect(r.stderr).toMatch(/^nodeagent-proxy: error: /);
    expect(r.stderr).toMatch(/\nUsage: nodeagent-proxy /);
    expect(r.stderr).toMatch(/Run 'nodeagent-proxy( \w+)? --help' for the options\.\n$/);
  });
});

describe('--help', () => {
  it.each([
    [['--help'], /^Usage: nodeagent-proxy <command>/],
    [['help'], /^Usage: nodeagent-proxy <command>/],
    [['render', '--help'], /^Usage: nodeagent-proxy render /],
    [['trace', '-h'], /^Usage: nodeagent-proxy trace [\s\S]*--proto tcp\|udp\|sctp/],
    [['apply', '--help'], /^Usage: nodeagent-proxy apply --netns/],
    [['help', 'trace'], /^Usage: nodeagent-proxy trace /],
  ])('%j prints usage on stdout, exit 0', async (argv, re) => {
    const r = await runCli(argv);
    expect(r.code).toBe(0);
    expect(r.stderr).toBe('');
    expect(r.stdout).toMatch(re);
    expect(r.stdout).toMatch(/Exit codes: 0 /);
  });
});

describe('wrong-typed manifest fields', () => {
  const BAD = `apiVersion: v1
kind: Service
metadata: {name: a, namespace: default}
spec: {clusterIP: 172.30.0.1, ports: {port: 80}}
---
apiVersion: v1
kind: Service
metadata: {name: b, namespace: default}
spec: {clusterIP: 172.30.0.2, ports: "80"}
---
apiVersion: v1
kind: Service
metadata: {name: good, namespace: default}
spec: {clusterIP: 172.30.0.3, ports: [{port: 80, name: http}]}
---
apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata: {name: good-1, namespace: default, labels: {kubernetes.io/service-name: good}}
addressType: IPv4
ports: [{port: 8080, name: http}]
endpoints: 5
---
apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata: {name: good-2, namespace: default, labels: {kubernetes.io/service-name: good}}
addressType: IPv4
ports: [{port: 8080, name: http}]
endpoints: [{addresses: ["10.0.0.2"], conditions: {ready: "false"}}]
---
apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata: {name: good-3, namespace: default, labels: {kubernetes.io/service-name: good}}
addressType: IPv4
ports: [{port: 8080, name: http}]
endpoints: [{addresses: ["10.0.0.3"]}]
`;
  it.each(['iptables', 'nftables', 'ipvs'])(
    '%s: each is reported with its field; the rest is rendered',
    async (backend) => {
      const r = await runCli(
        ['render', '-b', backend, '-f', 'bad.yaml', '--node-name', 'n1', '--node-ip', '10.0.0.9'],
        {
          files: { 'bad.yaml': BAD },
        },
      );
      expect(r.code).toBe(0);
      expect(r.stderr).toContain('Service default/a skipped: spec.ports must be a list, not an object');
      expect(r.stderr).toContain('Service default/b skipped: spec.ports must be a list, not a string "80"');
      expect(r.stderr).toContain(
        'EndpointSlice default/good-1 skipped: endpoints must be a list, not the number 5',
      );
      expect(r.stderr).toContain(
        'EndpointSlice default/good-2 skipped: endpoints[0].conditions.ready must be true or false, not a string "false"',
      );
      expect(r.stdout).toContain('172.30.0.3');
      expect(r.stdout).toContain('10.0.0.3');
      expect(r.stdout).not.toContain('10.0.0.2');
    },
  );
});
