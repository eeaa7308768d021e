// The eviction manager and GC wired into the agent (embedded API server + FakeRuntime) with a
// test SummaryProvider standing in for @nodeagent/stats: under memory pressure the pod using
// most above its request is evicted (Failed/Evicted with upstream's message and the
// DisruptionTarget condition, an Evicted event), the Node reports MemoryPressure, BestEffort
// pods are refused admission, and the kubelet's eviction/GC flags parse.
import type { CoreV1Event, V1Node, V1Pod } from '@kubernetes/client-node';
import { quantityValue } from '@nodeagent/core';
import type { PodStats, Summary, SummaryProvider } from '@nodeagent/stats';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RunningAgent, runAgent } from '../src/agent.js';
import { EMBEDDED_BUSYBOX_IMAGE } from '../src/embedded-runtime.js';
import { parseFlags } from '../src/flags.js';
import {
  embeddedStore,
  FAST_AGENT_TIMINGS,
  makePod,
  podCondition,
  podNamed,
  shContainer,
  testLogger,
  waitFor,
} from './helpers.js';

const NODE = 'evict-node';
const Mi = 1024 * 1024;

/** Node memory and per-pod working sets the test sets by hand. */
class HandSummary implements SummaryProvider {
  available = 4096 * Mi;
  usage = new Map<string, number>();
  pods: () => V1Pod[] = () => [];
  async get(): Promise<Summary> {
    const time = new Date().toISOString();
    const pods: PodStats[] = this.pods().map((p) => {
      const ws = this.usage.get(p.metadata?.name ?? '') ?? 0;
      return {
        podRef: { name: p.metadata?.name ?? '', namespace: 'default', uid: p.metadata?.uid ?? '' },
        startTime: time,
        containers: [{ name: 'app', startTime: time, memory: { time, workingSetBytes: ws } }],
        memory: { time, workingSetBytes: ws },
      };
    });
    return {
      node: {
        nodeName: NODE,
        startTime: time,
        memory: { time, availableBytes: this.available, workingSetBytes: 4096 * Mi },
      },
      pods,
    };
  }
}

describe('reference agent: eviction under memory pressure', () => {
  let agent: RunningAgent;
  const summary = new HandSummary();

  beforeAll(async () => {
    agent = await runAgent({
      nodeName: NODE,
      ...FAST_AGENT_TIMINGS,
      logger: testLogger(),
      summaryProvider: summary,
      eviction: {
        thresholds: { evictionHard: { 'memory.available': '200Mi' } },
        containerGC: {},
        imageGC: {},
        pressureTransitionPeriodMs: 1_000,
        monitoringIntervalMs: 200,
      },
    });
    summary.pods = () => embeddedStore(agent).list('pods', 'default') as unknown as V1Pod[];
  });
  afterAll(async () => {
    await agent?.stop();
  });

  it('evicts the pod above its request, reports MemoryPressure and refuses BestEffort pods meanwhile', async () => {
    const container = (req: string) => ({
      ...shContainer('app', EMBEDDED_BUSYBOX_IMAGE, 'sleep 3600'),
      resources: { requests: { memory: req }, limits: { memory: '1Gi' } },
    });
    for (const [name, req] of [
      ['hog', '64Mi'],
      ['quiet', '64Mi'],
    ] as const) {
      await agent.api.create('/api/v1/namespaces/default/pods', makePod(name, NODE, [container(req)]));
    }
    for (const name of ['hog', 'quiet']) {
      await waitFor(`${name} Running`, () => podNamed(agent, name)?.status?.phase === 'Running');
    }
    summary.usage.set('hog', 300 * Mi);
    summary.usage.set('quiet', 10 * Mi);
    summary.available = 50 * Mi;

    const hog = await waitFor('hog evicted', () => {
      const p = podNamed(agent, 'hog');
      return p?.status?.phase === 'Failed' ? p : undefined;
    });
    const message =
      'The node was low on resource: memory. Threshold quantity: 200Mi, available: 50Mi. ' +
      'Container app was using 300Mi, request is 64Mi, has larger consumption of memory. ';
    expect(hog.status?.reason).toBe('Evicted');
    expect(hog.status?.message).toBe(message);
    expect(podCondition(hog, 'DisruptionTarget')).toMatchObject({
      status: 'True',
      reason: 'TerminationByKubelet',
    });
    expect(podNamed(agent, 'quiet')?.status?.phase).toBe('Running');
    const node = await waitFor('MemoryPressure', () => {
      const n = embeddedStore(agent).tryGet('nodes', '', NODE) as V1Node | undefined;
      return n?.status?.conditions?.find((c) => c.type === 'MemoryPressure')?.status === 'True'
        ? n
        : undefined;
    });
    expect(node.status?.conditions?.find((c) => c.type === 'MemoryPressure')?.reason).toBe(
      'KubeletHasInsufficientMemory',
    );
    // allocatable memory = capacity − the --eviction-hard memory.available (200Mi)
    expect(
      quantityValue(node.status?.capacity?.memory ?? '0') -
        quantityValue(node.status?.allocatable?.memory ?? '0'),
    ).toBe(200n * 1024n * 1024n);
    const evicted = await waitFor('Evicted event', () =>
      (embeddedStore(agent).list('events', 'default') as unknown as CoreV1Event[]).find(
        (e) => e.reason === 'Evicted',
      ),
    );
    expect(evicted.message).toBe(message);
    expect(evicted.involvedObject.name).toBe('hog');

    await agent.api.create(
      '/api/v1/namespaces/default/pods',
      makePod('besteffort', NODE, [shContainer('app', EMBEDDED_BUSYBOX_IMAGE, 'sleep 3600')]),
    );
    const rejected = await waitFor('besteffort rejected', () => {
      const p = podNamed(agent, 'besteffort');
      return p?.status?.phase === 'Failed' ? p : undefined;
    });
    expect(rejected.status?.reason).toBe('Evicted');
    expect(rejected.status?.message).toContain('The node had condition: [MemoryPressure]. ');

    summary.available = 2048 * Mi;
    await waitFor(
      'MemoryPressure cleared after the transition period',
      () => {
        const n = embeddedStore(agent).tryGet('nodes', '', NODE) as V1Node | undefined;
        return n?.status?.conditions?.find((c) => c.type === 'MemoryPressure')?.status === 'False';
        // 1 s transition period + a status update; generous for a loaded CI machine.
      },
      30_000,
    );
  });
});

