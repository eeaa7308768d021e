// The agent against a real containerd in a private node sandbox (its own netns, CNI bridge),
// with the embedded API server: a busybox pod runs to Running with a pod IP from the
// sandbox's CNI range, and a graceful delete stops its containers and removes the pod; exec
// probes run through containerd's ExecSync (readiness → Ready and a ready EndpointSlice
// endpoint, a failing liveness → restart, a startup probe → started only after it passes).
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { V1EndpointSlice, V1Node, V1Pod } from '@kubernetes/client-node';
import { createTestCgroupRoot, type TestCgroupRoot } from '@nodeagent/cgroups/testing';
import { ContainerState } from '@nodeagent/cri';
import { type NodeSandbox, startNodeSandbox } from '@nodeagent/test-support/node-sandbox';
import { describeRealNode } from '@nodeagent/test-support/real-node';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { type RunningAgent, runAgent } from '../src/agent.js';
import { makePod, shContainer, testLogger, waitFor } from './helpers.js';

describeRealNode(
  'reference agent on a real containerd',
  ['root', 'netns', 'containerd', 'runc', 'cni', 'busybox'],
  () => {
    let node: NodeSandbox;
    let agent: RunningAgent;
    // Pod cgroups go below a test-private cgroup root, never into the machine's /kubepods.
    let cgroupRoot: TestCgroupRoot;
    const getPod = (name: string) =>
      agent.apiServer?.store.tryGet('pods', 'default', name) as V1Pod | undefined;

    beforeAll(async () => {
      node = await startNodeSandbox({ name: 'ranode' });
      cgroupRoot = await createTestCgroupRoot();
      agent = await runAgent({
        nodeName: 'ranode',
        runtimeEndpoint: node.criEndpoint,
        cgroups: { cgroupRoot: cgroupRoot.cgroupRoot },
        podLogsRoot: node.podLogRoot,
        podsRoot: join(node.rootDir, 'pods'),
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

    it('registers the node with containerd as its runtime', async () => {
      const n = await waitFor('Ready node', () => {
        const got = agent.apiServer?.store.tryGet('nodes', '', 'ranode') as V1Node | undefined;
        return got?.status?.conditions?.find((c) => c.type === 'Ready')?.status === 'True' ? got : undefined;
      });
      expect(n.status?.nodeInfo?.containerRuntimeVersion).toMatch(/^containerd:\/\//);
    });

    it('runs a busybox pod to Running with a pod IP, and a graceful delete stops it', async () => {
      await agent.api.create(
        '/api/v1/namespaces/default/pods',
        makePod(
          'bb',
          'ranode',
          [shContainer('app', node.imageRef, 'trap "exit 0" TERM; while true; do sleep 1; done')],
          {
            terminationGracePeriodSeconds: 10,
          },
        ),
      );
      const pod = await waitFor(
        'bb Running',
        () => {
          const p = getPod('bb');
          return p?.status?.phase === 'Running' && p.status.containerStatuses?.[0]?.ready ? p : undefined;
        },
        30_000,
      );
      const prefix = node.podCidr.split('.').slice(0, 3).join('.');
      expect(pod.status?.podIP?.startsWith(`${prefix}.`)).toBe(true);
      const uid = pod.metadata?.uid ?? '';
      // The pod runs in its BestEffort pod cgroup, which goes away once the pod terminated.
      const podCgroups = cgroupRoot.paths.map((p) => join(p, 'kubepods', 'besteffort', `pod${uid}`));
      expect(podCgroups.every((p) => existsSync(p))).toBe(true);
      const ping = await node.run(['busybox', 'ping', '-c', '1', '-W', '2', pod.status?.podIP ?? '']);
      expect(ping.code).toBe(0);

      await agent.api.delete('/api/v1/namespaces/default/pods/bb', { gracePeriodSeconds: 5 });
      await waitFor('bb removed from the API', () => getPod('bb') === undefined, 30_000);
      await waitFor('bb pod cgroup removed', () => podCgroups.every((p) => !existsSync(p)), 10_000);
      const { containers } = await agent.cri.runtime.listContainers({
        filter: { labelSelector: { 'io.kubernetes.pod.uid': uid } },
      });
      expect(containers.length).toBeGreaterThan(0);
      expect(containers.every((c) => c.state === ContainerState.CONTAINER_EXITED)).toBe(true);
    }, 60_000);

    it('exec probes through containerd: Ready once readiness passes (endpoint ready), restarted when liveness starts failing', async () => {
      await agent.api.create('/api/v1/namespaces/default/services', {
        apiVersion: 'v1',
        kind: 'Service',
        metadata: { name: 'probed', namespace: 'default' },
        spec: { selector: { app: 'probed' }, ports: [{ port: 80, targetPort: 8080, protocol: 'TCP' }] },
      });
      const probedPod = makePod('probed', 'ranode', [
        {
          ...shContainer(
            'app',
            node.imageRef,
            'touch /tmp/healthy /tmp/ready; sleep 4; rm -f /tmp/healthy; sleep 600',
          ),
          readinessProbe: { exec: { command: ['cat', '/tmp/ready'] }, periodSeconds: 1 },
          livenessProbe: {
            exec: { command: ['cat', '/tmp/healthy'] },
            periodSeconds: 1,
            failureThreshold: 1,
            terminationGracePeriodSeconds: 2,
          },
        },
      ]);
      probedPod.metadata = { ...probedPod.metadata, labels: { app: 'probed' } };
      await agent.api.create('/api/v1/namespaces/default/pods', probedPod);
      const ready = await waitFor(
        'probed Ready',
        () => {
          const p = getPod('probed');
          return p?.status?.conditions?.find((c) => c.type === 'Ready')?.status === 'True' ? p : undefined;
        },
        30_000,
      );
      const first = ready.status?.containerStatuses?.[0];
      expect(first).toMatchObject({ ready: true, started: true, restartCount: 0 });
      const endpoint = await waitFor('the probed endpoint ready', () => {
        const slices = (agent.apiServer?.store.list('endpointslices', 'default') ??
          []) as unknown as V1EndpointSlice[];
        const slice = slices.find((x) => x.metadata?.labels?.['kubernetes.io/service-name'] === 'probed');
        const e = slice?.endpoints?.[0];
        return e?.conditions?.ready === true ? e : undefined;
      });
      expect(endpoint.addresses).toEqual([ready.status?.podIP]);
      const restarted = await waitFor(
        'probed restarted',
        () => {
          const cs = getPod('probed')?.status?.containerStatuses?.[0];
          return cs !== undefined && cs.restartCount >= 1 && cs.state?.running ? cs : undefined;
        },
        30_000,
      );
      expect(restarted.restartCount).toBe(1);
      expect(restarted.containerID).not.toBe(first?.containerID);
      expect(restarted.lastState?.terminated).toBeDefined();
    }, 70_000);

    it('a startup probe through containerd: started (and ready) only after it passes', async () => {
      await agent.api.create(
        '/api/v1/namespaces/default/pods',
        makePod('slowstart', 'ranode', [
          {
            ...shContainer('app', node.imageRef, 'sleep 4; touch /tmp/started; sleep 600'),
            startupProbe: {
              exec: { command: ['cat', '/tmp/started'] },
              periodSeconds: 1,
              failureThreshold: 30,
            },
          },
        ]),
      );
      const notStarted = await waitFor(
        'slowstart running',
        () => {
          const cs = getPod('slowstart')?.status?.containerStatuses?.[0];
          return cs?.state?.running ? cs : undefined;
        },
        30_000,
      );
      expect(notStarted).toMatchObject({ started: false, ready: false });
      const started = await waitFor(
        'slowstart started',
        () => {
          const cs = getPod('slowstart')?.status?.containerStatuses?.[0];
          return cs?.started === true ? cs : undefined;
        },
        30_000,
      );
      expect(started).toMatchObject({ ready: true, restartCount: 0, containerID: notStarted.containerID });
    }, 70_000);
  },
);
