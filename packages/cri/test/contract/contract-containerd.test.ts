// The CRI contract against a real containerd (1.6 on Debian 12) in a private node
// sandbox (own netns, CNI bridge, busybox image), plus the nodeagent-crictl CLI against it.
import { existsSync } from 'node:fs';
import { readdir, rmdir } from 'node:fs/promises';
import { join } from 'node:path';
import { type NodeSandbox, startNodeSandbox } from '@nodeagent/test-support/node-sandbox';
import { describeRealNode, NODE_SANDBOX_REQUIREMENTS } from '@nodeagent/test-support/real-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../../src/cli/run-cli.js';
import { ContainerState, type CriClient, createCriClient } from '../../src/index.js';
import {
  contractContainerConfig,
  contractPodConfig,
  uniqueName,
  waitForContainer,
} from './contract-fixtures.js';
import { defineCriContract } from './cri-contract.js';

/** Removes the (by then empty) parent cgroup runc created for the contract's sandboxes, in every hierarchy. */
async function removeCgroupParent(parent: string): Promise<void> {
  const root = '/sys/fs/cgroup';
  const hierarchies = ['', ...(await readdir(root).catch(() => []))];
  for (const h of hierarchies) {
    const dir = join(root, h, parent);
    if (existsSync(dir)) await rmdir(dir);
  }
}

describeRealNode('containerd (real node)', NODE_SANDBOX_REQUIREMENTS, () => {
  defineCriContract(
    'containerd 1.6',
    async () => {
      const node = await startNodeSandbox({ name: 'cricontract' });
      const cgroupParent = `/nodeagent-cri-contract-${process.pid}`;
      return {
        endpoint: node.criEndpoint,
        imageRef: node.imageRef,
        podCidr: node.podCidr,
        podLogRoot: node.podLogRoot,
        sandboxCgroupParent: cgroupParent,
        async teardown() {
          await node.stop();
          await removeCgroupParent(cgroupParent);
        },
      };
    },
    // containerd 1.6: no GetContainerEvents (added in 1.7), NOT_FOUND for stops of unknown
    // IDs (made idempotent in later releases), PodSandboxStats implemented.
    { containerEvents: false, stopOfUnknownSucceeds: false, podSandboxStats: true, binaryEnvValues: false },
  );

  describe('nodeagent-crictl against containerd', () => {
    let node: NodeSandbox;
    let cri: CriClient;
    let podId: string;
    let containerId: string;

    const crictl = async (...argv: string[]) => {
      let stdout = '';
      let stderr = '';
      const code = await runCli(['-r', node.criEndpoint, '-t', '30s', ...argv], {
        stdout: { write: (t: string) => (stdout += t) },
        stderr: { write: (t: string) => (stderr += t) },
        env: {},
      });
      return { code, stdout, stderr };
    };

    beforeAll(async () => {
      node = await startNodeSandbox({ name: 'cricli' });
      cri = createCriClient(node.criEndpoint, { timeoutMs: 60_000 });
      const config = await contractPodConfig(uniqueName('cli'), node.podLogRoot, { cli: 'yes' });
      podId = (await cri.runtime.runPodSandbox({ config })).podSandboxId;
      const ctr = contractContainerConfig('talker', node.imageRef, [
        'sh',
        '-c',
        'echo hello-from-log; sleep 1000',
      ]);
      containerId = (
        await cri.runtime.createContainer({ podSandboxId: podId, config: ctr, sandboxConfig: config })
      ).containerId;
      await cri.runtime.startContainer({ containerId });
      await waitForContainer(cri, containerId, (s) => s.state === ContainerState.CONTAINER_RUNNING);
    });
    afterAll(async () => {
      cri?.close();
      await node?.stop();
    });

    it('version and info', async () => {
      const version = await crictl('version', '-o', 'json');
      expect(version.code, version.stderr).toBe(0);
      expect(JSON.parse(version.stdout)).toMatchObject({
        runtimeName: 'containerd',
        runtimeApiVersion: 'v1',
      });
      const info = await crictl('info');
      expect(info.code, info.stderr).toBe(0);
      expect(info.stdout).toContain('RuntimeReady');
    });

    it('pods, ps, images, stats list what is there', async () => {
      const pods = await crictl('pods', '-o', 'json');
      expect(pods.code, pods.stderr).toBe(0);
      expect(pods.stdout).toContain(podId);
      const ps = await crictl('ps');
      expect(ps.code, ps.stderr).toBe(0);
      expect(ps.stdout).toContain(containerId.slice(0, 13));
      expect(ps.stdout).toContain('talker');
      const images = await crictl('images');
      expect(images.code, images.stderr).toBe(0);
      expect(images.stdout).toContain(node.imageRef.split(':')[0]);
      const stats = await crictl('stats', '-o', 'json');
      expect(stats.code, stats.stderr).toBe(0);
      expect(stats.stdout).toContain(containerId);
    });

    it('inspect, inspectp and logs of a running container', async () => {
      const inspect = await crictl('inspect', containerId);
      expect(inspect.code, inspect.stderr).toBe(0);
      expect(JSON.parse(inspect.stdout).status).toMatchObject({
        id: containerId,
        state: 'CONTAINER_RUNNING',
      });
      const inspectp = await crictl('inspectp', podId.slice(0, 12));
      expect(inspectp.code, inspectp.stderr).toBe(0);
      expect(JSON.parse(inspectp.stdout).status).toMatchObject({ id: podId });
      const logs = await crictl('logs', containerId);
      expect(logs.code, logs.stderr).toBe(0);
      expect(logs.stdout).toBe('hello-from-log\n');
    });

    // A READY sandbox has state 0, the proto3 default: the JSON output must still name it,
    // as crictl does (generated with emitDefaultValues=json-methods).
    it('inspectp prints the state of a READY sandbox (zero enum value)', async () => {
      const inspectp = await crictl('inspectp', podId);
      expect(inspectp.code, inspectp.stderr).toBe(0);
      expect(JSON.parse(inspectp.stdout).status).toMatchObject({ id: podId, state: 'SANDBOX_READY' });
    });

    it('reports a missing container and containerd 1.6 having no events with exit code 1', async () => {
      const missing = await crictl('inspect', 'f'.repeat(64));
      expect(missing.code).toBe(1);
      expect(missing.stderr).toMatch(/NOT_FOUND/);
      const events = await crictl('events');
      expect(events.code).toBe(1);
      expect(events.stderr).toMatch(/UNIMPLEMENTED/);
    });
  });
});
