// A static pod from a manifest directory on a real containerd (private node sandbox): it runs,
// its mirror pod shows it Running, and it survives an agent restart — same UID (the manifest
// hash), same container, restartCount 0 — because the second agent adopts what the first
// started. The API server is a standalone mini-apiserver both agents share.
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { V1Pod } from '@kubernetes/client-node';
import { createTestCgroupRoot, type TestCgroupRoot } from '@nodeagent/cgroups/testing';
import { ContainerState } from '@nodeagent/cri';
import { type MiniApiServer, startMiniApiServer } from '@nodeagent/mini-apiserver';
import { type NodeSandbox, startNodeSandbox } from '@nodeagent/test-support/node-sandbox';
import { describeRealNode } from '@nodeagent/test-support/real-node';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { type AgentOptions, type RunningAgent, runAgent } from '../src/agent.js';
import { testLogger, waitFor } from './helpers.js';

describeRealNode(
  'static pod on a real containerd survives an agent restart',
  ['root', 'netns', 'containerd', 'runc', 'cni', 'busybox'],
  () => {
    let node: NodeSandbox;
    let api: MiniApiServer;
    let agent: RunningAgent | undefined;
    let options: AgentOptions;
    // Pod cgroups go below a test-private cgroup root, never into the machine's /kubepods.
    let cgroupRoot: TestCgroupRoot;
    const NODE = 'spnode';
    const MIRROR = `static-sleeper-${NODE}`;
    const getPod = (name: string) => api.store.tryGet('pods', 'default', name) as V1Pod | undefined;

    beforeAll(async () => {
      node = await startNodeSandbox({ name: NODE });
      const manifests = join(node.rootDir, 'manifests');
      await mkdir(manifests, { recursive: true });
      await writeFile(
        join(manifests, 'sleeper.yaml'),
        `apiVersion: v1
kind: Pod
metadata:
  name: static-sleeper
spec:
  terminationGracePeriodSeconds: 5
  containers:
  - name: app
    image: ${node.imageRef}
    imagePullPolicy: IfNotPresent
    command: ["sh", "-c", "trap 'exit 0' TERM; while true; do sleep 1; done"]
`,
      );
      api = await startMiniApiServer({ kubeconfigPath: join(node.rootDir, 'kubeconfig') });
      cgroupRoot = await createTestCgroupRoot();
      options = {
        nodeName: NODE,
        cgroups: { cgroupRoot: cgroupRoot.cgroupRoot },
        kubeconfigPath: join(node.rootDir, 'kubeconfig'),
        runtimeEndpoint: node.criEndpoint,
        podLogsRoot: node.podLogRoot,
        podsRoot: join(node.rootDir, 'pods'),
        podManifestPath: manifests,
        relistPeriodMs: 300,
        housekeepingMs: 300,
        nodeStatusUpdateMs: 500,
        logger: testLogger(),
      };
      agent = await runAgent(options);
    }, 120_000);
    afterAll(async () => {
      await agent?.stop();
      // The static pod outlives the agents by design: the sandbox teardown removes it.
      await api?.stop();
      await node?.stop();
      await cgroupRoot?.remove();
    });

    it('runs the static pod and mirrors it Running, then keeps the same container across an agent restart', async () => {
      const first = await waitFor(
        'mirror pod Running',
        () => {
          const p = getPod(MIRROR);
          return p?.status?.phase === 'Running' && p.status.containerStatuses?.[0]?.ready ? p : undefined;
        },
        60_000,
      );
      const staticUid = first.metadata?.annotations?.['kubernetes.io/config.mirror'] ?? '';
      expect(staticUid).toMatch(/^[0-9a-f]{32}$/);
      const containerId = first.status?.containerStatuses?.[0]?.containerID ?? '';
      expect(containerId).toMatch(/^containerd:\/\//);
      const cri = agent?.cri;
      const listRunning = async () =>
        (
          await (cri ?? (agent as RunningAgent).cri).runtime.listContainers({
            filter: { labelSelector: { 'io.kubernetes.pod.uid': staticUid } },
          })
        ).containers.filter((c) => c.state === ContainerState.CONTAINER_RUNNING);
      const before = await listRunning();
      expect(before.map((c) => c.id)).toEqual([containerId.replace('containerd://', '')]);

      await agent?.stop();
      agent = undefined;
      // Nothing stopped the pod while no agent ran.
      agent = await runAgent(options);
      // Let the second agent sync the pod several times, then look again.
      await new Promise((r) => setTimeout(r, 5_000));
      const after = await waitFor(
        'mirror pod Running after the restart',
        () => {
          const p = getPod(MIRROR);
          return p?.status?.phase === 'Running' ? p : undefined;
        },
        30_000,
      );
      expect(after.metadata?.annotations?.['kubernetes.io/config.mirror']).toBe(staticUid);
      // The mirror pod itself was kept: not deleted as an orphan before the manifests were read.
      expect(after.metadata?.uid).toBe(first.metadata?.uid);
      expect(after.status?.containerStatuses?.[0]).toMatchObject({
        containerID: containerId,
        restartCount: 0,
      });
      const { containers } = await agent.cri.runtime.listContainers({
        filter: { labelSelector: { 'io.kubernetes.pod.uid': staticUid } },
      });
      expect(containers.map((c) => [c.id, c.state])).toEqual([
        [containerId.replace('containerd://', ''), ContainerState.CONTAINER_RUNNING],
      ]);
    }, 150_000);
  },
);
