// `nodeagent doctor`'s checks over fake readings: /proc/swaps (also garbage and unreadable),
// /sys/fs/cgroup, CRI answers (hung, unimplemented RuntimeConfig, NotReady conditions), the
// agent's healthz and metrics, the API server's Date, certificates, /proc/net/tcp and statfs.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseThresholdConfig } from '@nodeagent/eviction';
import { afterAll, describe, expect, it } from 'vitest';
import {
  type CgroupReadings,
  checkCertificates,
  checkCgroups,
  checkClockSkew,
  checkDataPlane,
  checkDisk,
  checkPleg,
  checkPorts,
  checkRuntime,
  checkSwap,
  parseProcNetTcp,
  SWAP_ON_MESSAGE,
} from '../src/doctor/checks.js';
import type { RuntimeReading } from '../src/doctor/types.js';
import { writeSelfSignedCert } from './helpers.js';

const PROC_SWAPS_ON = `Filename\t\t\t\tType\t\tSize\t\tUsed\t\tPriority
/swap.img                               file\t\t3954684\t\t1451840\t\t-2
`;
const PROC_SWAPS_OFF = 'Filename\t\t\t\tType\t\tSize\t\tUsed\t\tPriority\n';

describe('swap', () => {
  it('is off with only the header, on with a device line (the kubelet message with --fail-swap-on)', () => {
    expect(checkSwap({ ok: true, text: PROC_SWAPS_OFF }, true)).toMatchObject([
      { severity: 'ok', message: 'swap is off' },
    ]);
    const [f] = checkSwap({ ok: true, text: PROC_SWAPS_ON }, true);
    expect(f?.severity).toBe('error');
    expect(f?.message).toContain('/swap.img');
    expect(f?.message).toContain(
      'running with swap on is not supported, please disable swap or set --fail-swap-on flag to false',
    );
    expect(SWAP_ON_MESSAGE).toBe(
      'running with swap on is not supported, please disable swap or set --fail-swap-on flag to false',
    );
    expect(checkSwap({ ok: true, text: PROC_SWAPS_ON }, false)[0]?.severity).toBe('ok');
  });

  it('treats a missing /proc/swaps as off and an unreadable one as an error', () => {
    expect(checkSwap({ ok: false, code: 'ENOENT', message: 'no such file' }, true)[0]?.severity).toBe('ok');
    const [f] = checkSwap({ ok: false, code: 'EACCES', message: 'permission denied' }, true);
    expect(f?.severity).toBe('error');
    expect(f?.message).toContain('failed to determine if swap is on');
  });

  it('warns on garbage and says what the kubelet would conclude', () => {
    const [f] = checkSwap({ ok: true, text: '\u0000\u0001garbage\nmore garbage\n' }, true);
    expect(f?.severity).toBe('warn');
    expect(f?.message).toMatch(/unexpected format.*swap as on/);
    expect(checkSwap({ ok: true, text: '' }, true)[0]).toMatchObject({
      severity: 'warn',
      message: expect.stringMatching(/as off/),
    });
  });
});

const V2: CgroupReadings = {
  controllers: { ok: true, text: 'cpuset cpu io memory hugetlb pids rdma misc\n' },
  rootEntries: { ok: true, names: ['cgroup.controllers', 'kubepods.slice'] },
};
const V1: CgroupReadings = {
  controllers: { ok: false, code: 'ENOENT', message: 'no such file' },
  rootEntries: { ok: true, names: ['blkio', 'cpu,cpuacct', 'memory', 'pids'] },
};

function runtimeWith(over: Partial<RuntimeReading>): RuntimeReading {
  return {
    endpoint: 'unix:///run/containerd/containerd.sock',
    version: { ok: true, runtimeName: 'containerd', runtimeVersion: 'v1.7.24', runtimeApiVersion: 'v1' },
    status: {
      ok: true,
      conditions: [
        { type: 'RuntimeReady', status: true, reason: '', message: '' },
        { type: 'NetworkReady', status: true, reason: '', message: '' },
      ],
    },
    ...over,
  };
}

