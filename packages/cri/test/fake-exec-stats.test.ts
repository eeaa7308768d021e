import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { hasCriCode, isDeadlineExceeded } from '../src/index.js';
import {
  containerConfig,
  createContainer,
  type FakeHarness,
  runPod,
  startFake,
  until,
} from './fake-fixtures.js';

describe('FakeRuntime ExecSync', () => {
  let h: FakeHarness;
  let pod: string;
  beforeEach(async () => {
    h = await startFake({
      execScripts: [{ cmd: ['cat', '/tmp/ready'], stdout: 'ok\n' }],
      behaviours: [
        {
          match: { name: 'web' },
          behaviour: {
            exec: [
              {
                cmd: ['sh', '-c', 'echo out; echo err >&2; exit 7'],
                stdout: 'out\n',
                stderr: 'err\n',
                exitCode: 7,
              },
              { cmd: /^sleep /, durationMs: 5000 },
            ],
          },
        },
      ],
    });
    pod = await runPod(h);
  });
  afterEach(() => h.close());

  it('answers env and printenv from the container envs, byte for byte', async () => {
    const config = {
      ...containerConfig('envy'),
      envs: [
        { key: 'A', value: Buffer.from('1') },
        { key: 'BIN', value: Buffer.from([0xff, 0x00, 0x41]) },
        { key: 'A', value: Buffer.from('2') },
      ],
    };
    const { containerId } = await h.cri.runtime.createContainer({ podSandboxId: pod, config });
    await h.cri.runtime.startContainer({ containerId });
    const run = (cmd: string[]) => h.cri.runtime.execSync({ containerId, cmd, timeout: 10n });
    expect([...(await run(['printenv', 'BIN'])).stdout]).toEqual([0xff, 0x00, 0x41, 0x0a]);
    expect((await run(['printenv', 'A'])).stdout.toString()).toBe('2\n');
    const missing = await run(['printenv', 'A', 'NOPE']);
    expect([missing.stdout.toString(), missing.exitCode]).toEqual(['2\n', 1]);
    expect([...(await run(['env'])).stdout]).toEqual([
      ...Buffer.from('A=1\nBIN='),
      0xff,
      0x00,
      0x41,
      ...Buffer.from('\nA=2\n'),
    ]);
  });

  it('answers from the container scripts, then the runtime scripts, then the default', async () => {
    const id = await createContainer(h, pod, 'web');
    const run = (cmd: string[]) => h.cri.runtime.execSync({ containerId: id, cmd, timeout: 10n });
    const scripted = await run(['sh', '-c', 'echo out; echo err >&2; exit 7']);
    expect(scripted.stdout.toString()).toBe('out\n');
    expect(scripted.stderr.toString()).toBe('err\n');
    expect(scripted.exitCode).toBe(7);
    expect((await run(['cat', '/tmp/ready'])).stdout.toString()).toBe('ok\n');
    const unscripted = await run(['true']);
    expect(unscripted).toMatchObject({ exitCode: 0 });
    expect(unscripted.stdout.length).toBe(0);
  });

  it('uses a custom default handler for unscripted commands', async () => {
    await h.close();
    h = await startFake({
      defaultExec: (argv) => ({
        stdout: '',
        stderr: `${argv[0]}: not found\n`,
        exitCode: 127,
        durationMs: 0,
      }),
    });
    pod = await runPod(h);
    const id = await createContainer(h, pod, 'x');
    const res = await h.cri.runtime.execSync({ containerId: id, cmd: ['curl'], timeout: 1n });
    expect(res.exitCode).toBe(127);
    expect(res.stderr.toString()).toBe('curl: not found\n');
  });

  it('runs for the scripted duration on the clock and fails with DEADLINE_EXCEEDED past the timeout', async () => {
    const id = await createContainer(h, pod, 'web');
    const slow = h.cri.runtime.execSync({ containerId: id, cmd: ['sleep', '5'], timeout: 10n });
    await until(() => h.clock.pendingTimers() > 0, 'exec timer');
    await h.clock.advance(5000);
    expect((await slow).exitCode).toBe(0);

    const cut = h.cri.runtime.execSync({ containerId: id, cmd: ['sleep', '5'], timeout: 2n });
    const settled = cut.then(
      () => 'resolved',
      (e: unknown) => e,
    );
    await until(() => h.clock.pendingTimers() > 0, 'exec timeout timer');
    await h.clock.advance(2000);
    expect(isDeadlineExceeded(await settled)).toBe(true);
  });

  it('refuses exec in a container that is not running', async () => {
    const id = await createContainer(h, pod, 'idle', undefined, false);
    await expect(h.cri.runtime.execSync({ containerId: id, cmd: ['true'] })).rejects.toSatisfy((e) =>
      hasCriCode(e, 'FAILED_PRECONDITION'),
    );
    await expect(h.cri.runtime.execSync({ containerId: 'nope', cmd: ['true'] })).rejects.toSatisfy((e) =>
      hasCriCode(e, 'NOT_FOUND'),
    );
  });
});

