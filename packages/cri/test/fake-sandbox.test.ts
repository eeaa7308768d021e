import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ContainerState, hasCriCode, NamespaceMode, PodSandboxState } from '../src/index.js';
import { createContainer, type FakeHarness, podConfig, runPod, startFake } from './fake-fixtures.js';

describe('FakeRuntime sandboxes', () => {
  let h: FakeHarness;
  beforeEach(async () => {
    h = await startFake({ podCidr: '10.44.0.0/24' });
  });
  afterEach(() => h.close());

  it('runs a READY sandbox with an IP from the pod CIDR and echoes its config', async () => {
    const config = podConfig('web');
    const id = await runPod(h, 'web');
    expect(id).toMatch(/^[0-9a-f]{64}$/);
    const { status, containersStatuses, timestamp } = await h.cri.runtime.podSandboxStatus({
      podSandboxId: id,
    });
    expect(status?.state).toBe(PodSandboxState.SANDBOX_READY);
    expect(status?.network?.ip).toBe('10.44.0.2');
    expect(status?.metadata).toEqual(config.metadata);
    expect(status?.labels).toEqual({ app: 'web' });
    expect(status?.annotations).toEqual({ 'example.com/note': 'fake' });
    expect(status?.createdAt).toBe(BigInt(h.clock.now()) * 1_000_000n);
    expect(containersStatuses).toEqual([]);
    expect(timestamp).toBeGreaterThan(status?.createdAt ?? 0n);
  });

  it('stop makes it NOTREADY, kills its containers with 137 and gives the IP up; remove forgets it', async () => {
    const id = await runPod(h);
    const cid = await createContainer(h, id, 'app');
    await h.cri.runtime.stopPodSandbox({ podSandboxId: id });
    const { status } = await h.cri.runtime.podSandboxStatus({ podSandboxId: id });
    expect(status?.state).toBe(PodSandboxState.SANDBOX_NOTREADY);
    expect(status?.network?.ip).toBe('');
    const c = (await h.cri.runtime.containerStatus({ containerId: cid })).status;
    expect(c?.state).toBe(ContainerState.CONTAINER_EXITED);
    expect(c?.exitCode).toBe(137);

    await h.cri.runtime.removePodSandbox({ podSandboxId: id });
    await expect(h.cri.runtime.podSandboxStatus({ podSandboxId: id })).rejects.toSatisfy((e) =>
      hasCriCode(e, 'NOT_FOUND'),
    );
    expect((await h.cri.runtime.listContainers({})).containers).toEqual([]);
  });

  it('stop and remove are idempotent, also for IDs it never had', async () => {
    const id = await runPod(h);
    await h.cri.runtime.stopPodSandbox({ podSandboxId: id });
    await h.cri.runtime.stopPodSandbox({ podSandboxId: id });
    await h.cri.runtime.removePodSandbox({ podSandboxId: id });
    await h.cri.runtime.removePodSandbox({ podSandboxId: id });
    await h.cri.runtime.stopPodSandbox({ podSandboxId: 'f'.repeat(64) });
    await h.cri.runtime.removePodSandbox({ podSandboxId: 'f'.repeat(64) });
  });

  it('removing a READY sandbox stops it and removes its containers', async () => {
    const id = await runPod(h);
    await createContainer(h, id, 'app');
    await h.cri.runtime.removePodSandbox({ podSandboxId: id });
    expect(h.fake.sandboxes()).toEqual([]);
    expect(h.fake.containers()).toEqual([]);
  });

  it('refuses a second sandbox with the same name, namespace, uid and attempt', async () => {
    await runPod(h, 'dup');
    await expect(h.cri.runtime.runPodSandbox({ config: podConfig('dup') })).rejects.toSatisfy((e) =>
      hasCriCode(e, 'ALREADY_EXISTS'),
    );
    const next = podConfig('dup');
    await h.cri.runtime.runPodSandbox({ config: { ...next, metadata: { ...next.metadata, attempt: 1 } } });
  });

  it('rejects a config without metadata as INVALID_ARGUMENT', async () => {
    await expect(h.cri.runtime.runPodSandbox({ config: { hostname: 'x' } })).rejects.toSatisfy((e) =>
      hasCriCode(e, 'INVALID_ARGUMENT'),
    );
  });

  it('gives host-network sandboxes no IP and reports their namespace options back', async () => {
    const config = podConfig('host', {
      linux: {
        securityContext: { namespaceOptions: { network: NamespaceMode.NODE, pid: NamespaceMode.POD } },
      },
    });
    const { podSandboxId } = await h.cri.runtime.runPodSandbox({ config });
    const { status } = await h.cri.runtime.podSandboxStatus({ podSandboxId });
    expect(status?.network?.ip).toBe('');
    expect(status?.linux?.namespaces?.options?.network).toBe(NamespaceMode.NODE);
  });

  it('filters lists by id (full or unique prefix), state and labels', async () => {
    const a = await runPod(h, 'a');
    const b = await runPod(h, 'b');
    await h.cri.runtime.stopPodSandbox({ podSandboxId: b });
    const ids = async (filter: Parameters<typeof h.cri.runtime.listPodSandbox>[0]) =>
      (await h.cri.runtime.listPodSandbox(filter)).items.map((s) => s.id);
    expect(await ids({})).toEqual([a, b]);
    expect(await ids({ filter: { id: a } })).toEqual([a]);
    expect(await ids({ filter: { id: a.slice(0, 12) } })).toEqual([a]);
    expect(await ids({ filter: { id: 'nope' } })).toEqual([]);
    expect(await ids({ filter: { state: { state: PodSandboxState.SANDBOX_READY } } })).toEqual([a]);
    expect(await ids({ filter: { state: { state: PodSandboxState.SANDBOX_NOTREADY } } })).toEqual([b]);
    expect(await ids({ filter: { labelSelector: { app: 'b' } } })).toEqual([b]);
    expect(await ids({ filter: { labelSelector: { app: 'b', other: 'x' } } })).toEqual([]);
  });

  it('accepts a unique ID prefix in status calls', async () => {
    const id = await runPod(h);
    const { status } = await h.cri.runtime.podSandboxStatus({ podSandboxId: id.slice(0, 8) });
    expect(status?.id).toBe(id);
  });

  it('takes pod IPs from the CIDR set by UpdateRuntimeConfig', async () => {
    await h.cri.runtime.updateRuntimeConfig({
      runtimeConfig: { networkConfig: { podCidr: '10.99.1.0/24' } },
    });
    expect(h.fake.podCidr).toBe('10.99.1.0/24');
    const id = await runPod(h);
    expect((await h.cri.runtime.podSandboxStatus({ podSandboxId: id })).status?.network?.ip).toBe(
      '10.99.1.2',
    );
    await expect(
      h.cri.runtime.updateRuntimeConfig({ runtimeConfig: { networkConfig: { podCidr: 'bogus' } } }),
    ).rejects.toSatisfy((e) => hasCriCode(e, 'INVALID_ARGUMENT'));
  });
});
