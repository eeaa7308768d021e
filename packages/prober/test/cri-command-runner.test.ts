// The exec adapter over @nodeagent/cri's ExecSync, against the fake CRI runtime (a real gRPC
// socket): output is stdout then stderr, the timeout goes in whole seconds, and a command that
// outlives it comes back as DEADLINE_EXCEEDED → ExecTimeoutError → upstream's exec probe message.

import { FakeClock } from '@nodeagent/core/testing';
import { createCriClient } from '@nodeagent/cri';
import { FakeRuntime } from '@nodeagent/cri/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { criCommandRunner, ExecTimeoutError, execProbe } from '../src/index.js';

describe('criCommandRunner', () => {
  const clock = new FakeClock();
  const fake = new FakeRuntime({ clock, images: [{ ref: 'busybox:1.36' }] });
  let cri: ReturnType<typeof createCriClient>;
  let containerId: string;
  beforeAll(async () => {
    await fake.start();
    const endpoint = fake.endpoint;
    cri = createCriClient(endpoint);
    const sandbox = fake.addSandbox({ metadata: { name: 'p', namespace: 'n', uid: 'u', attempt: 0 } });
    containerId = await fake.addContainer(sandbox, {
      metadata: { name: 'c', attempt: 0 },
      image: { image: 'busybox:1.36' },
    });
    fake.addExecScript({ cmd: ['check'], stdout: 'out;', stderr: 'err', exitCode: 3 });
    fake.addExecScript({ cmd: ['sleep', '100'], durationMs: 100_000 });
  });
  afterAll(async () => {
    cri?.close();
    await fake.stop();
  });

  it('returns stdout then stderr and the exit code', async () => {
    const runner = criCommandRunner(cri);
    const r = await runner.runInContainer(containerId, ['check'], 1000, new AbortController().signal);
    expect(Buffer.from(r.output).toString()).toBe('out;err');
    expect(r.exitCode).toBe(3);
    expect(await execProbe(runner, containerId, ['check'], 1000, new AbortController().signal)).toEqual({
      outcome: 'failure',
      output: 'out;err',
    });
  });

  it("a command past its timeout is an ExecTimeoutError, and the probe fails with upstream's message", async () => {
    const runner = criCommandRunner(cri, { runtimeRequestTimeoutMs: 60_000 });
    const pending = runner.runInContainer(containerId, ['sleep', '100'], 2000, new AbortController().signal);
    const settled = pending.then(
      () => undefined,
      (e: unknown) => e,
    );
    await new Promise((r) => setTimeout(r, 100));
    await clock.advance(2000);
    const error = await settled;
    expect(error).toBeInstanceOf(ExecTimeoutError);
    expect((error as Error).message).toBe('command "sleep 100" timed out');
    const call = fake
      .calls('ExecSync')
      .find((c) => String((c.request as { cmd: string[] }).cmd) === 'sleep,100');
    expect(call?.request).toMatchObject({ timeout: 2n });
  });
});
