// UpdatePodStatus (upstream prober_manager_test.go TestUpdatePodStatus / TestUpdateReadiness
// expectations), the manual readiness trigger, and the metrics under upstream's names.
import type { V1PodStatus } from '@kubernetes/client-node';
import * as promClient from 'prom-client';
import { describe, expect, it } from 'vitest';
import { applyProbeResults, type ProbeResult, type ProbeType } from '../src/index.js';
import { CID, CONTAINER, execProbe, harness, POD_UID, podWith, runningStatus } from './helpers.js';

const running = (id: string, extra = {}) => ({
  name: id,
  containerID: `test://${id}`,
  image: '',
  imageID: '',
  ready: false,
  restartCount: 0,
  state: { running: { startedAt: new Date() } },
  ...extra,
});

describe('applyProbeResults (upstream UpdatePodStatus)', () => {
  const view = (results: Record<string, ProbeResult>, workers: string[]) => ({
    result: (type: ProbeType, id: string) => results[`${type}:${id}`],
    hasWorker: (_uid: string, name: string, type: ProbeType) => workers.includes(`${type}:${name}`),
  });
  const pod = podWith({}, {});
  pod.spec = {
    containers: [
      'unprobed',
      'probedReady',
      'probedPending',
      'probedUnready',
      'terminated',
      'startupPending',
    ].map((name) => ({ name, image: '' })),
  };
  const status: V1PodStatus = {
    containerStatuses: [
      running('unprobed'),
      running('probedReady'),
      running('probedPending'),
      running('probedUnready'),
      { ...running('terminated'), state: { terminated: { exitCode: 0 } } },
      running('startupPending'),
    ],
  };

  it('ready and started as upstream: no probe → ready; success → ready; pending or failure → not ready; not running → not ready', () => {
    const out = applyProbeResults(
      pod,
      status,
      view({ 'readiness:test://probedReady': 'success', 'readiness:test://probedUnready': 'failure' }, [
        'readiness:probedReady',
        'readiness:probedPending',
        'readiness:probedUnready',
        'readiness:terminated',
        'startup:startupPending',
      ]),
    );
    const by = Object.fromEntries((out.containerStatuses ?? []).map((s) => [s.name, [s.started, s.ready]]));
    expect(by).toEqual({
      unprobed: [true, true],
      probedReady: [true, true],
      probedPending: [true, false],
      probedUnready: [true, false],
      terminated: [false, false],
      startupPending: [false, false],
    });
    expect(status.containerStatuses?.[0]?.started).toBeUndefined();
  });

  it('plain init containers are ready when they exited 0; sidecars follow their readiness probe', () => {
    const p = podWith({});
    p.spec = {
      containers: [],
      initContainers: [
        { name: 'init', image: '' },
        { name: 'side', image: '', restartPolicy: 'Always', readinessProbe: execProbe() },
      ],
    };
    const out = applyProbeResults(
      p,
      {
        initContainerStatuses: [
          { ...running('init'), state: { terminated: { exitCode: 0 } } },
          running('side'),
        ],
      },
      view({ 'readiness:test://side': 'success' }, ['readiness:side']),
    );
    expect(out.initContainerStatuses?.map((s) => [s.name, s.ready])).toEqual([
      ['init', true],
      ['side', true],
    ]);
  });
});

describe('ProbeManager.updatePodStatus', () => {
  it('asks a readiness worker without a success to probe now', async () => {
    const h = await harness();
    const pod = podWith({ readinessProbe: execProbe({ periodSeconds: 60 }) });
    h.statuses.set(POD_UID, runningStatus(new Date(h.clock.now()), { started: true }));
    h.runner.script = () => ({ output: '', exitCode: 1 });
    h.manager.addPod(pod);
    await h.clock.advance(0);
    expect(h.runner.calls).toHaveLength(1);
    const out = h.manager.updatePodStatus(pod, runningStatus(new Date(h.clock.now()), { started: true }));
    expect(out.containerStatuses?.[0]).toMatchObject({ name: CONTAINER, started: true, ready: false });
    await h.clock.advance(0);
    expect(h.runner.calls).toHaveLength(2);
    h.runner.script = () => ({ output: '', exitCode: 0 });
    h.manager.updatePodStatus(pod, runningStatus(new Date(h.clock.now()), { started: true }));
    await h.clock.advance(0);
    const ready = h.manager.updatePodStatus(pod, runningStatus(new Date(h.clock.now()), { started: true }));
    expect(ready.containerStatuses?.[0]?.ready).toBe(true);
    await h.manager.stop();
  });

  it('started follows the startup result', async () => {
    const h = await harness();
    const pod = podWith({ startupProbe: execProbe() });
    h.statuses.set(POD_UID, runningStatus(new Date(h.clock.now()), { started: false }));
    h.manager.addPod(pod);
    expect(
      h.manager.updatePodStatus(pod, runningStatus(new Date(h.clock.now()))).containerStatuses?.[0]?.started,
    ).toBe(false);
    await h.clock.advance(0);
    expect(h.manager.resultOf('startup', CID)).toBe('success');
    expect(
      h.manager.updatePodStatus(pod, runningStatus(new Date(h.clock.now()))).containerStatuses?.[0]?.started,
    ).toBe(true);
    await h.manager.stop();
  });
});

describe('metrics', () => {
  it('prober_probe_total and prober_probe_duration_seconds with upstream labels; series removed when the worker stops', async () => {
    const registry = new promClient.Registry();
    const h = await harness({ metrics: { registry, promClient } });
    const pod = podWith({ readinessProbe: execProbe() });
    h.statuses.set(POD_UID, runningStatus(new Date(h.clock.now()), { started: true }));
    h.manager.addPod(pod);
    await h.clock.advance(0);
    h.runner.script = () => ({ output: '', exitCode: 1 });
    await h.clock.advance(1000);
    const text = await registry.metrics();
    expect(text).toContain(
      `prober_probe_total{probe_type="Readiness",result="successful",container="${CONTAINER}",pod="web",namespace="default",pod_uid="${POD_UID}"} 1`,
    );
    expect(text).toContain(
      `prober_probe_total{probe_type="Readiness",result="failed",container="${CONTAINER}",pod="web",namespace="default",pod_uid="${POD_UID}"} 1`,
    );
    expect(text).toContain(
      `prober_probe_duration_seconds_count{probe_type="Readiness",container="${CONTAINER}",pod="web",namespace="default"} 1`,
    );
    h.manager.removePod(pod);
    expect(await registry.metrics()).not.toContain('result="failed"');
    await h.manager.stop();
  });
});

describe('manual trigger before the first probe', () => {
  it('waits for the jittered first probe, then probes again at once', async () => {
    const h = await harness({ random: () => 0.5 });
    const pod = podWith({ readinessProbe: execProbe({ periodSeconds: 10 }) });
    h.statuses.set(POD_UID, runningStatus(new Date(h.clock.now()), { started: true }));
    h.runner.script = () => ({ output: '', exitCode: 1 });
    h.manager.addPod(pod);
    h.manager.updatePodStatus(pod, runningStatus(new Date(h.clock.now()), { started: true }));
    await h.clock.advance(4_000);
    expect(h.runner.calls).toHaveLength(0);
    await h.clock.advance(1_000);
    expect(h.runner.calls).toHaveLength(2);
    await h.manager.stop();
  });
});
