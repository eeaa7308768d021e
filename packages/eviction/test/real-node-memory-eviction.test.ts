// Eviction under real memory pressure on a private containerd, without endangering the
// machine: the hard memory.available threshold is set 300 MiB below what the node has at the
// start, then a container allocates 500 MiB inside its own 600 MiB cgroup limit. The node's
// signal (from /proc/meminfo) crosses the threshold, the eviction manager ranks the two pods
// from their cgroup working sets and evicts the one using more than it requests, killing it
// through CRI; the other pod keeps running and nothing else is touched (the manager only sees
// this test's pods, and the killer only this test's runtime manager).
//
// The summary comes from a test-local adapter (proc-cgroup-summary.ts) reading /proc/meminfo
// and the containers' memory cgroups directly, because @nodeagent/stats is written in
// parallel; the manager consumes it through the same SummaryProvider interface.
import { join } from 'node:path';
import type { V1Pod } from '@kubernetes/client-node';
import { quantityValue } from '@nodeagent/core';
import { ContainerState, type CriClient, createCriClient } from '@nodeagent/cri';
import { KubeRuntimeManager } from '@nodeagent/kuberuntime';
import { type NodeSandbox, startNodeSandbox } from '@nodeagent/test-support/node-sandbox';
import { describeRealNode, NODE_SANDBOX_REQUIREMENTS } from '@nodeagent/test-support/real-node';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { EvictionManager, type EvictionStatus, parseThresholdConfig } from '../src/index.js';
import {
  containerPid,
  memAvailableBytes,
  memoryCgroupDir,
  procCgroupSummary,
} from './proc-cgroup-summary.js';

const MiB = 1024 * 1024;

describeRealNode(
  'eviction under real memory pressure (private containerd)',
  NODE_SANDBOX_REQUIREMENTS,
  () => {
    let node: NodeSandbox;
    let cri: CriClient;
    let runtime: KubeRuntimeManager;
    const pods: V1Pod[] = [];

    const pod = (name: string, request: string, limit: string, script: string): V1Pod => ({
      metadata: { name, namespace: 'evict', uid: `${name}-${process.pid}` },
      spec: {
        terminationGracePeriodSeconds: 1,
        containers: [
          {
            name,
            image: node.imageRef,
            imagePullPolicy: 'IfNotPresent',
            command: ['sh', '-c', script],
            resources: { requests: { memory: request }, limits: { memory: limit } },
          },
        ],
      },
    });

    beforeAll(async () => {
      node = await startNodeSandbox({ name: 'evict' });
      cri = createCriClient(node.criEndpoint, { timeoutMs: 30_000 });
      runtime = new KubeRuntimeManager({
        cri,
        podLogsRoot: node.podLogRoot,
        podsRoot: join(node.rootDir, 'pods'),
        resolvConf: '',
      });
    }, 60_000);
    afterAll(async () => {
      for (const p of pods) await runtime?.killPod(p, await runtime.getPodStatus(p), 1).catch(() => {});
      cri?.close();
      await node?.stop();
    }, 60_000);

    it('evicts the pod that allocated 500 MiB in its 600 MiB cgroup once memory.available crosses the threshold', async () => {
      // dd holds its 500 MiB block while blocked writing into a pipe nobody reads.
      const hog = pod(
        'hog',
        '100Mi',
        '600Mi',
        'while [ ! -e /tmp/go ]; do sleep 0.1; done; dd if=/dev/zero bs=524288000 count=1 | sleep 3600',
      );
      const quiet = pod('quiet', '64Mi', '128Mi', 'sleep 3600');
      pods.push(hog, quiet);
      for (const p of pods) {
        const result = await runtime.syncPod(p, await runtime.getPodStatus(p));
        expect(result.error()).toBeUndefined();
      }
      const hogId = (await runtime.getPodStatus(hog)).containerStatuses[0]?.id ?? '';
      // the container's memory cgroup carries the 600 MiB limit
      const cg = await memoryCgroupDir(await containerPid(cri, hogId));
      const { readFile } = await import('node:fs/promises');
      const limit = Number(
        (await readFile(`${cg.dir}/${cg.v2 ? 'memory.max' : 'memory.limit_in_bytes'}`, 'utf8')).trim(),
      );
      expect(limit).toBe(600 * MiB);

      const availableAtStart = await memAvailableBytes();
      const threshold = availableAtStart - 300 * MiB;
      const kills: { pod: string; status: EvictionStatus; grace: number }[] = [];
      const manager = new EvictionManager({
        thresholds: parseThresholdConfig({
          evictionHard: { 'memory.available': String(threshold) },
          enforceNodeAllocatable: [],
        }),
        summaryProvider: procCgroupSummary(cri, () =>
          pods.map((p) => ({ name: p.metadata?.name ?? '', namespace: 'evict', uid: p.metadata?.uid ?? '' })),
        ),
        activePods: () => pods,
        podKiller: {
          async killPod(p, grace, status) {
            kills.push({ pod: p.metadata?.name ?? '', status, grace });
            const result = await runtime.killPod(p, await runtime.getPodStatus(p), grace);
            const err = result.error();
            if (err) throw err;
          },
        },
      });
      expect(await manager.synchronize()).toEqual([]);
      expect(manager.isUnderMemoryPressure()).toBe(false);

      await cri.runtime.execSync({ containerId: hogId, cmd: ['touch', '/tmp/go'], timeout: 10n });
      let evicted: V1Pod[] = [];
      const deadline = Date.now() + 30_000;
      while (evicted.length === 0 && Date.now() < deadline) {
        await new Promise((r) => setTimeout(r, 500));
        evicted = await manager.synchronize();
      }
      expect(evicted.map((p) => p.metadata?.name)).toEqual(['hog']);
      expect(manager.isUnderMemoryPressure()).toBe(true);
      expect(kills.map((k) => [k.pod, k.grace])).toEqual([['hog', 1]]);
      const message = kills[0]?.status.message ?? '';
      expect(message).toMatch(
        new RegExp(
          `^The node was low on resource: memory\\. Threshold quantity: ${threshold}, available: \\d+(Ki|Mi)?\\. Container hog was using \\d+(Ki|Mi)?, request is 100Mi, has larger consumption of memory\\. $`,
        ),
      );
      // the hog's cgroup working set holds (part of) the block: the round that evicts may run
      // while dd is still filling it, as soon as the node's signal crossed the threshold
      expect(quantityValue(/was using (\S+),/.exec(message)?.[1] ?? '0')).toBeGreaterThan(200n * BigInt(MiB));
      const available = quantityValue(/available: (\S+)\. /.exec(message)?.[1] ?? '0');
      expect(available).toBeLessThan(BigInt(threshold));

      // the hog's containers are stopped through CRI; the quiet pod still runs
      const states = async (p: V1Pod) =>
        (
          await cri.runtime.listContainers({
            filter: { labelSelector: { 'io.kubernetes.pod.uid': p.metadata?.uid ?? '' } },
          })
        ).containers.map((c) => c.state);
      expect(await states(hog)).toEqual([ContainerState.CONTAINER_EXITED]);
      expect(await states(quiet)).toEqual([ContainerState.CONTAINER_RUNNING]);
    }, 90_000);
  },
);
