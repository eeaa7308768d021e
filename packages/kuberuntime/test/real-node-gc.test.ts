// Container GC against a real containerd: a crash-looping container leaves dead containers
// behind; a GC pass with the kubelet's defaults keeps the newest dead one (and its log) and
// removes the others with their log files; once the pod is deleted and killed, the next pass
// removes its last container, its sandbox and its log directory.
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import type { V1Pod } from '@kubernetes/client-node';
import { ContainerState, type CriClient } from '@nodeagent/cri';
import { type NodeSandbox, startNodeSandbox } from '@nodeagent/test-support/node-sandbox';
import { describeRealNode, NODE_SANDBOX_REQUIREMENTS } from '@nodeagent/test-support/real-node';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { ContainerGC, type KubeRuntimeManager } from '../src/index.js';
import { runtimeOn } from './support/real-runtime.js';

describeRealNode('container GC on a real containerd', NODE_SANDBOX_REQUIREMENTS, () => {
  let node: NodeSandbox;
  let cri: CriClient;
  let manager: KubeRuntimeManager;

  beforeAll(async () => {
    node = await startNodeSandbox({ name: 'gc' });
    ({ cri, manager } = runtimeOn(node, { crashLoopBackOff: { initialMs: 1, maxMs: 1 } }));
  }, 60_000);
  afterAll(async () => {
    cri?.close();
    await node?.stop();
  }, 60_000);

  it('removes dead containers beyond the newest, then everything of a deleted pod', async () => {
    const uid = `crash-${process.pid}`;
    const pod: V1Pod = {
      metadata: { name: 'crash', namespace: 'gc', uid },
      spec: {
        terminationGracePeriodSeconds: 1,
        containers: [
          {
            name: 'app',
            image: node.imageRef,
            imagePullPolicy: 'IfNotPresent',
            command: ['sh', '-c', 'echo bye; exit 1'],
          },
        ],
      },
    };
    const list = async () =>
      (await cri.runtime.listContainers({ filter: { labelSelector: { 'io.kubernetes.pod.uid': uid } } }))
        .containers;
    // three runs, each exited before the next sync restarts it
    for (let run = 0; run < 3; run++) {
      await manager.syncPod(pod, await manager.getPodStatus(pod));
      const deadline = Date.now() + 15_000;
      while (
        (await list()).some((c) => c.state !== ContainerState.CONTAINER_EXITED) &&
        Date.now() < deadline
      ) {
        await new Promise((r) => setTimeout(r, 100));
      }
      await new Promise((r) => setTimeout(r, 5));
    }
    const before = await list();
    expect(before).toHaveLength(3);
    const logDir = join(node.podLogRoot, `gc_crash_${uid}`, 'app');
    expect(readdirSync(logDir).sort()).toEqual(['0.log', '1.log', '2.log']);

    let deleted = false;
    const gc = new ContainerGC({
      runtime: cri.runtime,
      podLogsRoot: node.podLogRoot,
      podState: { shouldPodContentBeRemoved: () => deleted, shouldPodRuntimeBeRemoved: () => deleted },
    });
    await gc.garbageCollect();
    const after = await list();
    const newest = [...before].sort((a, b) => (a.createdAt > b.createdAt ? -1 : 1))[0];
    expect(after.map((c) => c.id)).toEqual([newest?.id]);
    expect(readdirSync(logDir)).toEqual(['2.log']);

    const sandboxesOf = async () =>
      (await cri.runtime.listPodSandbox({ filter: { labelSelector: { 'io.kubernetes.pod.uid': uid } } }))
        .items;
    expect(await sandboxesOf()).toHaveLength(1); // ready: kept
    // the pod is deleted: kill it (sandbox stopped), then GC removes the rest
    await manager.killPod(pod, await manager.getPodStatus(pod), 1);
    deleted = true;
    await gc.garbageCollect();
    expect(await list()).toEqual([]);
    const sandboxes = (
      await cri.runtime.listPodSandbox({ filter: { labelSelector: { 'io.kubernetes.pod.uid': uid } } })
    ).items;
    expect(sandboxes).toEqual([]);
    expect(existsSync(join(node.podLogRoot, `gc_crash_${uid}`))).toBe(false);
  }, 90_000);
});