describe('FakeRuntime stats', () => {
  let h: FakeHarness;
  beforeEach(async () => {
    h = await startFake({
      behaviours: [
        { match: { name: 'busy' }, behaviour: { cpuCores: 0.5, memoryWorkingSetBytes: 64 * 1024 * 1024 } },
      ],
    });
  });
  afterEach(() => h.close());

  it('derives CPU time from run time and reports the working set while running', async () => {
    const pod = await runPod(h);
    const busy = await createContainer(h, pod, 'busy');
    const idle = await createContainer(h, pod, 'idle');
    await h.clock.advance(10_000);
    const { stats } = await h.cri.runtime.containerStats({ containerId: busy });
    expect(stats?.attributes?.id).toBe(busy);
    expect(stats?.cpu?.usageCoreNanoSeconds?.value).toBe(5_000_000_000n);
    expect(stats?.cpu?.usageNanoCores?.value).toBe(500_000_000n);
    expect(stats?.memory?.workingSetBytes?.value).toBe(64n * 1024n * 1024n);
    expect(stats?.writableLayer?.usedBytes?.value).toBeGreaterThan(0n);

    h.fake.setContainerUsage(idle, { memoryWorkingSetBytes: 1000 });
    await h.cri.runtime.stopContainer({ containerId: busy, timeout: 0n });
    const list = (await h.cri.runtime.listContainerStats({ filter: { podSandboxId: pod } })).stats;
    expect(list.map((s) => s.attributes?.id)).toEqual([busy, idle]);
    expect(list[0]?.memory?.workingSetBytes?.value).toBe(0n);
    expect(list[1]?.memory?.workingSetBytes?.value).toBe(1000n);

    const pstats = (await h.cri.runtime.podSandboxStats({ podSandboxId: pod })).stats;
    expect(pstats?.attributes?.id).toBe(pod);
    expect(pstats?.linux?.memory?.workingSetBytes?.value).toBe(1000n);
    expect(pstats?.linux?.containers).toHaveLength(2);
    expect(pstats?.linux?.process?.processCount?.value).toBe(1n);
    expect((await h.cri.runtime.listPodSandboxStats({})).stats.map((s) => s.attributes?.id)).toEqual([pod]);
  });

  it('filters ListContainerStats by label and answers NOT_FOUND for unknown IDs', async () => {
    const pod = await runPod(h);
    await createContainer(h, pod, 'a');
    const b = await createContainer(h, pod, 'b');
    const { stats } = await h.cri.runtime.listContainerStats({
      filter: { labelSelector: { container: 'b' } },
    });
    expect(stats.map((s) => s.attributes?.id)).toEqual([b]);
    await expect(h.cri.runtime.containerStats({ containerId: 'nope' })).rejects.toSatisfy((e) =>
      hasCriCode(e, 'NOT_FOUND'),
    );
  });
});