describe('eviction and GC flags', () => {
  it('parses the kubelet spellings into the settings; bad values name the flag', () => {
    const flags = parseFlags(
      [
        '--eviction-hard',
        'memory.available<500Mi,nodefs.available<5%',
        '--eviction-soft',
        'memory.available<1Gi',
        '--eviction-soft-grace-period',
        'memory.available=1m30s',
        '--eviction-minimum-reclaim',
        'memory.available=200Mi',
        '--eviction-pressure-transition-period',
        '30s',
        '--eviction-max-pod-grace-period',
        '20',
        '--image-gc-high-threshold',
        '90',
        '--image-gc-low-threshold',
        '70',
        '--minimum-image-ttl-duration',
        '5m',
        '--maximum-dead-containers-per-container',
        '2',
        '--maximum-dead-containers',
        '100',
        '--minimum-container-ttl-duration',
        '1m',
      ],
      'host',
    );
    expect(flags.eviction).toEqual({
      thresholds: {
        evictionHard: { 'memory.available': '500Mi', 'nodefs.available': '5%' },
        evictionSoft: { 'memory.available': '1Gi' },
        evictionSoftGracePeriod: { 'memory.available': '1m30s' },
        evictionMinimumReclaim: { 'memory.available': '200Mi' },
      },
      pressureTransitionPeriodMs: 30_000,
      maxPodGracePeriodSeconds: 20,
      containerGC: { minAgeMs: 60_000, maxPerPodContainer: 2, maxContainers: 100 },
      imageGC: { highThresholdPercent: 90, lowThresholdPercent: 70, minAgeMs: 300_000 },
    });
    expect(parseFlags([], 'host').eviction).toEqual({ thresholds: {}, containerGC: {}, imageGC: {} });
    expect(() => parseFlags(['--eviction-soft', 'memory.available<1Gi'], 'host')).toThrow(
      '--eviction-*: grace period must be specified for the soft eviction threshold memory.available',
    );
    expect(() => parseFlags(['--eviction-hard', 'memory.available=1Gi'], 'host')).toThrow(
      '--eviction-hard: malformed pair, expect string<string',
    );
    expect(() => parseFlags(['--image-gc-high-threshold', '101'], 'host')).toThrow(
      '--image-gc-high-threshold',
    );
  });
});