describe('cgroups', () => {
  it('reports v2 with its controllers, v1 as a warning, nothing mounted as an error', () => {
    expect(checkCgroups(V2, undefined, undefined)[0]).toMatchObject({
      severity: 'ok',
      message: expect.stringMatching(/^cgroup v2/),
    });
    expect(checkCgroups(V1, undefined, undefined)[0]).toMatchObject({
      severity: 'warn',
      message: expect.stringMatching(/^cgroup v1/),
    });
    const none: CgroupReadings = {
      controllers: { ok: false, code: 'EACCES', message: 'permission denied' },
      rootEntries: { ok: false, message: 'EACCES: permission denied' },
    };
    expect(checkCgroups(none, undefined, undefined)[0]?.severity).toBe('error');
    const noMemory: CgroupReadings = { ...V2, controllers: { ok: true, text: 'cpu pids\n' } };
    expect(checkCgroups(noMemory, undefined, undefined)[0]).toMatchObject({
      severity: 'warn',
      message: expect.stringContaining('memory'),
    });
  });

  it('compares the driver with the runtime, unknown (not an error) when RuntimeConfig is unimplemented', () => {
    const mismatch = checkCgroups(
      V2,
      'cgroupfs',
      runtimeWith({ cgroupDriver: { ok: true, driver: 'systemd' } }),
    )[1];
    expect(mismatch).toMatchObject({
      severity: 'error',
      remedy: expect.stringContaining('--cgroup-driver=systemd'),
    });
    expect(
      checkCgroups(V2, 'systemd', runtimeWith({ cgroupDriver: { ok: true, driver: 'systemd' } }))[1]
        ?.severity,
    ).toBe('ok');
    // The agent's default is cgroupfs.
    expect(
      checkCgroups(V2, undefined, runtimeWith({ cgroupDriver: { ok: true, driver: 'systemd' } }))[1]
        ?.severity,
    ).toBe('error');
    const unknown = checkCgroups(
      V2,
      'systemd',
      runtimeWith({
        cgroupDriver: { ok: false, reason: 'unimplemented', message: 'unknown method RuntimeConfig' },
      }),
    )[1];
    expect(unknown).toMatchObject({
      severity: 'ok',
      skipped: true,
      message: expect.stringContaining('unknown'),
    });
  });
});

describe('runtime', () => {
  it('is an error when the runtime hangs past the timeout or cannot be reached', () => {
    const hung = checkRuntime(
      runtimeWith({ version: { ok: false, reason: 'timeout', message: 'no answer within 200 ms' } }),
    );
    expect(hung).toHaveLength(1);
    expect(hung[0]).toMatchObject({
      severity: 'error',
      message: expect.stringMatching(/did not answer Version in time/),
    });
    const down = checkRuntime(
      runtimeWith({ version: { ok: false, reason: 'unavailable', message: 'ENOENT' } }),
    );
    expect(down[0]).toMatchObject({ severity: 'error', message: expect.stringMatching(/^cannot reach/) });
  });

  it("reports NetworkReady=false with the kubelet's wording and a missing RuntimeReady as <nil>", () => {
    const f = checkRuntime(
      runtimeWith({
        status: {
          ok: true,
          conditions: [
            {
              type: 'NetworkReady',
              status: false,
              reason: 'NetworkPluginNotReady',
              message: 'Network plugin returns error: cni plugin not initialized',
            },
          ],
        },
      }),
    );
    expect(f.map((x) => x.severity)).toEqual(['ok', 'error', 'error']);
    expect(f[1]?.message).toBe('container runtime not ready: <nil>');
    expect(f[2]?.message).toBe(
      'container runtime network not ready: NetworkReady=false reason:NetworkPluginNotReady message:Network plugin returns error: cni plugin not initialized',
    );
    expect(checkRuntime(runtimeWith({})).every((x) => x.severity === 'ok')).toBe(true);
  });

  it('says it is not checked without an endpoint', () => {
    expect(checkRuntime(undefined)[0]).toMatchObject({ severity: 'ok', skipped: true });
  });
});

