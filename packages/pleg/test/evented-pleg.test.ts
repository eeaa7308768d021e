import { criPodStatusSource, criRuntimeLister } from '@nodeagent/kubecontainer';
import * as promClient from 'prom-client';
import { afterEach, describe, expect, it } from 'vitest';
import { EventedPLEG, type EventedPlegOptions, type FallbackReason } from '../src/index.js';
import { type Harness, kubeletContainer, kubeletPod, startHarness, until } from './helpers.js';

describe('EventedPLEG over the fake runtime', () => {
  let h: Harness;
  let pleg: EventedPLEG | undefined;
  afterEach(async () => {
    await pleg?.stop();
    pleg = undefined;
    await h.close();
  });

  function make(options: Partial<EventedPlegOptions> = {}): EventedPLEG {
    pleg = new EventedPLEG({
      cri: h.cri,
      lister: criRuntimeLister(h.cri),
      statusSource: criPodStatusSource(h.cri, { clock: h.clock }),
      clock: h.clock,
      random: () => 0,
      ...options,
    });
    return pleg;
  }

  /** Advances the fake clock in steps, letting socket work run in between, until `check` holds. */
  async function driveUntil(check: () => boolean, what: string, stepMs = 250): Promise<void> {
    for (let i = 0; i < 400 && !check(); i++) {
      await h.clock.advance(stepMs);
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
    expect(check(), what).toBe(true);
  }

  it('turns CRI events into PLEG events and cache entries, without relisting', async () => {
    h = await startHarness();
    const p = make();
    await p.start();
    expect(p.generic.relistPeriodMs).toBe(300_000);
    expect(p.generic.relistThresholdMs).toBe(600_000);
    await until(() => h.fake.calls('GetContainerEvents').length === 1, 'subscription');
    let criEvents = 0;
    p.on('criEvent', () => criEvents++);

    const config = kubeletPod('ev');
    const { podSandboxId } = await h.cri.runtime.runPodSandbox({ config });
    const { containerId } = await h.cri.runtime.createContainer({
      podSandboxId,
      config: kubeletContainer(config, 'app'),
      sandboxConfig: config,
    });
    await h.cri.runtime.startContainer({ containerId });
    await until(() => criEvents === 4, 'four CRI events');
    const cached = p.cache.get('uid-ev').status;
    expect(cached.containerStatuses.map((c) => [c.id, c.state])).toEqual([[containerId, 'running']]);
    expect(cached.ips).toHaveLength(1);

    await h.cri.runtime.stopContainer({ containerId, timeout: 0n });
    await h.cri.runtime.removeContainer({ containerId });
    await h.cri.runtime.stopPodSandbox({ podSandboxId });
    const before = p.cache.get('uid-ev').status.ips;
    await until(() => criEvents === 7, 'seven CRI events');
    expect(p.cache.get('uid-ev').status.ips).toEqual(before); // kept after the network teardown
    await h.cri.runtime.removePodSandbox({ podSandboxId });
    await until(() => criEvents === 8, 'eight CRI events');

    const name = (id: string) => (id === podSandboxId ? 'sandbox' : id === containerId ? 'app' : id);
    const seen: string[] = [];
    for (let e = p.channel.tryReceive(); e; e = p.channel.tryReceive())
      seen.push(`${e.type}:${name(e.data)}`);
    expect(seen).toEqual([
      'ContainerStarted:sandbox',
      'ContainerStarted:app',
      'ContainerDied:app',
      'ContainerDied:app',
      'ContainerRemoved:app',
      'ContainerDied:sandbox',
      'ContainerDied:sandbox',
      'ContainerRemoved:sandbox',
    ]);
    expect(p.cache.modifiedAt('uid-ev')).toBeUndefined();
    expect(h.fake.calls('ListContainers')).toHaveLength(0);
    expect(p.fallenBack).toBe(false);
  });

  it('bumps the global cache stamp every 5 s while streaming', async () => {
    h = await startHarness();
    const p = make();
    await p.start();
    await h.clock.advance(0); // the safety-net relist runs once at start
    await until(() => p.generic.lastRelistTime !== undefined, 'first relist');
    const reader = p.cache.getNewerThan('nobody', h.clock.now());
    await h.clock.advance(4_999);
    expect(p.cache.waiting).toBe(1);
    await h.clock.advance(1);
    await expect(reader).resolves.toMatchObject({ status: { id: 'nobody' } });
  });

  it('falls back to 1 s relisting after 5 consecutive stream failures', async () => {
    h = await startHarness();
    const registry = new promClient.Registry();
    for (let i = 0; i < 5; i++)
      h.fake.injectError('GetContainerEvents', { code: 14, message: `broken ${i}` });
    const p = make({ metrics: { registry, promClient } });
    const failures: number[] = [];
    let fallback: FallbackReason | undefined;
    p.on('streamError', (_e, n) => failures.push(n));
    p.on('fallback', (reason) => {
      fallback = reason;
    });
    await p.start();
    await driveUntil(() => fallback !== undefined, 'fallback');
    expect(fallback).toBe('max-retries');
    expect(failures).toEqual([1, 2, 3, 4, 5]);
    expect(p.generic.relistPeriodMs).toBe(1000);
    expect(p.generic.relistThresholdMs).toBe(180_000);
    expect(p.generic.running).toBe(true);
    // Each failure forced a relist; the streams were retried with backoff (250, 500, 1000, 2000 ms).
    expect(h.fake.calls('GetContainerEvents')).toHaveLength(5);
    const errors = await registry.getSingleMetric('kubelet_evented_pleg_connection_error_count')?.get();
    expect(errors?.values[0]?.value).toBe(5);
    // Now relisting every second.
    const before = h.fake.calls('ListPodSandbox').length;
    await driveUntil(() => h.fake.calls('ListPodSandbox').length >= before + 3, 'relists at 1 s', 500);
  });

  it('a connected stream resets the failure count', async () => {
    h = await startHarness();
    for (let i = 0; i < 4; i++) h.fake.injectError('GetContainerEvents', { code: 14, message: 'broken' });
    const p = make();
    let connected = 0;
    p.on('streamConnected', () => connected++);
    await p.start();
    await driveUntil(() => connected === 1, 'connected');
    expect(p.streamFailures).toBe(0);
    expect(p.fallenBack).toBe(false);
    expect(h.fake.calls('GetContainerEvents')).toHaveLength(5);
  });

  it('falls back at once on UNIMPLEMENTED (containerd 1.6)', async () => {
    h = await startHarness({ containerEvents: false });
    const p = make();
    const reasons: FallbackReason[] = [];
    p.on('fallback', (reason) => reasons.push(reason));
    await p.start();
    await until(() => reasons.length === 1, 'fallback');
    expect(reasons).toEqual(['unimplemented']);
    expect(h.fake.calls('GetContainerEvents')).toHaveLength(1);
    expect(p.generic.relistPeriodMs).toBe(1000);

    const config = kubeletPod('relisted');
    await h.cri.runtime.runPodSandbox({ config });
    await driveUntil(() => p.channel.length > 0, 'relisted event', 1000);
    expect(p.channel.tryReceive()).toMatchObject({ id: 'uid-relisted', type: 'ContainerStarted' });
  });

  it('health: unhealthy when the buffer is full, else the generic check at 10 minutes', async () => {
    h = await startHarness();
    const p = make({ channelCapacity: 2 });
    expect(p.healthy()).toEqual({ ok: false, message: 'pleg has yet to be successful' });
    await p.generic.relist();
    expect(p.healthy().ok).toBe(true);
    p.channel.send({ id: 'a', type: 'PodSync', data: '' });
    p.channel.send({ id: 'b', type: 'PodSync', data: '' });
    expect(p.healthy()).toEqual({
      ok: false,
      message: 'EventedPLEG: pleg event channel capacity is full with 2 events',
    });
    p.channel.tryReceive();
    await h.clock.advance(600_001);
    expect(p.healthy()).toEqual({
      ok: false,
      message: 'pleg was last seen active 10m0.001s ago; threshold is 10m0s',
    });
  });
});
