// The agent against a real containerd with the volume manager: a busybox container sees its
// downwardAPI files (on tmpfs) and writes into a memory emptyDir the host reads; a label change
// reaches the container's file through the atomic writer (a subPath mount of it does not
// change, as upstream); after the delete no mount and no
// volume directory is left. Pod cgroups go below a test-private cgroup root: the agent on a real
// runtime creates `kubepods` and its QoS tiers under `--cgroup-root` and, as the kubelet, never
// removes them, so without one this test left an empty /kubepods in every host hierarchy.
import { existsSync, readdirSync } from 'node:fs';
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { V1Pod } from '@kubernetes/client-node';
import { createTestCgroupRoot, type TestCgroupRoot } from '@nodeagent/cgroups/testing';
import { type NodeSandbox, startNodeSandbox } from '@nodeagent/test-support/node-sandbox';
import { describeRealNode } from '@nodeagent/test-support/real-node';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { type RunningAgent, runAgent } from '../src/agent.js';
import { makePod, shContainer, testLogger, waitFor } from './helpers.js';

const CGROUP_MOUNT = '/sys/fs/cgroup';

function mountPoints(under: string): Promise<string[]> {
  return readFile('/proc/self/mountinfo', 'utf8').then((t) =>
    t
      .split('\n')
      .map((l) => l.split(' ')[4] ?? '')
      .filter((p) => p.startsWith(`${under}/`)),
  );
}

describeRealNode(
  'agent volumes on a real containerd',
  ['root', 'netns', 'containerd', 'runc', 'cni', 'busybox'],
  () => {
    let node: NodeSandbox;
    let agent: RunningAgent;
    let podsRoot: string;
    let cgroupRoot: TestCgroupRoot;
    // The host's `kubepods` in each cgroup hierarchy that did not exist before this test.
    let hostKubepods: string[] = [];
    const getPod = (name: string) =>
      agent.apiServer?.store.tryGet('pods', 'default', name) as V1Pod | undefined;

    beforeAll(async () => {
      hostKubepods = readdirSync(CGROUP_MOUNT)
        .map((h) => join(CGROUP_MOUNT, h, 'kubepods'))
        .filter((p) => !existsSync(p));
      node = await startNodeSandbox({ name: 'volnode' });
      podsRoot = join(node.rootDir, 'pods');
      cgroupRoot = await createTestCgroupRoot();
      agent = await runAgent({
        nodeName: 'volnode',
        cgroups: { cgroupRoot: cgroupRoot.cgroupRoot },
        runtimeEndpoint: node.criEndpoint,
        podLogsRoot: node.podLogRoot,
        podsRoot,
        relistPeriodMs: 300,
        housekeepingMs: 300,
        nodeStatusUpdateMs: 500,
        logger: testLogger(),
      });
    });
    // Idempotent: the last test runs it to check what is left, afterAll again if a test failed.
    const teardown = async () => {
      await agent?.stop();
      await agent?.volumes.cleanupOrphanedPodDirs(() => false);
      await node?.stop();
      await cgroupRoot?.remove();
    };
    afterAll(teardown);

    it('the container reads downwardAPI files, sees a label update, and everything is cleaned up', async () => {
      const c = shContainer(
        'app',
        node.imageRef,
        'trap "exit 0" TERM; while true; do cat /info/labels > /scratch/l.tmp && mv /scratch/l.tmp /scratch/labels; cat /sub-labels > /scratch/s.tmp && mv /scratch/s.tmp /scratch/sub; sleep 0.2; done',
      );
      c.volumeMounts = [
        { name: 'info', mountPath: '/info', readOnly: true },
        { name: 'scratch', mountPath: '/scratch' },
        { name: 'info', mountPath: '/sub-labels', subPath: 'labels' },
      ];
      const pod = makePod('dapi', 'volnode', [c], {
        terminationGracePeriodSeconds: 5,
        volumes: [
          {
            name: 'info',
            downwardAPI: { items: [{ path: 'labels', fieldRef: { fieldPath: 'metadata.labels' } }] },
          },
          { name: 'scratch', emptyDir: { medium: 'Memory', sizeLimit: '4Mi' } },
        ],
      });
      pod.metadata = { ...pod.metadata, labels: { app: 'dapi', version: 'one' } };
      await agent.api.create('/api/v1/namespaces/default/pods', pod);
      const running = await waitFor(
        'dapi Running',
        () => getPod('dapi')?.status?.phase === 'Running' && getPod('dapi'),
        60_000,
      );
      const uid = running.metadata?.uid ?? '';
      // The pod runs in its BestEffort pod cgroup below the test's cgroup root.
      expect(cgroupRoot.paths.some((p) => existsSync(join(p, 'kubepods', 'besteffort', `pod${uid}`)))).toBe(
        true,
      );
      const scratch = join(podsRoot, uid, 'volumes/kubernetes.io~empty-dir/scratch');
      const seen = () => readFile(join(scratch, 'labels'), 'utf8').catch(() => '');
      await waitFor(
        'labels written by the container',
        async () => (await seen()) === 'app="dapi"\nversion="one"',
        20_000,
      );
      const access = running.spec?.volumes?.find((v) => v.name.startsWith('kube-api-access-'))?.name ?? '';
      expect((await mountPoints(podsRoot)).sort()).toEqual(
        [
          scratch,
          join(podsRoot, uid, 'volumes/kubernetes.io~downward-api/info'),
          join(podsRoot, uid, 'volumes/kubernetes.io~projected', access),
        ].sort(),
      );

      await agent.api.patch('/api/v1/namespaces/default/pods/dapi', 'merge', {
        metadata: { labels: { version: 'two' } },
      });
      await waitFor(
        'the new label in the container',
        async () => (await seen()) === 'app="dapi"\nversion="two"',
        30_000,
      );

      await agent.api.delete('/api/v1/namespaces/default/pods/dapi', { gracePeriodSeconds: 2 });
      await waitFor('dapi removed from the API', () => getPod('dapi') === undefined, 30_000);
      await waitFor('no mounts left', async () => (await mountPoints(podsRoot)).length === 0, 10_000);
      expect(await readdir(join(podsRoot, uid, 'volumes')).catch(() => [])).toEqual([]);
    }, 120_000);

    it('leaves no cgroup behind: nothing below its cgroup root, no /kubepods at a hierarchy root', async () => {
      await teardown();
      expect(cgroupRoot.paths.filter((p) => existsSync(p))).toEqual([]);
      expect(hostKubepods.filter((p) => existsSync(p))).toEqual([]);
    }, 60_000);
  },
);
