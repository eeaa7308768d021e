// `nodeagent doctor` end to end in process: against an agent on the embedded defaults
// (embedded API server, fake runtime on its unix socket, healthz), its JSON has every check;
// the real readers against a runtime that accepts connections but never answers (the
// timeout holds) and a healthz port nobody listens on; flags and usage errors.
import { mkdtemp, rm } from 'node:fs/promises';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { KubeConfig } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RunningAgent, runAgent } from '../src/agent.js';
import { runCli } from '../src/cli.js';
import { httpGet, readApiServerDate, readRuntime } from '../src/doctor/readers.js';
import { parseDoctorArgs } from '../src/doctor/run.js';
import { DOCTOR_CHECKS } from '../src/doctor/types.js';
import { FAST_AGENT_TIMINGS, testLogger, writeSelfSignedCert } from './helpers.js';

function sink() {
  const chunks: string[] = [];
  return { write: (t: string) => chunks.push(t), text: () => chunks.join('') };
}

describe('nodeagent doctor against an agent on the embedded defaults', () => {
  let agent: RunningAgent;
  let rootDir: string;
  beforeAll(async () => {
    rootDir = await mkdtemp(join(tmpdir(), 'doctor-root-'));
    // A serving certificate for --tls-cert-file, valid 400 days.
    writeSelfSignedCert(join(rootDir, 'tls.key'), join(rootDir, 'tls.crt'), 400, 'doctor-node');
    agent = await runAgent({
      nodeName: 'doctor-node',
      healthPort: 0,
      ...FAST_AGENT_TIMINGS,
      logger: testLogger(),
    });
  });
  afterAll(async () => {
    await agent?.stop();
    await rm(rootDir, { recursive: true, force: true });
  });

  it('reports every check as JSON, with the runtime, PLEG, API server and certificates really asked', async () => {
    const healthPort = new URL(agent.healthUrl ?? '').port;
    const out = sink();
    const err = sink();
    const code = await runCli(
      [
        'doctor',
        '--json',
        `--kubeconfig=${agent.kubeconfigPath}`,
        `--container-runtime-endpoint=${agent.fakeRuntime?.endpoint}`,
        `--health-port=${healthPort}`,
        `--root-dir=${rootDir}`,
        '--timeout=5s',
        '--node-name=doctor-node',
        `--tls-cert-file=${join(rootDir, 'tls.crt')}`,
        `--tls-private-key-file=${join(rootDir, 'tls.key')}`,
      ],
      { stdout: out, stderr: err, handleSignals: false },
    );
    expect(err.text()).toBe('');
    const report = JSON.parse(out.text());
    expect(report.schemaVersion).toBe(1);
    expect(report.node).toBe('doctor-node');
    expect(Object.keys(report.checks)).toEqual([...DOCTOR_CHECKS]);
    for (const c of DOCTOR_CHECKS) {
      expect(
        report.findings.some((f: { check: string }) => f.check === c),
        c,
      ).toBe(true);
    }
    const by = (check: string) => report.findings.filter((f: { check: string }) => f.check === check);
    // The fake runtime answers Version and reports both conditions true.
    expect(by('runtime').map((f: { severity: string }) => f.severity)).toEqual(['ok', 'ok', 'ok']);
    expect(by('runtime')[0].message).toMatch(/answers \(CRI v1\)/);
    // Its RuntimeConfig answers cgroupfs, the agent's default.
    expect(by('cgroups').find((f: { subject?: string }) => f.subject === 'cgroup driver').severity).toBe(
      'ok',
    );
    // healthz of the agent in this process answers: PLEG healthy.
    expect(by('pleg')[0]).toMatchObject({
      severity: 'ok',
      message: expect.stringMatching(/^PLEG is healthy/),
    });
    // The embedded API server answers with a Date close to this clock.
    expect(by('clock-skew')[0]).toMatchObject({ severity: 'ok', message: expect.stringContaining('within') });
    // The serving certificate file is read and parsed (the embedded kubeconfig has no client certificate).
    expect(by('certificates')).toMatchObject([
      {
        severity: 'ok',
        subject: `serving certificate (--tls-cert-file): ${join(rootDir, 'tls.crt')}`,
        message: expect.stringMatching(/CN=doctor-node\) is valid for 39\d day/),
      },
    ]);
    expect(by('disk').some((f: { subject: string }) => f.subject === `nodefs.available ${rootDir}`)).toBe(
      true,
    );
    expect(code).toBe(report.summary.errors + report.summary.warnings > 0 ? 1 : 0);
  });

  it('prints the text form with a line per finding under each check', async () => {
    const out = sink();
    await runCli(
      ['doctor', `--kubeconfig=${agent.kubeconfigPath}`, `--root-dir=${rootDir}`, '--healthz-port=0'],
      {
        stdout: out,
        stderr: sink(),
        handleSignals: false,
      },
    );
    const text = out.text();
    for (const c of DOCTOR_CHECKS) expect(text).toContain(`\n${c}:\n`);
    expect(text).toMatch(/\(not checked\) no --container-runtime-endpoint/);
    expect(text).toMatch(/\d+ error\(s\), \d+ warning\(s\)/);
  });
});

