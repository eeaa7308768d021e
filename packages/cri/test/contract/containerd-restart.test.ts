// A runtime that goes down and comes back under a live client: calls fail fast with
// UNAVAILABLE while containerd is down (never waiting out their deadline), and the same
// client works again once containerd is back, with the running container still there.

import { type NodeSandbox, startNodeSandbox } from '@nodeagent/test-support/node-sandbox';
import { describeRealNode, NODE_SANDBOX_REQUIREMENTS } from '@nodeagent/test-support/real-node';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { ContainerState, type CriClient, CriError, createCriClient, isUnavailable } from '../../src/index.js';
import {
  contractContainerConfig,
  contractPodConfig,
  uniqueName,
  waitForContainer,
} from './contract-fixtures.js';

describeRealNode('CRI client across a containerd restart (real node)', NODE_SANDBOX_REQUIREMENTS, () => {
  let node: NodeSandbox;
  let cri: CriClient;

  beforeAll(async () => {
    node = await startNodeSandbox({ name: 'crirestart' });
    cri = createCriClient(node.criEndpoint, { timeoutMs: 60_000 });
  });
  afterAll(async () => {
    cri?.close();
    await node?.stop();
  });

  it('fails fast with UNAVAILABLE while the runtime is down and recovers by itself', async () => {
    const config = await contractPodConfig(uniqueName('restart'), node.podLogRoot);
    const podSandboxId = (await cri.runtime.runPodSandbox({ config })).podSandboxId;
    const { containerId } = await cri.runtime.createContainer({
      podSandboxId,
      config: contractContainerConfig('sleeper', node.imageRef, ['sleep', '1000']),
      sandboxConfig: config,
    });
    await cri.runtime.startContainer({ containerId });
    await waitForContainer(cri, containerId, (s) => s.state === ContainerState.CONTAINER_RUNNING);
    const firstPid = node.containerdPid;

    await node.stopContainerd();
    // A 60 s deadline: the call must come back UNAVAILABLE, not DEADLINE_EXCEEDED.
    const down = await cri.runtime.version({}, { timeoutMs: 60_000 }).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(down).toBeInstanceOf(CriError);
    expect(isUnavailable(down), String(down)).toBe(true);
    expect((down as CriError).rpc).toBe('RuntimeService/Version');

    await node.startContainerd();
    expect(node.containerdPid).not.toBe(firstPid);
    // The same client reconnects on its own; allow it its reconnect backoff.
    let version: Awaited<ReturnType<CriClient['runtime']['version']>> | undefined;
    for (let i = 0; i < 60 && version === undefined; i++) {
      version = await cri.runtime.version({}, { timeoutMs: 5_000 }).catch((e: unknown) => {
        if (!isUnavailable(e)) throw e;
        return new Promise<undefined>((resolve) => setTimeout(() => resolve(undefined), 250));
      });
    }
    expect(version?.runtimeName).toBe('containerd');

    // The container kept running under its shim and containerd still knows it.
    const status = await cri.runtime.containerStatus({ containerId });
    expect(status.status?.state).toBe(ContainerState.CONTAINER_RUNNING);

    await cri.runtime.stopContainer({ containerId, timeout: 0n });
    await cri.runtime.removeContainer({ containerId });
    await cri.runtime.stopPodSandbox({ podSandboxId });
    await cri.runtime.removePodSandbox({ podSandboxId });
  });
});