describe('pleg', () => {
  const url = 'http://127.0.0.1:10248/healthz?verbose';
  it('reads the pleg line of a healthy and an unhealthy healthz', () => {
    expect(
      checkPleg(
        url,
        { ok: true, status: 200, body: '[+]ping ok\n[+]pleg ok\nhealthz check passed\n' },
        undefined,
        undefined,
        0,
      )[0],
    ).toMatchObject({
      severity: 'ok',
      message: 'PLEG is healthy ([+]pleg ok)',
    });
    const bad = checkPleg(
      url,
      {
        ok: true,
        status: 500,
        body: '[+]ping ok\n[-]pleg failed: pleg was last seen active 3m0.1s ago; threshold is 3m0s\n[-]syncloop failed: sync loop last ran 200s ago\nhealthz check failed\n',
      },
      undefined,
      undefined,
      0,
    );
    expect(bad[0]).toMatchObject({
      severity: 'error',
      message: 'PLEG is not healthy: pleg was last seen active 3m0.1s ago; threshold is 3m0s',
    });
    expect(bad[1]).toMatchObject({ severity: 'error', subject: 'healthz syncloop' });
  });

  it('says the agent is not running when nothing answers, and a hung agent is an error', () => {
    expect(
      checkPleg(url, { ok: false, reason: 'refused', message: 'ECONNREFUSED' }, undefined, undefined, 0)[0],
    ).toMatchObject({
      severity: 'warn',
      message: expect.stringMatching(/^the agent is not running/),
    });
    expect(
      checkPleg(url, { ok: false, reason: 'timeout', message: 'no answer' }, undefined, undefined, 0)[0]
        ?.severity,
    ).toBe('error');
  });

  it('reads relist latency and last-seen age from the metrics', () => {
    const now = 1_700_000_000_000;
    const metrics = [
      '# TYPE kubelet_pleg_relist_duration_seconds histogram',
      'kubelet_pleg_relist_duration_seconds_bucket{le="+Inf"} 10',
      'kubelet_pleg_relist_duration_seconds_sum 25',
      'kubelet_pleg_relist_duration_seconds_count 10',
      `kubelet_pleg_last_seen_seconds ${now / 1000 - 400}`,
    ].join('\n');
    const f = checkPleg(
      url,
      { ok: true, status: 200, body: 'ok' },
      'http://x/metrics',
      { ok: true, status: 200, body: metrics },
      now,
    );
    expect(f.map((x) => x.severity)).toEqual(['ok', 'warn', 'error']);
    expect(f[1]?.message).toMatch(/mean PLEG relist takes 2\.500 s over 10 relists/);
    expect(f[2]?.message).toBe('PLEG was last seen active 400 s ago; threshold is 180 s');
  });
});

describe('clock skew', () => {
  const server = 'https://10.0.0.1:6443';
  it('tolerates the 1 s resolution of Date and warns above 1 s, errors above 60 s', () => {
    const t = Date.parse('2026-01-01T00:00:10Z');
    const ok = checkClockSkew({
      ok: true,
      server,
      date: new Date(t).toUTCString(),
      sentAtMs: t + 400,
      receivedAtMs: t + 600,
    });
    expect(ok[0]).toMatchObject({ severity: 'ok', message: expect.stringContaining('within 1 s') });
    const behind = checkClockSkew({
      ok: true,
      server,
      date: new Date(t + 5000).toUTCString(),
      sentAtMs: t,
      receivedAtMs: t + 10,
    });
    expect(behind[0]).toMatchObject({ severity: 'warn', message: expect.stringContaining('5.0 s behind') });
    const ahead = checkClockSkew({
      ok: true,
      server,
      date: new Date(t).toUTCString(),
      sentAtMs: t + 120_000,
      receivedAtMs: t + 120_010,
    });
    expect(ahead[0]).toMatchObject({
      severity: 'error',
      message: expect.stringContaining('119.0 s ahead of'),
    });
  });

  it('is an error when the API server is unreachable and a warning without a usable Date', () => {
    expect(
      checkClockSkew({ ok: false, server, reason: 'refused', message: 'ECONNREFUSED' })[0]?.severity,
    ).toBe('error');
    expect(
      checkClockSkew({ ok: true, server, date: 'not a date', sentAtMs: 0, receivedAtMs: 1 })[0]?.severity,
    ).toBe('warn');
    expect(checkClockSkew(undefined)[0]).toMatchObject({ severity: 'ok', skipped: true });
  });
});

