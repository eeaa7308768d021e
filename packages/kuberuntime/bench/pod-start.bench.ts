// Pod start latency on a real containerd (private node sandbox, local busybox image): 50 pods
// through KubeRuntimeManager.syncPod next to the bare CRI sequence (RunPodSandbox +
// CreateContainer + StartContainer with the same configs) for 50 identical pods, interleaved
// in one run. Prints a table; asserts nothing about speed. Needs root + containerd; skipped
// (loudly) elsewhere.
import { mkdir, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import type { V1Pod } from '@kubernetes/client-node';
import { type CriClient, createCriClient } from '@nodeagent/cri';
import { emptyPodStatus } from '@nodeagent/kubecontainer';
import { type NodeSandbox, startNodeSandbox } from '@nodeagent/test-support/node-sandbox';
import { describeRealNode, NODE_SANDBOX_REQUIREMENTS } from '@nodeagent/test-support/real-node';
import { afterAll, beforeAll, it } from 'vitest';
import { generateContainerConfig } from '../src/container-config.js';
import { KubeRuntimeManager } from '../src/index.js';
import { generatePodSandboxConfig } from '../src/sandbox-config.js';

const PODS = 50;

function percentile(sorted: readonly number[], p: number): number {
  const i = Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1);
  return sorted[Math.max(0, i)] ?? Number.NaN;
}

describeRealNode('pod start latency (real containerd)', NODE_SANDBOX_REQUIREMENTS, () => {
  let node: NodeSandbox;
  let cri: CriClient;
  beforeAll(async () => {
    node = await startNodeSandbox({ name: 'krtbench' });
    cri = createCriClient(node.criEndpoint, { timeoutMs: 60_000 });
  });
  afterAll(async () => {
    cri?.close();
    await node?.stop();
  });

  it('syncPod vs the bare CRI call sequence', async () => {
    const podsRoot = join(node.rootDir, 'pods');
    const manager = new KubeRuntimeManager({ cri, podLogsRoot: node.podLogRoot, podsRoot, resolvConf: '' });
    const makePod = (kind: string, i: number): V1Pod => ({
      metadata: { name: `${kind}-${i}`, namespace: 'bench', uid: `${kind}-${i}-${process.pid}` },
      spec: {
        terminationGracePeriodSeconds: 0,
        containers: [
          { name: 'app', image: node.imageRef, imagePullPolicy: 'IfNotPresent', command: ['sleep', '3600'] },
        ],
      },
    });
    const cleanup = async (pod: V1Pod) => {
      const { items } = await cri.runtime.listPodSandbox({
        filter: { labelSelector: { 'io.kubernetes.pod.uid': pod.metadata?.uid ?? '' } },
      });
      for (const s of items) {
        await cri.runtime.stopPodSandbox({ podSandboxId: s.id });
        await cri.runtime.removePodSandbox({ podSandboxId: s.id });
      }
    };
    const imageRef =
      (await cri.image.imageStatus({ image: { image: node.imageRef } })).image?.id ?? node.imageRef;

    const bare = async (pod: V1Pod): Promise<number> => {
      // configs built before the clock starts: the floor is the runtime's own work
      const config = generatePodSandboxConfig(pod, 0, { podLogsRoot: node.podLogRoot, resolvConf: '' });
      await mkdir(join(config.logDirectory, 'app'), { recursive: true });
      const container = pod.spec?.containers[0];
      if (container === undefined) throw new Error('no container');
      const { config: cc, prepare } = generateContainerConfig(pod, container, 0, imageRef, {
        podIp: '',
        podIps: [],
        hostIps: [],
        nodeAllocatable: { cpuMilli: 2000n, memoryBytes: 2n ** 31n },
        memoryCapacityBytes: 2n ** 31n,
        podsRoot,
        terminationFileId: 'bench',
      });
      // same mounts as syncPod gives the container (the termination message file)
      for (const p of prepare) {
        await mkdir(dirname(p.path), { recursive: true });
        await writeFile(p.path, '');
      }
      const t0 = performance.now();
      const { podSandboxId } = await cri.runtime.runPodSandbox({ config });
      const { containerId } = await cri.runtime.createContainer({
        podSandboxId,
        config: cc,
        sandboxConfig: config,
      });
      await cri.runtime.startContainer({ containerId });
      return performance.now() - t0;
    };
    const ours = async (pod: V1Pod): Promise<number> => {
      const t0 = performance.now();
      const result = await manager.syncPod(
        pod,
        emptyPodStatus(pod.metadata?.uid ?? '', pod.metadata?.name, pod.metadata?.namespace),
      );
      const ms = performance.now() - t0;
      const err = result.error();
      if (err !== undefined) throw err;
      return ms;
    };

    // warm-up (first sandbox pays one-time costs in containerd)
    for (const [kind, fn] of [
      ['warm-bare', bare],
      ['warm-ours', ours],
    ] as const) {
      const p = makePod(kind, 0);
      await fn(p);
      await cleanup(p);
    }
    const bareMs: number[] = [];
    const oursMs: number[] = [];
    for (let i = 0; i < PODS; i++) {
      // alternate which goes first so drift over the run hits both alike
      const order = i % 2 === 0 ? (['bare', 'ours'] as const) : (['ours', 'bare'] as const);
      for (const kind of order) {
        const pod = makePod(kind, i);
        (kind === 'bare' ? bareMs : oursMs).push(await (kind === 'bare' ? bare(pod) : ours(pod)));
        await cleanup(pod);
      }
    }
    const row = (name: string, xs: number[]) => {
      const s = [...xs].sort((a, b) => a - b);
      return {
        name,
        pods: xs.length,
        p50: percentile(s, 50),
        p95: percentile(s, 95),
        p99: percentile(s, 99),
        mean: xs.reduce((a, b) => a + b, 0) / xs.length,
      };
    };
    const rows = [
      row('bare CRI (RunPodSandbox+Create+Start)', bareMs),
      row('KubeRuntimeManager.syncPod', oursMs),
    ];
    const fmt = (n: number) => n.toFixed(1).padStart(8);
    console.log('\npod start latency, real containerd, local busybox image, one container per pod (ms)');
    console.log(
      `${'path'.padEnd(40)} ${'pods'.padStart(5)} ${'p50'.padStart(8)} ${'p95'.padStart(8)} ${'p99'.padStart(8)} ${'mean'.padStart(8)}`,
    );
    for (const r of rows)
      console.log(
        `${r.name.padEnd(40)} ${String(r.pods).padStart(5)} ${fmt(r.p50)} ${fmt(r.p95)} ${fmt(r.p99)} ${fmt(r.mean)}`,
      );
    const [b, o] = rows;
    if (b && o) {
      console.log(
        `syncPod / bare: p50 ${((o.p50 / b.p50 - 1) * 100).toFixed(1)}%, p95 ${((o.p95 / b.p95 - 1) * 100).toFixed(1)}%, p99 ${((o.p99 / b.p99 - 1) * 100).toFixed(1)}% (target: within 15% of the floor)\n`,
      );
    }
  });
});
