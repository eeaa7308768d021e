// Container log rotation in the agent on a real containerd (private node sandbox): a chatty
// busybox container's log is rotated by the agent's log manager (containerd reopens it on CRI
// ReopenContainerLog), and `kubectl logs -f` through the agent's kubelet API follows it
// across the rotations without losing or repeating a line.
import { spawnSync } from 'node:child_process';
import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import type { V1Pod } from '@kubernetes/client-node';
import { createTestCgroupRoot, type TestCgroupRoot } from '@nodeagent/cgroups/testing';
import { type NodeSandbox, startNodeSandbox } from '@nodeagent/test-support/node-sandbox';
import { describeRealNode } from '@nodeagent/test-support/real-node';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { type RunningAgent, runAgent } from '../src/agent.js';
import { parseKubeletServerFlags } from '../src/kubelet-server-wiring.js';
import { parseLogRotationFlags } from '../src/log-rotation-wiring.js';
import { followLineNumbers, makePod, shContainer, testLogger, waitFor } from './helpers.js';

const kubectlMissing = spawnSync('kubectl', ['version', '--client'], { encoding: 'utf8' }).status !== 0;

describeRealNode(
  'agent log rotation on a real containerd',
  ['root', 'netns', 'containerd', 'runc', 'cni', 'busybox'],
  () => {
    let node: NodeSandbox;
    let agent: RunningAgent;
    let cgroupRoot: TestCgroupRoot;

    beforeAll(async () => {
      if (kubectlMissing) throw new Error('kubectl is required (Debian package kubernetes-client)');
      node = await startNodeSandbox({ name: 'lrnode' });
      cgroupRoot = await createTestCgroupRoot();
      agent = await runAgent({
        nodeName: 'lrnode',
        nodeIp: '127.0.0.1',
        runtimeEndpoint: node.criEndpoint,
        cgroups: { cgroupRoot: cgroupRoot.cgroupRoot },
        podLogsRoot: node.podLogRoot,
        podsRoot: join(node.rootDir, 'pods'),
        kubeletServer: parseKubeletServerFlags({ address: '127.0.0.1', port: '0', 'healthz-port': '0' }),
        logRotation: parseLogRotationFlags({
          'container-log-max-size': '4Ki',
          'container-log-max-files': '3',
          'container-log-monitor-interval': '3s',
        }),
        relistPeriodMs: 300,
        housekeepingMs: 300,
        nodeStatusUpdateMs: 500,
        logger: testLogger(),
      });
    });
    afterAll(async () => {
      await agent?.stop();
      await node?.stop();
      await cgroupRoot?.remove();
    });

    it('a chatty container is rotated; kubectl logs -f follows across rotations', async () => {
      const LINES = 400;
      const pad = 'x'.repeat(80);
      await agent.api.create(
        '/api/v1/namespaces/default/pods',
        makePod('chatty', 'lrnode', [
          shContainer(
            'app',
            node.imageRef,
            `sleep 2; i=0; while [ $i -lt ${LINES} ]; do i=$((i+1)); echo "line-$i-${pad}"; sleep 0.02; done; sleep 600`,
          ),
        ]),
      );
      const pod = await waitFor(
        'chatty Running',
        () => {
          const p = agent.apiServer?.store.tryGet('pods', 'default', 'chatty') as V1Pod | undefined;
          return p?.status?.phase === 'Running' ? p : undefined;
        },
        30_000,
      );
      const seen = await followLineNumbers(agent.kubeconfigPath, 'chatty', LINES, 60_000);
      const first = seen[0] ?? 0;
      expect(first).toBe(1);
      expect(seen).toEqual(Array.from({ length: LINES }, (_, i) => i + 1));
      const dir = join(node.podLogRoot, `default_chatty_${pod.metadata?.uid}`, 'app');
      const files = (await readdir(dir)).sort();
      const rotated = files.filter((f) => /^0\.log\.\d{8}-\d{6}(\.gz)?$/.test(f));
      expect(rotated.length).toBeGreaterThanOrEqual(1);
      expect(rotated.length + 1).toBeLessThanOrEqual(3);
      expect(files).toContain('0.log');
    }, 120_000);
  },
);