describe('certificates', () => {
  const dir = mkdtempSync(join(tmpdir(), 'doctor-certs-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  const cert = (days: number) => {
    const path = join(dir, `c${days}.pem`);
    writeSelfSignedCert(join(dir, `k${days}.pem`), path, days, 'system:node:n1');
    return readFileSync(path, 'utf8');
  };

  it('is ok far from expiry, warns within 30 days, errors when expired or not yet valid', () => {
    const long = cert(365);
    const short = cert(10);
    const now = Date.now();
    const c = (text: string) => [
      { name: 'client certificate (kubeconfig)', path: 'x.pem', pem: { ok: true as const, text } },
    ];
    expect(checkCertificates(c(long), now)[0]?.severity).toBe('ok');
    expect(checkCertificates(c(short), now)[0]).toMatchObject({
      severity: 'warn',
      message: expect.stringMatching(/expires in (9|10) day/),
    });
    expect(checkCertificates(c(short), now + 11 * 86_400_000)[0]).toMatchObject({
      severity: 'error',
      message: expect.stringContaining('expired'),
    });
    expect(checkCertificates(c(long), now - 86_400_000)[0]).toMatchObject({
      severity: 'error',
      message: expect.stringContaining('not valid before'),
    });
  });

  it('reports unreadable and garbage files as errors, and nothing configured as not checked', () => {
    const f = checkCertificates(
      [
        {
          name: 'serving certificate (--tls-cert-file)',
          path: '/nope.pem',
          pem: { ok: false, code: 'ENOENT', message: 'no such file' },
        },
        {
          name: 'serving certificate (--tls-cert-file)',
          path: '/junk.pem',
          pem: { ok: true, text: '-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n' },
        },
        {
          name: 'serving certificate (--tls-cert-file)',
          path: '/empty.pem',
          pem: { ok: true, text: 'hello' },
        },
      ],
      Date.now(),
    );
    expect(f.map((x) => x.severity)).toEqual(['error', 'error', 'error']);
    expect(checkCertificates([], Date.now())[0]).toMatchObject({ severity: 'ok', skipped: true });
  });
});

describe('ports', () => {
  // 127.0.0.1:10248 (inode 111), 0.0.0.0:10250 (inode 222), :::10256 (inode 333), one established line.
  const tcp = `  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode
   0: 0100007F:2808 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 111 1 0000000000000000 100 0 0 10 0
   1: 00000000:280A 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 222 1 0000000000000000 100 0 0 10 0
   2: 0100007F:280A 0100007F:D431 01 00000000:00000000 00:00000000 00000000     0        0 999 1 0000000000000000 20 4 30 10 -1
   garbage line
`;
  const tcp6 = `  sl  local_address                         remote_address                        st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode
   0: 00000000000000000000000000000000:2810 00000000000000000000000000000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 333 1 0000000000000000 100 0 0 10 0
`;
  it('parses listening sockets of /proc/net/tcp and tcp6', () => {
    expect([...parseProcNetTcp(tcp), ...parseProcNetTcp(tcp6)]).toEqual([
      { address: '127.0.0.1', port: 10248, inode: 111 },
      { address: '0.0.0.0', port: 10250, inode: 222 },
      { address: '::', port: 10256, inode: 333 },
    ]);
    expect(parseProcNetTcp('\u0000garbage\n1 2 3')).toEqual([]);
  });

  it('tells the agent holding its ports from another process taking them', () => {
    const list = [...parseProcNetTcp(tcp), ...parseProcNetTcp(tcp6)];
    const agent = { expectedOwner: /nodeagent|reference-agent/, expectedName: 'the agent' };
    const specs = [
      { port: 10250, purpose: '--port, kubelet API', ...agent },
      { port: 10248, purpose: '--healthz-port', ...agent },
      { port: 10255, purpose: 'read-only port (off here)', ...agent },
      {
        port: 10256,
        purpose: 'proxy healthz',
        expectedOwner: /kube-proxy|nodeagent-proxy/,
        expectedName: 'the proxy',
      },
    ];
    const owners = new Map([
      [222, { pid: 42, cmdline: '/usr/bin/kubelet --config /var/lib/kubelet/config.yaml' }],
      [111, { pid: 7, cmdline: 'node /opt/nodeagent/bin/main.js --root-dir /var/lib/kubelet' }],
    ]);
    const f = checkPorts(specs, { ok: true, list }, owners, 1);
    expect(f.map((x) => [x.subject, x.severity])).toEqual([
      ['10250 --port, kubelet API', 'error'],
      ['10248 --healthz-port', 'ok'],
      ['10255 read-only port (off here)', 'ok'],
      ['10256 proxy healthz', 'warn'],
    ]);
    expect(f[0]?.message).toContain('pid 42 (/usr/bin/kubelet');
    expect(f[1]?.message).toContain('held by the agent');
    // A socket of this very process (an agent running in process) counts as the agent's.
    expect(checkPorts(specs.slice(0, 1), { ok: true, list }, owners, 42)[0]?.severity).toBe('ok');
    expect(checkPorts(specs, { ok: false, message: 'EACCES' }, owners, 1)[0]?.severity).toBe('warn');
  });
});

describe('disk', () => {
  const thresholds = parseThresholdConfig({});
  const fs = (bavail: number, ffree: number, files = 1000) =>
    ({ ok: true, bsize: 4096, blocks: 1000, bavail, files, ffree }) as const;
  it("compares statfs with the kubelet's default hard thresholds", () => {
    // nodefs.available<10% → 100 blocks; imagefs.available<15% → 150 blocks; inodesFree<5% → 50.
    const f = checkDisk(
      [
        { kind: 'nodefs', path: '/var/lib/kubelet', stat: fs(90, 500) },
        { kind: 'imagefs', path: '/var/lib/containerd', stat: fs(200, 60) },
      ],
      thresholds,
    );
    expect(f.map((x) => [x.subject, x.severity])).toEqual([
      ['nodefs.available /var/lib/kubelet', 'error'],
      ['nodefs.inodesFree /var/lib/kubelet', 'ok'],
      ['imagefs.available /var/lib/containerd', 'warn'],
      ['imagefs.inodesFree /var/lib/containerd', 'warn'],
    ]);
    expect(f[0]?.message).toContain('DiskPressure');
  });

  it('honours --eviction-hard, a filesystem without inode limit, and statfs errors', () => {
    const custom = parseThresholdConfig({ evictionHard: { 'nodefs.available': '1Mi' } });
    const f = checkDisk(
      [
        { kind: 'nodefs', path: '/r', stat: fs(600, 0, 0) },
        { kind: 'imagefs', path: '/gone', stat: { ok: false, code: 'ENOENT', message: 'no such file' } },
      ],
      custom,
    );
    expect(f.map((x) => x.severity)).toEqual(['ok', 'ok', 'error']);
    expect(f[0]?.message).toContain('threshold 1.0MiB');
    expect(f[1]?.message).toContain('no inode limit');
  });
});

describe('data plane', () => {
  it("folds the proxy doctor's findings in with mapped severities", () => {
    const f = checkDataPlane({
      ok: true,
      modes: ['iptables', 'nftables'],
      findings: [
        {
          id: 'mixed-modes',
          severity: 'error',
          message: 'rules of iptables and nftables',
          remedy: 'clean up',
        },
        { id: 'br-netfilter', severity: 'warning', message: 'br_netfilter not loaded' },
        { id: 'rules-present', severity: 'info', message: 'iptables rules' },
      ],
    });
    expect(f.map((x) => [x.id, x.severity])).toEqual([
      [undefined, 'ok'],
      ['mixed-modes', 'error'],
      ['br-netfilter', 'warn'],
      ['rules-present', 'ok'],
    ]);
    expect(checkDataPlane({ ok: false, message: 'boom' })[0]?.severity).toBe('warn');
  });
});
