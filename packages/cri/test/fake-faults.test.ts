import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { status } from '@grpc/grpc-js';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ContainerState, hasCriCode, isUnavailable, isUnimplemented } from '../src/index.js';
import { FakeRuntime, FakeRuntimeConfigError, FakeRuntimeError } from '../src/testing.js';
import {
  containerConfig,
  createContainer,
  type FakeHarness,
  podConfig,
  runPod,
  startFake,
  until,
} from './fake-fixtures.js';

describe('FakeRuntime fault injection and call log', () => {
  let h: FakeHarness;
  beforeEach(async () => {
    h = await startFake();
  });
  afterEach(() => h.close());

  it('answers injected errors FIFO per method, then behaves normally', async () => {
    h.fake.injectError('Version', new FakeRuntimeError(status.UNAVAILABLE, 'first'));
    h.fake.injectError('Version', { code: status.INTERNAL, message: 'second' });
    h.fake.injectError('Version', new Error('third'));
    await expect(h.cri.runtime.version({})).rejects.toSatisfy(
      (e) => isUnavailable(e) && e.details === 'first',
    );
    await expect(h.cri.runtime.version({})).rejects.toSatisfy(
      (e) => hasCriCode(e, 'INTERNAL') && e.details === 'second',
    );
    await expect(h.cri.runtime.version({})).rejects.toSatisfy(
      (e) => hasCriCode(e, 'UNKNOWN') && e.details === 'third',
    );
    expect(await h.cri.runtime.version({})).toMatchObject({
      runtimeName: 'fakeRuntime',
      runtimeApiVersion: 'v1',
    });
  });

  it('an injected error leaves the state untouched', async () => {
    h.fake.injectError('RunPodSandbox', { code: status.RESOURCE_EXHAUSTED, message: 'no IPs' });
    await expect(runPod(h)).rejects.toSatisfy((e) => hasCriCode(e, 'RESOURCE_EXHAUSTED'));
    expect(h.fake.sandboxes()).toEqual([]);
  });

  it('delays a method by its latency on the fake clock', async () => {
    h.fake.setLatency('ListContainers', 1500);
    let done = false;
    const call = h.cri.runtime.listContainers({}).then(() => {
      done = true;
    });
    await until(() => h.clock.pendingTimers() > 0, 'latency timer');
    await h.clock.advance(1499);
    expect(done).toBe(false);
    await h.clock.advance(1);
    await call;
    h.fake.setLatency('ListContainers', 0);
    await h.cri.runtime.listContainers({});
  });

  it('logs every call with its request and arrival time', async () => {
    const pod = await runPod(h, 'logged');
    await createContainer(h, pod, 'c');
    expect(h.fake.callNames()).toEqual(['RunPodSandbox', 'CreateContainer', 'StartContainer']);
    const [run] = h.fake.calls('RunPodSandbox');
    expect(run?.atMs).toBe(h.clock.now());
    expect(run?.request).toMatchObject({ config: { metadata: { name: 'logged' } } });
    h.fake.clearCalls();
    expect(h.fake.calls()).toEqual([]);
  });

  it('answers UNIMPLEMENTED for what it does not model', async () => {
    await expect(h.cri.runtime.attach({ containerId: 'x', stdout: true })).rejects.toSatisfy(isUnimplemented);
    await expect(h.cri.runtime.checkpointContainer({ containerId: 'x' })).rejects.toSatisfy(isUnimplemented);
    await expect(h.cri.runtime.listMetricDescriptors({})).rejects.toSatisfy(isUnimplemented);
  });

  it('reports settable runtime conditions and its config', async () => {
    h.fake.setCondition('NetworkReady', false, 'NetworkPluginNotReady', 'cni config uninitialized');
    const res = await h.cri.runtime.status({ verbose: true });
    expect(res.status?.conditions).toEqual([
      { type: 'RuntimeReady', status: true, reason: '', message: '' },
      {
        type: 'NetworkReady',
        status: false,
        reason: 'NetworkPluginNotReady',
        message: 'cni config uninitialized',
      },
    ]);
    expect(JSON.parse(res.info.config ?? '{}')).toMatchObject({ podCidr: '10.88.0.0/16' });
    expect((await h.cri.runtime.runtimeConfig({})).linux?.cgroupDriver).toBe(1);
  });

  it('serves the streaming lists in chunks, or UNIMPLEMENTED when disabled', async () => {
    await h.close();
    h = await startFake({ streamChunkSize: 2 });
    const pod = await runPod(h);
    for (const name of ['a', 'b', 'c']) await createContainer(h, pod, name, undefined, false);
    const chunks: number[] = [];
    for await (const chunk of h.cri.runtime.streamContainers({})) chunks.push(chunk.containers.length);
    expect(chunks).toEqual([2, 1]);

    await h.close();
    h = await startFake({ streamingLists: false });
    const fallback: number[] = [];
    for await (const chunk of h.cri.image.streamImages({})) fallback.push(chunk.images.length);
    expect(fallback).toEqual([1]);
    expect(h.fake.callNames()).toEqual(['StreamImages', 'ListImages']);
  });

  it('keeps its state across stop/start on the same socket, like a restarted runtime', async () => {
    const pod = await runPod(h);
    const endpoint = h.fake.endpoint;
    await h.fake.stop();
    await expect(h.cri.runtime.version({}, { timeoutMs: 2000 })).rejects.toSatisfy(isUnavailable);
    await h.fake.restart();
    expect(h.fake.endpoint).toBe(endpoint);
    await h.cri.waitForReady({ timeoutMs: 10_000 });
    expect((await h.cri.runtime.listPodSandbox({})).items.map((s) => s.id)).toEqual([pod]);
  });

  it('serves on a caller-chosen socket and refuses one another server is using', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'fake-cri-path-'));
    const socketPath = join(dir, 'runtime.sock');
    const first = new FakeRuntime({ socketPath });
    const second = new FakeRuntime({ socketPath });
    try {
      await first.start();
      expect(first.endpoint).toBe(`unix://${socketPath}`);
      await expect(second.start()).rejects.toThrow(FakeRuntimeConfigError);
      await first.stop();
      expect(existsSync(dir)).toBe(true);
      expect(existsSync(socketPath)).toBe(false);
    } finally {
      await first.stop();
      await second.stop();
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('seeds sandboxes and containers directly, without RPCs', async () => {
    const pod = h.fake.addSandbox(podConfig('seeded'));
    const running = await h.fake.addContainer(pod, containerConfig('app'));
    const created = await h.fake.addContainer(pod, containerConfig('init'), { start: false });
    expect(h.fake.calls()).toEqual([]);
    const { containers } = await h.cri.runtime.listContainers({ filter: { podSandboxId: pod } });
    expect(containers.map((c) => [c.id, c.state])).toEqual([
      [running, ContainerState.CONTAINER_RUNNING],
      [created, ContainerState.CONTAINER_CREATED],
    ]);
    expect(() => h.fake.addSandbox(podConfig('seeded'))).toThrow(FakeRuntimeError);
  });

  it('rejects bad options with FakeRuntimeConfigError', () => {
    expect(() => new FakeRuntime({ podCidr: '10.0.0.0/33' })).toThrow(FakeRuntimeConfigError);
    expect(() => new FakeRuntime({ podCidr: '300.0.0.0/16' })).toThrow(FakeRuntimeConfigError);
    expect(() => new FakeRuntime({ streamChunkSize: 0 })).toThrow(FakeRuntimeConfigError);
  });
});