describe('doctor readers against hostile peers', () => {
  let dir: string;
  let server: net.Server;
  const sockets: net.Socket[] = [];
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'doctor-hung-'));
    // Accepts connections and never says a word: a hung runtime.
    server = net.createServer((s) => sockets.push(s));
    await new Promise<void>((r) => server.listen(join(dir, 'hung.sock'), r));
  });
  afterAll(async () => {
    for (const s of sockets) s.destroy();
    await new Promise((r) => server.close(r));
    await rm(dir, { recursive: true, force: true });
  });

  it('gives up on a runtime that hangs past the timeout', async () => {
    const started = Date.now();
    const r = await readRuntime(`unix://${join(dir, 'hung.sock')}`, 300);
    expect(r.version).toMatchObject({ ok: false, reason: 'timeout' });
    expect(r.status).toBeUndefined();
    expect(Date.now() - started).toBeLessThan(5_000);
  });

  it('gives up on a healthz and an API server that accept the connection and never answer', async () => {
    const silent = net.createServer((s) => sockets.push(s));
    await new Promise<void>((r) => silent.listen(0, '127.0.0.1', r));
    try {
      const port = (silent.address() as net.AddressInfo).port;
      expect(await httpGet(`http://127.0.0.1:${port}/healthz?verbose`, 300)).toMatchObject({
        ok: false,
        reason: 'timeout',
      });
      const kc = new KubeConfig();
      kc.loadFromOptions({
        clusters: [{ name: 'c', server: `http://127.0.0.1:${port}`, skipTLSVerify: true }],
        users: [{ name: 'u' }],
        contexts: [{ name: 'x', cluster: 'c', user: 'u' }],
        currentContext: 'x',
      });
      const dated = await readApiServerDate(kc, 300);
      expect(dated, JSON.stringify(dated)).toMatchObject({ ok: false, reason: 'timeout' });
    } finally {
      for (const s of sockets) s.destroy();
      await new Promise((r) => silent.close(r));
    }
  });

  it('reports a missing runtime socket as unreachable, and a closed port as refused', async () => {
    const r = await readRuntime(`unix://${join(dir, 'none.sock')}`, 1000);
    expect(r.version.ok).toBe(false);
    const port = await new Promise<number>((resolve) => {
      const s = net.createServer();
      s.listen(0, '127.0.0.1', () => {
        const p = (s.address() as net.AddressInfo).port;
        s.close(() => resolve(p));
      });
    });
    expect(await httpGet(`http://127.0.0.1:${port}/healthz`, 1000)).toMatchObject({
      ok: false,
      reason: 'refused',
    });
  });
});

describe('doctor command line', () => {
  it('takes the agent flags and its own, and rejects bad ones', async () => {
    const cmd = parseDoctorArgs([
      '--json',
      '--fail-swap-on=false',
      '--timeout',
      '2s',
      '--container-runtime-endpoint',
      'unix:///run/x.sock',
      '--cgroup-driver=systemd',
    ]);
    if (cmd === 'help') throw new Error('help');
    expect(cmd.settings).toMatchObject({
      json: true,
      failSwapOn: false,
      timeoutMs: 2000,
      runtimeEndpoint: 'unix:///run/x.sock',
    });
    expect(cmd.flags.cgroups.cgroupDriver).toBe('systemd');
    expect(parseDoctorArgs(['--help'])).toBe('help');
    for (const bad of [
      ['--fail-swap-on=maybe'],
      ['--timeout=soon'],
      ['--no-such-flag'],
      ['--eviction-hard=nodefs.available<lots'],
    ]) {
      const err = sink();
      expect(
        await runCli(['doctor', ...bad], { stdout: sink(), stderr: err, handleSignals: false }),
        bad.join(' '),
      ).toBe(2);
      expect(err.text()).toMatch(/^error: /);
    }
  });
});
