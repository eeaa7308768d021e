import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ContainerState, hasCriCode } from '../src/index.js';
import {
  BUSYBOX,
  containerConfig,
  createContainer,
  type FakeHarness,
  runPod,
  startFake,
  until,
} from './fake-fixtures.js';

const ns = (ms: number): bigint => BigInt(ms) * 1_000_000n;

describe('FakeRuntime containers', () => {
  let h: FakeHarness;
  let pod: string;
  beforeEach(async () => {
    h = await startFake();
    pod = await runPod(h, 'main');
  });
  afterEach(() => h.close());

  const status = async (containerId: string) => {
    const s = (await h.cri.runtime.containerStatus({ containerId })).status;
    if (s === undefined) throw new Error('no status');
    return s;
  };

  it('goes CREATED → RUNNING → EXITED → removed with clock timestamps', async () => {
    const t0 = h.clock.now();
    const id = await createContainer(h, pod, 'app', ['sleep', '1000'], false);
    let s = await status(id);
    expect(s.state).toBe(ContainerState.CONTAINER_CREATED);
    expect(s.createdAt / 1_000_000n).toBe(BigInt(t0));
    expect(s.startedAt).toBe(0n);
    expect(s.image?.image).toBe(BUSYBOX);
    expect(s.imageRef).toMatch(/^sha256:[0-9a-f]{64}$/);
    expect(s.logPath).toBe('/var/log/pods/default_main_uid-main/app/0.log');
    expect(s.labels).toEqual({ container: 'app' });

    await h.clock.advance(1000);
    await h.cri.runtime.startContainer({ containerId: id });
    s = await status(id);
    expect(s.state).toBe(ContainerState.CONTAINER_RUNNING);
    expect(s.startedAt / 1_000_000n).toBe(BigInt(t0 + 1000));

    await h.clock.advance(1000);
    await h.cri.runtime.stopContainer({ containerId: id, timeout: 10n });
    s = await status(id);
    expect(s.state).toBe(ContainerState.CONTAINER_EXITED);
    expect(s.exitCode).toBe(143);
    expect(s.reason).toBe('Error');
    expect(s.finishedAt / 1_000_000n).toBe(BigInt(t0 + 2000));

    await h.cri.runtime.removeContainer({ containerId: id });
    await expect(status(id)).rejects.toSatisfy((e) => hasCriCode(e, 'NOT_FOUND'));
  });

  it('exits by itself after exitAfterMs with the scripted code and reason', async () => {
    h.fake.addBehaviour({ name: 'job' }, { exitAfterMs: 5000, exitCode: 3 });
    h.fake.addBehaviour({ name: 'ok' }, { exitAfterMs: 100 });
    h.fake.addBehaviour(
      { image: /busybox/, command: ['oom'] },
      { exitAfterMs: 200, exitCode: 137, reason: 'OOMKilled' },
    );
    const job = await createContainer(h, pod, 'job');
    const ok = await createContainer(h, pod, 'ok');
    const oom = await createContainer(h, pod, 'hog', ['oom']);
    const started = h.clock.now();
    await h.clock.advance(4999);
    expect((await status(job)).state).toBe(ContainerState.CONTAINER_RUNNING);
    expect(await status(ok)).toMatchObject({
      state: ContainerState.CONTAINER_EXITED,
      exitCode: 0,
      reason: 'Completed',
    });
    expect(await status(oom)).toMatchObject({ exitCode: 137, reason: 'OOMKilled' });
    await h.clock.advance(1);
    const s = await status(job);
    expect(s).toMatchObject({ state: ContainerState.CONTAINER_EXITED, exitCode: 3, reason: 'Error' });
    expect(s.finishedAt).toBe(ns(started + 5000));
  });

  it('crashOnStart: StartContainer succeeds and the container is already EXITED', async () => {
    h.fake.addBehaviour({ name: 'crash' }, { crashOnStart: true });
    const id = await createContainer(h, pod, 'crash');
    const s = await status(id);
    expect(s).toMatchObject({ state: ContainerState.CONTAINER_EXITED, exitCode: 1, reason: 'Error' });
    expect(s.startedAt).toBeGreaterThan(0n);
    expect(s.finishedAt).toBeGreaterThanOrEqual(s.startedAt);
  });

  it('startError: StartContainer fails and the container is EXITED with 128 StartError', async () => {
    h.fake.addBehaviour({ name: 'bad' }, { startError: 'exec: "nope": executable file not found in $PATH' });
    const id = await createContainer(h, pod, 'bad', ['nope'], false);
    await expect(h.cri.runtime.startContainer({ containerId: id })).rejects.toSatisfy(
      (e) => hasCriCode(e, 'UNKNOWN') && e.details.includes('executable file not found'),
    );
    expect(await status(id)).toMatchObject({
      state: ContainerState.CONTAINER_EXITED,
      exitCode: 128,
      reason: 'StartError',
    });
  });

  it('slow start: StartContainer returns only after startDelayMs on the clock', async () => {
    h.fake.addBehaviour({ name: 'slow' }, { startDelayMs: 3000 });
    const id = await createContainer(h, pod, 'slow', undefined, false);
    let done = false;
    const call = h.cri.runtime.startContainer({ containerId: id }).then(() => {
      done = true;
    });
    await until(() => h.clock.pendingTimers() > 0, 'start delay timer');
    expect((await status(id)).state).toBe(ContainerState.CONTAINER_CREATED);
    await h.clock.advance(2999);
    expect(done).toBe(false);
    await h.clock.advance(1);
    await call;
    expect((await status(id)).state).toBe(ContainerState.CONTAINER_RUNNING);
  });

  it('ignoreSigterm: StopContainer returns only at its timeout, with 137', async () => {
    h.fake.addBehaviour({ command: /trap "" TERM/ }, { ignoreSigterm: true });
    const id = await createContainer(h, pod, 'stubborn', ['sh', '-c', 'trap "" TERM; sleep 1000']);
    const t0 = h.clock.now();
    let done = false;
    const call = h.cri.runtime.stopContainer({ containerId: id, timeout: 30n }).then(() => {
      done = true;
    });
    await until(() => h.clock.pendingTimers() > 0, 'stop timeout timer');
    await h.clock.advance(29_999);
    expect(done).toBe(false);
    expect((await status(id)).state).toBe(ContainerState.CONTAINER_RUNNING);
    await h.clock.advance(1);
    await call;
    const s = await status(id);
    expect(s).toMatchObject({ state: ContainerState.CONTAINER_EXITED, exitCode: 137, reason: 'Error' });
    expect(s.finishedAt).toBe(ns(t0 + 30_000));
  });

  it('sigtermDelayMs shorter than the timeout exits with sigtermExitCode; timeout 0 kills at once', async () => {
    h.fake.addBehaviour({ name: 'graceful' }, { sigtermDelayMs: 2000, sigtermExitCode: 0 });
    const graceful = await createContainer(h, pod, 'graceful');
    const call = h.cri.runtime.stopContainer({ containerId: graceful, timeout: 30n });
    await until(() => h.clock.pendingTimers() >= 2, 'sigterm + timeout timers');
    await h.clock.advance(2000);
    await call;
    expect(await status(graceful)).toMatchObject({ exitCode: 0, reason: 'Completed' });
    expect(h.clock.pendingTimers()).toBe(0);

    const killed = await createContainer(h, pod, 'graceful-2');
    await h.cri.runtime.stopContainer({ containerId: killed, timeout: 0n });
    expect(await status(killed)).toMatchObject({ exitCode: 137 });
  });

  it('stop is idempotent (created, exited, unknown) and remove kills a running container', async () => {
    const created = await createContainer(h, pod, 'c1', undefined, false);
    await h.cri.runtime.stopContainer({ containerId: created, timeout: 1n });
    expect((await status(created)).state).toBe(ContainerState.CONTAINER_CREATED);
    const running = await createContainer(h, pod, 'c2');
    await h.cri.runtime.stopContainer({ containerId: running, timeout: 1n });
    await h.cri.runtime.stopContainer({ containerId: running, timeout: 1n });
    await h.cri.runtime.stopContainer({ containerId: 'a'.repeat(64), timeout: 1n });
    await h.cri.runtime.removeContainer({ containerId: 'a'.repeat(64) });

    const live = await createContainer(h, pod, 'c3');
    h.fake.clearCalls();
    await h.cri.runtime.removeContainer({ containerId: live });
    await h.cri.runtime.removeContainer({ containerId: live });
    expect(h.fake.callNames()).toEqual(['RemoveContainer', 'RemoveContainer']);
    expect(h.fake.containers().map((c) => c.id)).not.toContain(live);
  });

  it('refuses to start twice, to create without an image on the node, or in a stopped sandbox', async () => {
    const id = await createContainer(h, pod, 'once');
    await expect(h.cri.runtime.startContainer({ containerId: id })).rejects.toSatisfy((e) =>
      hasCriCode(e, 'FAILED_PRECONDITION'),
    );
    await expect(
      h.cri.runtime.createContainer({
        podSandboxId: pod,
        config: { ...containerConfig('x'), image: { image: 'nginx:1.27' } },
      }),
    ).rejects.toSatisfy((e) => hasCriCode(e, 'NOT_FOUND') && e.details.includes('nginx:1.27'));
    await expect(
      h.cri.runtime.createContainer({ podSandboxId: pod, config: containerConfig('once') }),
    ).rejects.toSatisfy((e) => hasCriCode(e, 'ALREADY_EXISTS'));
    await h.cri.runtime.stopPodSandbox({ podSandboxId: pod });
    await expect(
      h.cri.runtime.createContainer({ podSandboxId: pod, config: containerConfig('late') }),
    ).rejects.toSatisfy((e) => hasCriCode(e, 'FAILED_PRECONDITION'));
    await expect(
      h.cri.runtime.createContainer({ podSandboxId: 'e'.repeat(64), config: containerConfig('y') }),
    ).rejects.toSatisfy((e) => hasCriCode(e, 'NOT_FOUND'));
  });

  it('filters ListContainers by id prefix, sandbox, state and labels', async () => {
    const other = await runPod(h);
    const a = await createContainer(h, pod, 'a');
    const b = await createContainer(h, pod, 'b', undefined, false);
    const c = await createContainer(h, other, 'c');
    const ids = async (filter: Parameters<typeof h.cri.runtime.listContainers>[0]) =>
      (await h.cri.runtime.listContainers(filter)).containers.map((x) => x.id);
    expect(await ids({})).toEqual([a, b, c]);
    expect(await ids({ filter: { id: a.slice(0, 10) } })).toEqual([a]);
    expect(await ids({ filter: { podSandboxId: other } })).toEqual([c]);
    expect(await ids({ filter: { podSandboxId: pod.slice(0, 10) } })).toEqual([a, b]);
    expect(await ids({ filter: { state: { state: ContainerState.CONTAINER_CREATED } } })).toEqual([b]);
    expect(
      await ids({ filter: { state: { state: ContainerState.CONTAINER_RUNNING }, podSandboxId: pod } }),
    ).toEqual([a]);
    expect(await ids({ filter: { labelSelector: { container: 'c' } } })).toEqual([c]);
    const item = (await h.cri.runtime.listContainers({ filter: { id: a } })).containers[0];
    expect(item).toMatchObject({ podSandboxId: pod, metadata: { name: 'a', attempt: 0 } });
  });

  it('killContainer simulates an outside kill such as the OOM killer', async () => {
    const id = await createContainer(h, pod, 'victim');
    h.fake.killContainer(id, { reason: 'OOMKilled' });
    expect(await status(id)).toMatchObject({
      state: ContainerState.CONTAINER_EXITED,
      exitCode: 137,
      reason: 'OOMKilled',
    });
  });

  it('reflects UpdateContainerResources in the status and reopens logs only of running containers', async () => {
    const id = await createContainer(h, pod, 'resized');
    await h.cri.runtime.updateContainerResources({
      containerId: id,
      linux: { memoryLimitInBytes: 256n * 1024n * 1024n, cpuQuota: 50_000n },
    });
    expect((await status(id)).resources?.linux).toMatchObject({
      memoryLimitInBytes: 256n * 1024n * 1024n,
      cpuQuota: 50_000n,
    });
    await h.cri.runtime.reopenContainerLog({ containerId: id });
    await h.cri.runtime.stopContainer({ containerId: id, timeout: 0n });
    await expect(h.cri.runtime.reopenContainerLog({ containerId: id })).rejects.toSatisfy((e) =>
      hasCriCode(e, 'FAILED_PRECONDITION'),
    );
  });
});
