// The hierarchy on this machine's real cgroups, with pods run by a private containerd (cgroupfs
// driver) under the cgroup parents this package computes. Everything lives below a test-private
// cgroupRoot (`/nodeagent-test-<random>`) that is removed at the end; no existing cgroup is touched.
// Expected values are the kubelet's formulas (helpers_linux.go, qos_container_manager_linux.go,
// node_container_manager_linux.go), written out as numbers.

import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import { join } from 'node:path';
import type { V1Pod } from '@kubernetes/client-node';
import { type CriClient, createCriClient } from '@nodeagent/cri';
import { KubeRuntimeManager } from '@nodeagent/kuberuntime';
import { type NodeSandbox, startNodeSandbox } from '@nodeagent/test-support/node-sandbox';
import { describeRealNode, NODE_SANDBOX_REQUIREMENTS } from '@nodeagent/test-support/real-node';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { type CgroupLayout, ContainerManager, detectCgroupLayout } from '../src/index.js';
import { createTestCgroupRoot, type TestCgroupRoot } from '../src/testing.js';

const Mi = 1024n * 1024n;
const MOUNT = '/sys/fs/cgroup';

describeRealNode('cgroups on a real node with containerd', NODE_SANDBOX_REQUIREMENTS, () => {
  let testRoot: TestCgroupRoot;
  let rootName = '';
  let layout: CgroupLayout;
  let v2 = false;
  let cm: ContainerManager;
  let node: NodeSandbox;
  let cri: CriClient;
  let runtime: KubeRuntimeManager;
  const pods: V1Pod[] = [];
  const file = (controller: string, rel: string, name: string) =>
    readFileSync(join(v2 ? MOUNT : join(MOUNT, controller), rel, name), 'utf8').trim();

  const pod = (
    name: string,
    resources: NonNullable<V1Pod['spec']>['containers'][number]['resources'],
  ): V1Pod => ({
    metadata: {
      name,
      namespace: 'cgroups',
      uid: `${randomBytes(4).toString('hex')}-0000-4000-8000-${name.padEnd(12, '0').slice(0, 12)}`,
    },
    spec: {
      terminationGracePeriodSeconds: 1,
      containers: [
        {
          name: 'app',
          image: node.imageRef,
          imagePullPolicy: 'IfNotPresent',
          command: ['sleep', '3600'],
          ...(resources ? { resources } : {}),
        },
      ],
    },
  });

  beforeAll(async () => {
    layout = detectCgroupLayout(MOUNT);
    v2 = layout.version === 2;
    testRoot = await createTestCgroupRoot();
    rootName = testRoot.cgroupRoot.slice(1);
    cm = new ContainerManager({
      cgroupRoot: testRoot.cgroupRoot,
      capacity: { cpu: String(os.cpus().length), memory: String(os.totalmem()) },
      kubeReserved: { cpu: '100m', memory: '256Mi' },
      systemReserved: { memory: '128Mi' },
      activePods: () => pods,
    });
    node = await startNodeSandbox({ name: 'cgrpnode' });
    cri = createCriClient(node.criEndpoint, { timeoutMs: 30_000 });
    runtime = new KubeRuntimeManager({
      cri,
      podLogsRoot: node.podLogRoot,
      podsRoot: join(node.rootDir, 'pods'),
      resolvConf: '',
      cgroupParent: (p) => cm.podCgroupParent(p),
    });
    await cm.start();
  }, 60_000);

  afterAll(async () => {
    await cm?.stop();
    cri?.close();
    await node?.stop();
    await testRoot?.remove();
    for (const p of testRoot?.paths ?? []) expect(existsSync(p)).toBe(false);
  }, 60_000);

  async function runPod(p: V1Pod): Promise<string> {
    pods.push(p);
    cm.ensurePodCgroup(p);
    const deadline = Date.now() + 20_000;
    for (;;) {
      await runtime.syncPod(p, await runtime.getPodStatus(p));
      const status = await runtime.getPodStatus(p);
      const app = status.containerStatuses.find((c) => c.name === 'app');
      if (app?.state === 'running') return app.id;
      if (Date.now() > deadline) throw new Error(`pod ${p.metadata?.name} did not start`);
      await new Promise((r) => setTimeout(r, 200));
    }
  }

  it('kubepods carries node allocatable (capacity − kube − system reserved) and the QoS tiers exist', () => {
    const kubepods = `${rootName}/kubepods`;
    const expectMemory = BigInt(os.totalmem()) - 256n * Mi - 128n * Mi;
    const shares = ((BigInt(os.cpus().length) * 1000n - 100n) * 1024n) / 1000n;
    if (v2) {
      expect(BigInt(file('memory', kubepods, 'memory.max'))).toBe(expectMemory);
      expect(file('cpu', kubepods, 'cpu.weight')).toBe(String(1n + ((shares - 2n) * 9999n) / 262142n));
      expect(file('cpu', `${kubepods}/besteffort`, 'cpu.weight')).toBe('1');
    } else {
      expect(BigInt(file('memory', kubepods, 'memory.limit_in_bytes'))).toBe(expectMemory);
      expect(file('cpu', kubepods, 'cpu.shares')).toBe(String(shares));
      expect(file('cpu', `${kubepods}/besteffort`, 'cpu.shares')).toBe('2');
    }
  });

  it('Guaranteed, Burstable and BestEffort pods run in their pod cgroups with the kubelet values', async () => {
    const g = pod('guaranteed', {
      requests: { cpu: '250m', memory: '128Mi' },
      limits: { cpu: '250m', memory: '128Mi' },
    });
    const b = pod('burstable', { requests: { cpu: '250m', memory: '64Mi' }, limits: { memory: '128Mi' } });
    const e = pod('besteffort', undefined);
    const ids = [await runPod(g), await runPod(b), await runPod(e)];
    const gPath = `${rootName}/kubepods/pod${g.metadata?.uid}`;
    const bPath = `${rootName}/kubepods/burstable/pod${b.metadata?.uid}`;
    const ePath = `${rootName}/kubepods/besteffort/pod${e.metadata?.uid}`;
    expect(cm.podCgroupParent(g)).toBe(`/${gPath}`);
    expect(cm.podCgroupParent(b)).toBe(`/${bPath}`);
    expect(cm.podCgroupParent(e)).toBe(`/${ePath}`);
    // 250m → 256 shares (weight 10 on v2); limit 250m → quota 25000 of 100000; 128Mi → 134217728.
    if (v2) {
      expect(file('cpu', gPath, 'cpu.weight')).toBe('10');
      expect(file('cpu', gPath, 'cpu.max')).toBe('25000 100000');
      expect(file('memory', gPath, 'memory.max')).toBe(String(128n * Mi));
      expect(file('cpu', bPath, 'cpu.weight')).toBe('10');
      expect(file('cpu', bPath, 'cpu.max')).toBe('max 100000');
      expect(file('memory', bPath, 'memory.max')).toBe(String(128n * Mi));
      expect(file('cpu', ePath, 'cpu.weight')).toBe('1');
      expect(file('memory', ePath, 'memory.max')).toBe('max');
      expect(file('cpu', `${rootName}/kubepods/burstable`, 'cpu.weight')).toBe('10');
    } else {
      expect(file('cpu', gPath, 'cpu.shares')).toBe('256');
      expect(file('cpu', gPath, 'cpu.cfs_quota_us')).toBe('25000');
      expect(file('cpu', gPath, 'cpu.cfs_period_us')).toBe('100000');
      expect(file('memory', gPath, 'memory.limit_in_bytes')).toBe(String(128n * Mi));
      expect(file('cpu', bPath, 'cpu.shares')).toBe('256');
      expect(file('cpu', bPath, 'cpu.cfs_quota_us')).toBe('-1');
      expect(file('memory', bPath, 'memory.limit_in_bytes')).toBe(String(128n * Mi));
      expect(file('cpu', ePath, 'cpu.shares')).toBe('2');
      expect(BigInt(file('memory', ePath, 'memory.limit_in_bytes'))).toBeGreaterThan(1n << 62n);
      // The burstable tier: shares of the sum of Burstable requests (one pod, 250m).
      expect(file('cpu', `${rootName}/kubepods/burstable`, 'cpu.shares')).toBe('256');
    }
    // containerd put each container (and the sandbox) below its pod cgroup, with the container values.
    const [gId, bId, eId] = ids.map((id) => id.replace(/^[A-Za-z0-9.-]+:\/\//, ''));
    const procs = (rel: string) => file('pids', rel, 'cgroup.procs').split('\n').filter(Boolean);
    expect(procs(`${gPath}/${gId}`).length).toBeGreaterThan(0);
    expect(procs(`${bPath}/${bId}`).length).toBeGreaterThan(0);
    expect(procs(`${ePath}/${eId}`).length).toBeGreaterThan(0);
    if (v2) {
      expect(file('memory', `${gPath}/${gId}`, 'memory.max')).toBe(String(128n * Mi));
    } else {
      expect(file('cpu', `${gPath}/${gId}`, 'cpu.shares')).toBe('256');
      expect(file('cpu', `${gPath}/${gId}`, 'cpu.cfs_quota_us')).toBe('25000');
      expect(file('memory', `${gPath}/${gId}`, 'memory.limit_in_bytes')).toBe(String(128n * Mi));
      expect(file('cpu', `${ePath}/${eId}`, 'cpu.shares')).toBe('2');
    }

    // Terminated pods: containers killed by the runtime, then the pod cgroups removed.
    for (const p of [g, b, e]) {
      const result = await runtime.killPod(p, await runtime.getPodStatus(p), 1);
      expect(result.error()).toBeUndefined();
      await cm.destroyPodCgroup(p);
    }
    for (const rel of [gPath, bPath, ePath]) {
      for (const h of layout.hierarchies) expect(existsSync(join(h, rel))).toBe(false);
    }
  }, 90_000);

  it('an orphaned pod cgroup is found, its process killed and the cgroup removed', async () => {
    const orphan = pod('orphan', undefined);
    cm.ensurePodCgroup(orphan);
    const rel = `${rootName}/kubepods/besteffort/pod${orphan.metadata?.uid}`;
    const child = spawn('sleep', ['600'], { stdio: 'ignore' });
    const exited = new Promise<NodeJS.Signals | null>((resolve) =>
      child.on('exit', (_c, sig) => resolve(sig)),
    );
    for (const h of layout.hierarchies) {
      if (existsSync(join(h, rel, 'cgroup.procs')))
        writeFileSync(join(h, rel, 'cgroup.procs'), String(child.pid));
    }
    expect(cm.getAllPodsFromCgroups().has(orphan.metadata?.uid ?? '')).toBe(true);
    const removed = await cm.cleanupOrphanedPodCgroups(new Set());
    expect(removed).toEqual([orphan.metadata?.uid]);
    expect(await exited).toBe('SIGKILL');
    for (const h of layout.hierarchies) expect(existsSync(join(h, rel))).toBe(false);
  }, 30_000);
});
