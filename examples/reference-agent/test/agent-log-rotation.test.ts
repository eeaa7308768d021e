// Container log rotation wired into the agent (the kubelet's container log manager, flags
// --container-log-max-size/-max-files/-monitor-interval/-max-workers): a chatty container
// on the embedded runtime gets its log rotated (renamed <log>.<YYYYMMDD-hhmmss>, reopened by
// the runtime, older ones gzipped, at most max-files kept), and `kubectl logs -f` through the
// kubelet API follows it across the rotations without losing or repeating a line, while a
// plain `kubectl logs` reads the live file only (as the kubelet's).
import { spawn, spawnSync } from 'node:child_process';
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RunningAgent, runAgent } from '../src/agent.js';
import { EMBEDDED_BUSYBOX_IMAGE } from '../src/embedded-runtime.js';
import { parseFlags } from '../src/flags.js';
import { parseKubeletServerFlags } from '../src/kubelet-server-wiring.js';
import { DEFAULT_LOG_ROTATION, parseLogRotationFlags } from '../src/log-rotation-wiring.js';
import {
  FAST_AGENT_TIMINGS,
  followLineNumbers,
  makePod,
  podNamed,
  shContainer,
  testLogger,
  waitFor,
} from './helpers.js';

describe('log rotation flags (the kubelet names, defaults and validation)', () => {
  it('defaults: 10Mi, 5 files, 10s, 1 worker', () => {
    expect(parseLogRotationFlags({})).toEqual(DEFAULT_LOG_ROTATION);
    expect(DEFAULT_LOG_ROTATION).toEqual({
      containerLogMaxSize: '10Mi',
      containerLogMaxFiles: 5,
      containerLogMonitorIntervalMs: 10_000,
      containerLogMaxWorkers: 1,
    });
    expect(
      parseFlags([
        '--container-log-max-size=1Ki',
        '--container-log-max-files=3',
        '--container-log-monitor-interval=3s',
        '--container-log-max-workers=2',
      ]).logRotation,
    ).toEqual({
      containerLogMaxSize: '1Ki',
      containerLogMaxFiles: 3,
      containerLogMonitorIntervalMs: 3000,
      containerLogMaxWorkers: 2,
    });
  });

  it.each([
    [
      { 'container-log-max-files': '1' },
      'invalid configuration: containerLogMaxFiles (--container-log-max-files) 1 must be greater than 1',
    ],
    [
      { 'container-log-max-workers': '0' },
      'invalid configuration: containerLogMaxWorkers (--container-log-max-workers) 0 must be greater than or equal to 1',
    ],
    [
      { 'container-log-monitor-interval': '2s' },
      'invalid configuration: containerLogMonitorInterval (--container-log-monitor-interval) 2s must be a positive time duration greater than or equal to 3s',
    ],
    [{ 'container-log-max-size': 'ten' }, '--container-log-max-size: '],
  ])('%j is refused', (values, message) => {
    expect(() => parseLogRotationFlags(values)).toThrow(message);
  });
});

const NODE = 'log-rotation-node';
const kubectlMissing = spawnSync('kubectl', ['version', '--client'], { encoding: 'utf8' }).status !== 0;
if (kubectlMissing && process.env.CI !== 'true')
  console.warn('\n*** kubectl not found: skipping the agent log rotation test ***\n');

describe.skipIf(kubectlMissing && process.env.CI !== 'true')('log rotation on the embedded runtime', () => {
  let agent: RunningAgent;
  let logs: string;

  beforeAll(async () => {
    if (kubectlMissing) throw new Error('kubectl is required under CI=true');
    logs = await mkdtemp(join(tmpdir(), 'agent-logrot-'));
    agent = await runAgent({
      nodeName: NODE,
      nodeIp: '127.0.0.1',
      podLogsRoot: logs,
      kubeletServer: parseKubeletServerFlags({ address: '127.0.0.1', port: '0', 'healthz-port': '0' }),
      logRotation: parseLogRotationFlags({
        'container-log-max-size': '1Ki',
        'container-log-max-files': '3',
        'container-log-monitor-interval': '3s',
      }),
      ...FAST_AGENT_TIMINGS,
      logger: testLogger(),
    });
  });
  afterAll(async () => {
    await agent?.stop();
    if (logs !== undefined) await rm(logs, { recursive: true, force: true });
  });

  async function containerLogFiles(): Promise<string[]> {
    const out: string[] = [];
    for (const e of await readdir(logs, { recursive: true, withFileTypes: true })) {
      if (e.isFile()) out.push(e.name);
    }
    return out.sort();
  }

  it('a chatty container is rotated; kubectl logs -f follows across rotations', async () => {
    const LINES = 45;
    const pad = 'x'.repeat(60);
    const script = Array.from({ length: LINES }, (_, i) => `echo line-${i + 1}-${pad}; sleep 0.2`).join('; ');
    await agent.api.create(
      '/api/v1/namespaces/default/pods',
      makePod('chatty', NODE, [shContainer('app', EMBEDDED_BUSYBOX_IMAGE, `${script}; sleep 600`)]),
    );
    await waitFor('chatty Running', () => podNamed(agent, 'chatty')?.status?.phase === 'Running', 20_000);
    const seen = await followLineNumbers(agent.kubeconfigPath, 'chatty', LINES, 30_000);
    // contiguous from where the follow began to the end: nothing lost or repeated at a rotation
    const first = seen[0] ?? 0;
    expect(seen).toEqual(Array.from({ length: LINES - first + 1 }, (_, i) => first + i));
    const files = await containerLogFiles();
    const rotated = files.filter((f) => /^0\.log\.\d{8}-\d{6}(\.gz)?$/.test(f));
    expect(rotated.length).toBeGreaterThanOrEqual(1);
    // at most --container-log-max-files, the live log included
    expect(rotated.length + 1).toBeLessThanOrEqual(3);
    expect(files).toContain('0.log');
    // a plain `kubectl logs` reads the live file only: the lines since the last rotation
    const plain = await new Promise<string>((resolve) => {
      const c = spawn('kubectl', ['logs', 'chatty'], {
        env: { ...process.env, KUBECONFIG: agent.kubeconfigPath },
      });
      let s = '';
      c.stdout.on('data', (d: Buffer) => {
        s += d.toString();
      });
      c.on('close', () => resolve(s));
    });
    // (empty when the rotation manager rotated right after the last line, as the kubelet would)
    const tail =
      plain.trim() === ''
        ? []
        : plain
            .trim()
            .split('\n')
            .map((l) => Number(/^line-(\d+)-/.exec(l)?.[1]));
    if (tail.length > 0) {
      expect(tail.at(-1)).toBe(LINES);
      const start = tail[0] ?? 0;
      expect(tail).toEqual(Array.from({ length: tail.length }, (_, i) => start + i));
    }
    expect(tail.length).toBeLessThan(LINES);
  }, 60_000);
});
