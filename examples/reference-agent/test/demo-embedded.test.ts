// The embedded demo (`npm run agent` = `--demo`) run through the CLI: besides the pods of
// cli.test.ts it shows the static pod's mirror pod, a BestEffort pod evicted under SIMULATED
// memory pressure (the fake runtime's working set against a simulated 1 GiB node, nothing real
// touched) with upstream's eviction status and message (pkg/kubelet/eviction/helpers.go
// `evictionMessage`: "The node was low on resource: memory. Threshold quantity: 100Mi,
// available: …. Container hog was using 980Mi, request is 0, has larger consumption of
// memory. "), the Node's MemoryPressure condition and its recovery, the events, and the banner
// telling the user what to try.
import type { CoreV1Event, V1Node, V1Pod } from '@kubernetes/client-node';
import { quantityValue } from '@nodeagent/core';
import { expect, it } from 'vitest';
import type { RunningAgent } from '../src/agent.js';
import { runCli } from '../src/cli.js';
import { DEMO_NODE_MEMORY_BYTES } from '../src/demo-memory-pressure.js';
import { embeddedStore, podCondition, podNamed, waitFor } from './helpers.js';

const NODE = 'demo-node';

function sink() {
  let text = '';
  return { write: (t: string) => (text += t), text: () => text };
}

function memoryPressure(agent: RunningAgent) {
  const node = embeddedStore(agent).tryGet('nodes', '', NODE) as V1Node | undefined;
  return node?.status?.conditions?.find((c) => c.type === 'MemoryPressure');
}

it('the demo shows the mirror pod, an eviction under simulated memory pressure, MemoryPressure and events', async () => {
  const out = sink();
  const err = sink();
  const stop = new AbortController();
  let agent: RunningAgent | undefined;
  const code = runCli(['--demo', `--node-name=${NODE}`, '--log-level=warn'], {
    stdout: out,
    stderr: err,
    signal: stop.signal,
    handleSignals: false,
    onAgent: (a) => {
      agent = a;
    },
    agentOptions: {
      relistPeriodMs: 200,
      housekeepingMs: 200,
      nodeStatusUpdateMs: 300,
      // The kubelet's default hard thresholds; a fast loop and a short transition period.
      eviction: {
        thresholds: {},
        containerGC: {},
        imageGC: {},
        monitoringIntervalMs: 300,
        pressureTransitionPeriodMs: 1_500,
      },
    },
  });
  try {
    const a = await waitFor('the agent', () => agent);
    // The banner tells what to try.
    await waitFor('banner', () => out.text().includes('describe pod memory-hog'));
    for (const cmd of ['get nodes,pods -o wide', 'get events', 'logs ', 'describe node', 'exec probe-exec']) {
      expect(out.text()).toContain(`kubectl ${cmd}`);
    }

    // The static pod from the demo's manifest directory, as its mirror pod.
    const mirror = await waitFor('mirror pod', () => {
      const p = podNamed(a, `static-web-${NODE}`);
      return p?.status?.phase === 'Running' ? p : undefined;
    });
    expect(mirror.metadata?.annotations?.['kubernetes.io/config.mirror']).toBeTruthy();
    expect(mirror.metadata?.annotations?.['kubernetes.io/config.source']).toBe('file');

    // The BestEffort hog is evicted with upstream's status.
    const hog = await waitFor(
      'memory-hog evicted',
      () => {
        const p = podNamed(a, 'memory-hog');
        return p?.status?.phase === 'Failed' ? p : undefined;
      },
      20_000,
    );
    expect(hog.status?.qosClass).toBe('BestEffort');
    expect(hog.status?.reason).toBe('Evicted');
    const message = hog.status?.message ?? '';
    const m =
      /^The node was low on resource: memory\. Threshold quantity: 100Mi, available: (\d+(?:Ki|Mi))\. Container hog was using 980Mi, request is 0, has larger consumption of memory\. $/.exec(
        message,
      );
    expect(m, message).not.toBeNull();
    const available = quantityValue(m?.[1] ?? '0');
    expect(available).toBeLessThan(100n * 1024n * 1024n);
    expect(available).toBeGreaterThan(0n);
    expect(available).toBeLessThan(BigInt(DEMO_NODE_MEMORY_BYTES - 980 * 1024 * 1024));
    expect(podCondition(hog, 'DisruptionTarget')).toMatchObject({
      status: 'True',
      reason: 'TerminationByKubelet',
    });
    // Only the hog: the other demo pods keep running.
    await waitFor('web Running', () => podNamed(a, 'web')?.status?.phase === 'Running');
    expect(podNamed(a, 'web')?.status?.reason).toBeUndefined();

    // The node reported MemoryPressure (the status manager's node condition), then recovers.
    // (The demo's node line prints each change of the Node's conditions as the API has them.)
    await waitFor('MemoryPressure True', () =>
      /node demo-node MemoryPressure=True \(KubeletHasInsufficientMemory\)/.test(out.text()),
    );
    await waitFor('MemoryPressure recovered', () => memoryPressure(a)?.status === 'False', 15_000);
    expect(memoryPressure(a)?.reason).toBe('KubeletHasSufficientMemory');

    // Events: the pod's Evicted and the node's EvictionThresholdMet, as upstream records them.
    const events = () => embeddedStore(a).list('events', 'default') as unknown as CoreV1Event[];
    const evicted = await waitFor('Evicted event', () =>
      events().find((e) => e.reason === 'Evicted' && e.involvedObject.name === 'memory-hog'),
    );
    expect(evicted.type).toBe('Warning');
    expect(evicted.message).toBe(message);
    await waitFor('EvictionThresholdMet event', () =>
      events().find((e) => e.reason === 'EvictionThresholdMet' && e.involvedObject.kind === 'Node'),
    );
    expect(events().some((e) => e.reason === 'Started' && e.involvedObject.name === 'web')).toBe(true);

    // The demo's progress lines show both.
    await waitFor(
      'progress lines',
      () =>
        /pod memory-hog +Evicted/.test(out.text()) &&
        /node demo-node MemoryPressure=True \(KubeletHasInsufficientMemory\)/.test(out.text()) &&
        /node demo-node MemoryPressure=False/.test(out.text().split('MemoryPressure=True')[1] ?? ''),
    );
  } finally {
    stop.abort();
  }
  expect(await code).toBe(0);
  expect(err.text()).not.toMatch(/ERROR/);
}, 60_000);

it('the hog pod is BestEffort and the simulated allocation reads the shell idiom', async () => {
  const { demoMemoryHogPod, simulatedAllocationBytes } = await import('../src/demo-memory-pressure.js');
  const pod: V1Pod = demoMemoryHogPod(NODE, 'img', 'default');
  expect(pod.spec?.containers[0]?.resources).toBeUndefined();
  expect(simulatedAllocationBytes('echo x; head -c 980m /dev/zero | tail')).toBe(980 * 1024 * 1024);
  expect(simulatedAllocationBytes('head -c 2g /dev/zero | tail')).toBe(2 * 1024 ** 3);
  expect(simulatedAllocationBytes('head -c 10 /dev/zero | tail')).toBe(10);
  expect(simulatedAllocationBytes('sleep 3600')).toBeUndefined();
});
