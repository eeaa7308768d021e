import { existsSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { V1Pod } from '@kubernetes/client-node';
import { afterEach, describe, expect, it } from 'vitest';
import { type Harness, startHarness } from './harness.js';

let h: Harness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

function pod(spec: Partial<NonNullable<V1Pod['spec']>>, name = 'web'): V1Pod {
  return {
    metadata: { name, namespace: 'default', uid: `uid-${name}` },
    spec: { containers: [{ name: 'app', image: 'busybox:1.36', imagePullPolicy: 'IfNotPresent' }], ...spec },
  };
}

async function sync(p: V1Pod) {
  if (h === undefined) throw new Error('no harness');
  const status = await h.manager.getPodStatus(p);
  const result = await h.manager.syncPod(p, status);
  return { result, status: await h.manager.getPodStatus(p) };
}

describe('syncPod on the fake runtime', () => {
  it('creates the sandbox, runs init containers in order, then the app containers', async () => {
    h = await startHarness({
      behaviours: [{ match: { name: /^init/ }, behaviour: { exitAfterMs: 0, exitCode: 0 } }],
    });
    const p = pod({
      initContainers: [
        { name: 'init1', image: 'busybox:1.36', imagePullPolicy: 'IfNotPresent' },
        { name: 'init2', image: 'busybox:1.36', imagePullPolicy: 'IfNotPresent' },
      ],
      containers: [
        { name: 'a', image: 'busybox:1.36', imagePullPolicy: 'IfNotPresent' },
        { name: 'b', image: 'busybox:1.36', imagePullPolicy: 'IfNotPresent' },
      ],
    });
    let out = await sync(p);
    expect(out.result.error()).toBeUndefined();
    expect(h.fake.callNames().filter((n) => n === 'RunPodSandbox')).toHaveLength(1);
    expect(out.status.containerStatuses.map((c) => c.name)).toEqual(['init1']);
    expect(h.manager.computePodStatus(p, out.status).phase).toBe('Pending');
    await h.clock.advance(1);
    out = await sync(p);
    expect(out.status.containerStatuses.map((c) => c.name)).toEqual(['init2', 'init1']);
    await h.clock.advance(1);
    out = await sync(p);
    const running = out.status.containerStatuses
      .filter((c) => c.state === 'running')
      .map((c) => c.name)
      .sort();
    expect(running).toEqual(['a', 'b']);
    const api = h.manager.computePodStatus(p, out.status);
    expect(api.phase).toBe('Running');
    expect(api.conditions?.map((c) => `${c.type}=${c.status}`)).toEqual([
      'PodReadyToStartContainers=True',
      'Initialized=True',
      'Ready=True',
      'ContainersReady=True',
      'PodScheduled=True',
    ]);
    expect(api.podIP).toBe(out.status.ips[0]);
    // a further sync with everything running does nothing
    h.fake.clearCalls();
    await sync(p);
    expect(h.fake.callNames().filter((n) => /^(Run|Create|Start|Stop)/.test(n))).toEqual([]);
  });

  it('a new pod: RunPodSandbox first, one ImageStatus (presence and image user) while the sandbox is created, no more', async () => {
    h = await startHarness({});
    const harness = h;
    harness.fake.setLatency('RunPodSandbox', 300); // on the harness's fake clock
    let done = false;
    const running = sync(pod({})).finally(() => {
      done = true;
    });
    while (!done) {
      await new Promise((r) => setTimeout(r, 5));
      await harness.clock.advance(20);
    }
    const out = await running;
    expect(out.result.error()).toBeUndefined();
    const names = h.fake
      .callNames()
      .filter((n) => /^(RunPodSandbox|PodSandboxStatus|ImageStatus|CreateContainer)$/.test(n));
    // The call log records calls as received: RunPodSandbox first (the critical path, upstream's
    // order), still running (300 ms) when the ImageStatus call arrives (its answer gives both
    // the image's ID and its user); PodSandboxStatus follows RunPodSandbox's answer, then
    // CreateContainer.
    expect(names.slice(0, 4)).toEqual([
      'RunPodSandbox',
      'ImageStatus',
      'PodSandboxStatus',
      'CreateContainer',
    ]);
    expect(names.filter((n) => n === 'ImageStatus')).toHaveLength(1);
  });

  it("runAsNonRoot is checked against the image's user from the one ImageStatus: a numeric non-root user starts, root and a name are refused", async () => {
    h = await startHarness({
      images: [
        { ref: 'app:nonroot', user: '1000:1000' },
        { ref: 'app:root', user: '' },
        { ref: 'app:named', user: 'nobody' },
      ],
    });
    const withImage = (image: string, name: string) =>
      pod(
        {
          securityContext: { runAsNonRoot: true },
          containers: [{ name: 'app', image, imagePullPolicy: 'IfNotPresent' }],
        },
        name,
      );
    const started = await sync(withImage('app:nonroot', 'ok'));
    expect(started.result.error()).toBeUndefined();
    expect(started.status.containerStatuses.map((c) => c.state)).toEqual(['running']);
    const root = await sync(withImage('app:root', 'root'));
    expect(root.result.results.find((r) => r.action === 'StartContainer')?.error).toMatchObject({
      reason: 'CreateContainerConfigError',
      message: expect.stringContaining('container has runAsNonRoot and image will run as root'),
    });
    const named = await sync(withImage('app:named', 'named'));
    expect(named.result.results.find((r) => r.action === 'StartContainer')?.error).toMatchObject({
      reason: 'CreateContainerConfigError',
      message: expect.stringContaining('image has non-numeric user (nobody)'),
    });
  });

  it('the result names the sandbox and containers it made (createdIds), for a relist that reads them at once', async () => {
    h = await startHarness();
    const p = pod({
      containers: [
        { name: 'a', image: 'busybox:1.36', imagePullPolicy: 'IfNotPresent' },
        { name: 'b', image: 'busybox:1.36', imagePullPolicy: 'IfNotPresent' },
      ],
    });
    const { result, status } = await sync(p);
    expect(result.createdIds()).toEqual({
      sandboxIds: status.sandboxStatuses.map((s) => s.id),
      containerIds: ['a', 'b'].map((n) => status.containerStatuses.find((c) => c.name === n)?.id),
    });
    expect(result.createdIds().sandboxIds).toHaveLength(1);
    // A sync with nothing to do makes nothing.
    expect((await sync(p)).result.createdIds()).toEqual({ sandboxIds: [], containerIds: [] });
  });

  it('writes the sandbox log directory and container log paths under podLogsRoot', async () => {
    h = await startHarness();
    const p = pod({});
    await sync(p);
    const sandboxCall = h.fake.calls('RunPodSandbox')[0]?.request as { config: { logDirectory: string } };
    expect(sandboxCall.config.logDirectory).toBe(join(h.dir, 'logs', 'default_web_uid-web'));
    expect(existsSync(join(h.dir, 'logs', 'default_web_uid-web', 'app'))).toBe(true);
    const createCall = h.fake.calls('CreateContainer')[0]?.request as { config: { logPath: string } };
    expect(createCall.config.logPath).toBe('app/0.log');
    // termination message file created under podsRoot
    expect(readdirSync(join(h.dir, 'pods', 'uid-web', 'containers', 'app'))).toHaveLength(1);
  });

  it('CrashLoopBackOff: restarts at 0, +10 s, +20 s, +40 s with waiting reason CrashLoopBackOff between', async () => {
    h = await startHarness({
      behaviours: [{ match: { name: 'app' }, behaviour: { crashOnStart: true, exitCode: 2 } }],
    });
    const p = pod({});
    const starts: number[] = [];
    const t0 = h.clock.now();
    // sync every second for 75 s, recording when a new container instance started
    for (let second = 0; second <= 75; second++) {
      const before = h.fake.calls('StartContainer').length;
      await sync(p);
      if (h.fake.calls('StartContainer').length > before) starts.push((h.clock.now() - t0) / 1000);
      await h.clock.advance(1000);
    }
    expect(starts).toEqual([0, 1, 11, 31, 71]);
    const status = await h.manager.getPodStatus(p);
    expect(status.containerStatuses[0]?.restartCount).toBe(4);
    await sync(p);
    const api = h.manager.computePodStatus(p, await h.manager.getPodStatus(p));
    const cs = api.containerStatuses?.[0];
    expect(cs?.state?.waiting?.reason).toBe('CrashLoopBackOff');
    expect(cs?.state?.waiting?.message).toBe(
      'back-off 1m20s restarting failed container=app pod=web_default(uid-web)',
    );
    expect(cs?.lastState?.terminated).toMatchObject({ exitCode: 2, reason: 'Error' });
    expect(cs?.restartCount).toBe(4);
    expect(api.phase).toBe('Running');
    expect(api.conditions?.find((c) => c.type === 'Ready')).toMatchObject({
      status: 'False',
      reason: 'ContainersNotReady',
      message: 'containers with unready status: [app]',
    });
  });

  it('restartPolicy Never: a failed container stays dead and the pod is Failed', async () => {
    h = await startHarness({
      behaviours: [{ match: { name: 'app' }, behaviour: { crashOnStart: true, exitCode: 1 } }],
    });
    const p = pod({ restartPolicy: 'Never' });
    await sync(p);
    await h.clock.advance(60_000);
    const { status } = await sync(p);
    expect(h.fake.calls('StartContainer')).toHaveLength(1);
    expect(h.manager.computePodStatus(p, status).phase).toBe('Failed');
    expect(h.fake.calls('StopPodSandbox').length).toBeGreaterThanOrEqual(1);
  });

  it('restartPolicy OnFailure: exit 0 completes the pod (Succeeded)', async () => {
    h = await startHarness({
      behaviours: [{ match: { name: 'app' }, behaviour: { crashOnStart: true, exitCode: 0 } }],
    });
    const p = pod({ restartPolicy: 'OnFailure' });
    await sync(p);
    const { status } = await sync(p);
    expect(h.fake.calls('StartContainer')).toHaveLength(1);
    const api = h.manager.computePodStatus(p, status);
    expect(api.phase).toBe('Succeeded');
    expect(api.containerStatuses?.[0]?.state?.terminated?.reason).toBe('Completed');
  });

  it('a changed container image restarts it with a higher restart count', async () => {
    h = await startHarness({ images: [{ ref: 'busybox:1.36' }, { ref: 'busybox:1.37' }] });
    const p = pod({});
    await sync(p);
    const changed = pod({
      containers: [{ name: 'app', image: 'busybox:1.37', imagePullPolicy: 'IfNotPresent' }],
    });
    const { status } = await sync(changed);
    expect(h.fake.calls('StopContainer')).toHaveLength(1);
    const running = status.containerStatuses.find((c) => c.state === 'running');
    expect(running?.restartCount).toBe(1);
    const create = h.fake.calls('CreateContainer').at(-1)?.request as {
      config: { image: { userSpecifiedImage: string } };
    };
    expect(create.config.image.userSpecifiedImage).toBe('busybox:1.37');
  });

  it('adoption: a new manager over existing containers creates nothing and keeps counting restarts', async () => {
    h = await startHarness({ behaviours: [{ match: { name: 'app' }, behaviour: { crashOnStart: true } }] });
    const p = pod({
      containers: [
        { name: 'app', image: 'busybox:1.36', imagePullPolicy: 'IfNotPresent' },
        { name: 'side', image: 'busybox:1.36', imagePullPolicy: 'IfNotPresent' },
      ],
    });
    await sync(p);
    await sync(p); // app restarted once (restartCount 1)
    const restarted = h.newManager();
    h.fake.clearCalls();
    await h.clock.advance(20_000);
    const status = await restarted.getPodStatus(p);
    await restarted.syncPod(p, status);
    expect(h.fake.callNames().filter((n) => n === 'RunPodSandbox')).toEqual([]);
    const creates = h.fake
      .calls('CreateContainer')
      .map((c) => (c.request as { config: { metadata: { name: string; attempt: number } } }).config.metadata);
    expect(creates).toEqual([{ name: 'app', attempt: 2 }]);
    const after = await restarted.getPodStatus(p);
    expect(after.sandboxStatuses).toHaveLength(1);
    expect(after.containerStatuses.filter((c) => c.name === 'side')).toHaveLength(1);
  });

  it('restart count survives losing the runtime records: taken from the log directory', async () => {
    h = await startHarness();
    const p = pod({});
    await sync(p);
    const status = await h.manager.getPodStatus(p);
    const id = status.containerStatuses[0]?.id ?? '';
    await h.cri.runtime.stopContainer({ containerId: id, timeout: 0n });
    await h.cri.runtime.removeContainer({ containerId: id });
    // the fake writes no log file without log lines; the kubelet's log file is what counts
    writeFileSync(join(h.dir, 'logs', 'default_web_uid-web', 'app', '0.log'), '');
    await sync(p);
    const create = h.fake.calls('CreateContainer').at(-1)?.request as {
      config: { metadata: { attempt: number } };
    };
    expect(create.config.metadata.attempt).toBe(1);
  });

  it('sidecars start in order before the app containers, and an ordinary init container between them waits for completion', async () => {
    h = await startHarness({ behaviours: [{ match: { name: 'init' }, behaviour: { exitAfterMs: 0 } }] });
    const c = (name: string, restartPolicy?: string) => ({
      name,
      image: 'busybox:1.36',
      imagePullPolicy: 'IfNotPresent',
      ...(restartPolicy ? { restartPolicy } : {}),
    });
    const p = pod({
      restartPolicy: 'Never',
      initContainers: [c('s1', 'Always'), c('init'), c('s2', 'Always')],
      containers: [c('app')],
    });
    const perSync: string[][] = [];
    for (let i = 0; i < 5; i++) {
      const before = h.fake.calls('CreateContainer').length;
      await sync(p);
      await h.clock.advance(1);
      perSync.push(
        h.fake
          .calls('CreateContainer')
          .slice(before)
          .map((x) => (x.request as { config: { metadata: { name: string } } }).config.metadata.name),
      );
    }
    expect(perSync).toEqual([['s1'], ['init'], ['s2'], ['app'], []]);
    // a crashed sidecar is restarted even though the pod is restartPolicy Never
    const status = await h.manager.getPodStatus(p);
    const s1 = status.containerStatuses.find((x) => x.name === 's1');
    h.fake.killContainer(s1?.id ?? '', { exitCode: 1 });
    await sync(p);
    const creates = h.fake
      .calls('CreateContainer')
      .map((x) => (x.request as { config: { metadata: { name: string; attempt: number } } }).config.metadata);
    expect(creates.at(-1)).toEqual({ name: 's1', attempt: 1 });
  });

  it('termination message: the file the container wrote, or the log tail with FallbackToLogsOnError', async () => {
    h = await startHarness({
      behaviours: [
        {
          match: { name: 'logs' },
          behaviour: { logLines: ['starting', 'fatal: no config'], exitAfterMs: 10, exitCode: 1 },
        },
      ],
    });
    const p = pod({
      containers: [
        { name: 'file', image: 'busybox:1.36', imagePullPolicy: 'IfNotPresent' },
        {
          name: 'logs',
          image: 'busybox:1.36',
          imagePullPolicy: 'IfNotPresent',
          terminationMessagePolicy: 'FallbackToLogsOnError',
        },
      ],
    });
    await sync(p);
    const create = h.fake
      .calls('CreateContainer')
      .find((c) => (c.request as { config: { metadata: { name: string } } }).config.metadata.name === 'file');
    if (create === undefined) throw new Error('no CreateContainer for "file"');
    const mounts = (create.request as { config: { mounts: { containerPath: string; hostPath: string }[] } })
      .config.mounts;
    const file = mounts.find((m) => m.containerPath === '/dev/termination-log')?.hostPath ?? '';
    writeFileSync(file, 'bye from file');
    const status = await h.manager.getPodStatus(p);
    h.fake.killContainer(status.containerStatuses.find((c) => c.name === 'file')?.id ?? '', {
      exitCode: 0,
      reason: 'Completed',
    });
    await h.clock.advance(50);
    const api = h.manager.computePodStatus(p, await h.manager.getPodStatus(p));
    const byName = Object.fromEntries(
      (api.containerStatuses ?? []).map((c) => [c.name, c.state?.terminated?.message]),
    );
    expect(byName).toEqual({ file: 'bye from file', logs: 'starting\nfatal: no config\n' });
  });

  it('a failing postStart hook kills the container and reports PostStartHookError', async () => {
    h = await startHarness({ execScripts: [{ cmd: ['setup'], exitCode: 7, stderr: 'nope' }] });
    const p = pod({
      containers: [
        {
          name: 'app',
          image: 'busybox:1.36',
          imagePullPolicy: 'IfNotPresent',
          lifecycle: { postStart: { exec: { command: ['setup'] } } },
        },
      ],
    });
    const { result, status } = await sync(p);
    const step = result.results.find((r) => r.action === 'StartContainer');
    expect(step?.error?.reason).toBe('PostStartHookError');
    expect(step?.error?.message).toBe("command 'setup' exited with 7: nope");
    expect(status.containerStatuses[0]?.state).toBe('exited');
    expect(h.manager.computePodStatus(p, status).containerStatuses?.[0]?.state?.waiting?.reason).toBe(
      'PostStartHookError',
    );
  });

  it('a dead sandbox is replaced (attempt + 1) and its containers started again', async () => {
    h = await startHarness();
    const p = pod({});
    const first = await sync(p);
    const sandboxId = first.status.sandboxStatuses[0]?.id ?? '';
    await h.cri.runtime.stopPodSandbox({ podSandboxId: sandboxId });
    h.fake.clearCalls();
    const { status } = await sync(p);
    const run = h.fake.calls('RunPodSandbox')[0]?.request as { config: { metadata: { attempt: number } } };
    expect(run.config.metadata.attempt).toBe(1);
    expect(status.sandboxStatuses[0]?.metadata?.attempt).toBe(1);
    const running = status.containerStatuses.filter((c) => c.state === 'running');
    expect(running.map((c) => c.restartCount)).toEqual([1]);
  });

  it('runtime and config failures become CreateContainerError / RunContainerError / CreateContainerConfigError', async () => {
    h = await startHarness();
    const p = pod({});
    h.fake.injectError('CreateContainer', { code: 2, message: 'disk full' });
    let { result, status } = await sync(p);
    let step = result.results.find((r) => r.action === 'StartContainer');
    expect(step?.error?.reason).toBe('CreateContainerError');
    expect(step?.error?.message).toContain('disk full');
    expect(h.manager.computePodStatus(p, status).containerStatuses?.[0]?.state?.waiting?.reason).toBe(
      'CreateContainerError',
    );
    // Nothing was created: no runtime ID on the failed step.
    expect(step?.runtimeId).toBeUndefined();
    expect(result.createdIds().containerIds).toEqual([]);
    h.fake.injectError('StartContainer', { code: 2, message: 'exec format error' });
    ({ result, status } = await sync(p));
    step = result.results.find((r) => r.action === 'StartContainer');
    expect(step?.error?.reason).toBe('RunContainerError');
    // The container exists though it did not start: its ID is on the step.
    expect(step?.runtimeId).toBe(status.containerStatuses.find((c) => c.name === 'app')?.id);
    expect(step?.runtimeId).toBeDefined();
    const bad = pod(
      {
        containers: [
          {
            name: 'app',
            image: 'busybox:1.36',
            imagePullPolicy: 'IfNotPresent',
            volumeMounts: [{ name: 'nope', mountPath: '/x' }],
          },
        ],
      },
      'bad',
    );
    ({ result } = await sync(bad));
    step = result.results.find((r) => r.action === 'StartContainer');
    expect(step?.error).toMatchObject({
      reason: 'CreateContainerConfigError',
      message: 'cannot find volume "nope" to mount into container "app"',
    });
    // nothing else was lost: the first pod is untouched by the second one's bad spec
    await sync(p);
    expect((await h.manager.getPodStatus(p)).containerStatuses.some((c) => c.state === 'running')).toBe(true);
  });
});
