// PLEG against a real containerd (1.6) in a private node sandbox: every real transition of a
// real container is seen, and the evented PLEG falls back on containerd's UNIMPLEMENTED.
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import {
  ContainerState,
  type CriClient,
  createCriClient,
  type PartialMessage,
  type PodSandboxConfig,
} from '@nodeagent/cri';
import {
  CONTAINER_RESTART_COUNT_ANNOTATION,
  criPodStatusSource,
  criRuntimeLister,
  KUBERNETES_CONTAINER_NAME_LABEL,
  KUBERNETES_POD_NAME_LABEL,
  KUBERNETES_POD_NAMESPACE_LABEL,
  KUBERNETES_POD_UID_LABEL,
} from '@nodeagent/kubecontainer';
import { type NodeSandbox, startNodeSandbox } from '@nodeagent/test-support/node-sandbox';
import { describeRealNode, NODE_SANDBOX_REQUIREMENTS } from '@nodeagent/test-support/real-node';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { EventedPLEG, type FallbackReason, GenericPLEG, type PodLifecycleEvent } from '../src/index.js';

describeRealNode('PLEG on a real containerd', NODE_SANDBOX_REQUIREMENTS, () => {
  let node: NodeSandbox;
  let cri: CriClient;
  beforeAll(async () => {
    node = await startNodeSandbox({ name: 'plegnode' });
    cri = createCriClient(node.criEndpoint, { timeoutMs: 30_000 });
  });
  afterAll(async () => {
    cri?.close();
    await node?.stop();
  });

  async function podConfig(name: string): Promise<PartialMessage<PodSandboxConfig>> {
    const uid = `${name}-${process.pid}`;
    const logDirectory = join(node.podLogRoot, `pleg_${name}_${uid}`);
    await mkdir(logDirectory, { recursive: true });
    return {
      metadata: { name, namespace: 'pleg', uid, attempt: 0 },
      hostname: name,
      logDirectory,
      labels: {
        [KUBERNETES_POD_NAME_LABEL]: name,
        [KUBERNETES_POD_NAMESPACE_LABEL]: 'pleg',
        [KUBERNETES_POD_UID_LABEL]: uid,
      },
      linux: {},
    };
  }

  async function createContainer(
    podSandboxId: string,
    sandboxConfig: PartialMessage<PodSandboxConfig>,
    name: string,
    argv: string[],
  ): Promise<string> {
    const md = sandboxConfig.metadata ?? {};
    const { containerId } = await cri.runtime.createContainer({
      podSandboxId,
      sandboxConfig,
      config: {
        metadata: { name, attempt: 0 },
        image: { image: node.imageRef },
        command: argv,
        labels: {
          [KUBERNETES_POD_NAME_LABEL]: md.name ?? '',
          [KUBERNETES_POD_NAMESPACE_LABEL]: md.namespace ?? '',
          [KUBERNETES_POD_UID_LABEL]: md.uid ?? '',
          [KUBERNETES_CONTAINER_NAME_LABEL]: name,
        },
        annotations: { [CONTAINER_RESTART_COUNT_ANNOTATION]: '2' },
        logPath: `${name}.log`,
        linux: {},
      },
    });
    return containerId;
  }

  async function waitExited(containerId: string): Promise<void> {
    const deadline = Date.now() + 20_000;
    for (;;) {
      const { status } = await cri.runtime.containerStatus({ containerId });
      if (status?.state === ContainerState.CONTAINER_EXITED) return;
      if (Date.now() > deadline) throw new Error(`${containerId} did not exit`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }

  function drain(pleg: GenericPLEG, names: Map<string, string>): string[] {
    const out: string[] = [];
    for (let e = pleg.channel.tryReceive(); e; e = pleg.channel.tryReceive())
      out.push(`${e.type}:${names.get(e.data) ?? e.data}`);
    return out;
  }

  it('PLEG sees every real transition: create → start → exit → remove, sandbox stop → remove', async () => {
    const pleg = new GenericPLEG({ lister: criRuntimeLister(cri), statusSource: criPodStatusSource(cri) });
    const config = await podConfig('transitions');
    const uid = config.metadata?.uid ?? '';
    const names = new Map<string, string>();
    await pleg.relist();
    drain(pleg, names);

    const { podSandboxId } = await cri.runtime.runPodSandbox({ config });
    names.set(podSandboxId, 'sandbox');
    await pleg.relist();
    expect(drain(pleg, names)).toEqual(['ContainerStarted:sandbox']);
    const ips = pleg.cache.get(uid).status.ips;
    expect(ips).toHaveLength(1);

    const job = await createContainer(podSandboxId, config, 'job', [
      'sh',
      '-c',
      'trap "exit 3" TERM; sleep 300 & wait',
    ]);
    names.set(job, 'job');
    await pleg.relist();
    expect(drain(pleg, names)).toEqual([]);
    expect(pleg.cache.get(uid).status.containerStatuses[0]).toMatchObject({
      id: job,
      state: 'created',
      restartCount: 2,
    });

    await cri.runtime.startContainer({ containerId: job });
    await pleg.relist();
    expect(drain(pleg, names)).toEqual(['ContainerStarted:job']);
    expect(pleg.cache.get(uid).status.containerStatuses[0]).toMatchObject({ name: 'job', state: 'running' });

    // SIGTERM makes the job exit with 3 (its trap).
    await cri.runtime.stopContainer({ containerId: job, timeout: 5n });
    await waitExited(job);
    await pleg.relist();
    expect(drain(pleg, names)).toEqual(['ContainerDied:job']);
    const exited = pleg.cache.get(uid).status.containerStatuses[0];
    expect(exited).toMatchObject({ state: 'exited', exitCode: 3 });
    expect(exited?.finishedAt).toBeGreaterThan(0);

    await cri.runtime.removeContainer({ containerId: job });
    await pleg.relist();
    expect(drain(pleg, names)).toEqual(['ContainerRemoved:job']);

    // A running container removed between two relists: Died before Removed.
    const app = await createContainer(podSandboxId, config, 'app', ['sleep', '300']);
    names.set(app, 'app');
    await cri.runtime.startContainer({ containerId: app });
    await pleg.relist();
    expect(drain(pleg, names)).toEqual(['ContainerStarted:app']);
    await cri.runtime.stopContainer({ containerId: app, timeout: 0n });
    await cri.runtime.removeContainer({ containerId: app });
    await pleg.relist();
    expect(drain(pleg, names)).toEqual(['ContainerDied:app', 'ContainerRemoved:app']);

    await cri.runtime.stopPodSandbox({ podSandboxId });
    await pleg.relist();
    expect(drain(pleg, names)).toEqual(['ContainerDied:sandbox']);
    expect(pleg.cache.get(uid).status.ips).toEqual(ips); // kept after the network teardown
    await cri.runtime.removePodSandbox({ podSandboxId });
    await pleg.relist();
    expect(drain(pleg, names)).toEqual(['ContainerRemoved:sandbox']);
    expect(pleg.cache.modifiedAt(uid)).toBeUndefined();
  }, 90_000);

  it('the running 1 s loop reports a container that exits on its own', async () => {
    const pleg = new GenericPLEG({ lister: criRuntimeLister(cri), statusSource: criPodStatusSource(cri) });
    const config = await podConfig('loop');
    const uid = config.metadata?.uid ?? '';
    const stop = new AbortController();
    await pleg.start();
    const { podSandboxId } = await cri.runtime.runPodSandbox({ config });
    const job = await createContainer(podSandboxId, config, 'job', ['sh', '-c', 'sleep 1.5; exit 4']);
    await cri.runtime.startContainer({ containerId: job });
    const seen: PodLifecycleEvent[] = [];
    const timeout = setTimeout(() => stop.abort(), 20_000);
    for await (const event of pleg.events(stop.signal)) {
      if (event.id !== uid) continue;
      seen.push(event);
      if (event.type === 'ContainerDied' && event.data === job) break;
    }
    clearTimeout(timeout);
    stop.abort();
    await pleg.stop();
    expect(seen.filter((e) => e.data === job).map((e) => e.type)).toEqual(
      // A relist may land between create and start or not: either way Started precedes Died.
      ['ContainerStarted', 'ContainerDied'],
    );
    expect(pleg.cache.get(uid).status.containerStatuses[0]).toMatchObject({
      id: job,
      exitCode: 4,
      reason: 'Error',
    });
    expect(pleg.healthy().ok).toBe(true);
    await cri.runtime.stopPodSandbox({ podSandboxId });
    await cri.runtime.removePodSandbox({ podSandboxId });
  }, 60_000);

  it('EventedPLEG falls back to relisting on containerd 1.6 UNIMPLEMENTED', async () => {
    const pleg = new EventedPLEG({
      cri,
      lister: criRuntimeLister(cri),
      statusSource: criPodStatusSource(cri),
    });
    const fallback = new Promise<[FallbackReason, Error]>((resolve) =>
      pleg.once('fallback', (r, e) => resolve([r, e])),
    );
    await pleg.start();
    const [reason, error] = await fallback;
    expect(reason).toBe('unimplemented');
    expect(error.message).toMatch(/unimplemented|unknown method/i);
    expect(pleg.generic.relistPeriodMs).toBe(1000);
    expect(pleg.generic.relistThresholdMs).toBe(180_000);

    const config = await podConfig('evented');
    const { podSandboxId } = await cri.runtime.runPodSandbox({ config });
    const stop = new AbortController();
    const timeout = setTimeout(() => stop.abort(), 15_000);
    let started: PodLifecycleEvent | undefined;
    for await (const event of pleg.events(stop.signal)) {
      if (event.data === podSandboxId) {
        started = event;
        break;
      }
    }
    clearTimeout(timeout);
    await pleg.stop();
    expect(started).toMatchObject({ id: config.metadata?.uid, type: 'ContainerStarted' });
    await cri.runtime.stopPodSandbox({ podSandboxId });
    await cri.runtime.removePodSandbox({ podSandboxId });
  }, 60_000);
});
