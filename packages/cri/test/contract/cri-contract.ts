// The CRI contract, written once and run against every runtime we support (the fake
// runtime and real containerd): what a kubelet-like client relies on, checked through our
// client over the runtime's real socket.
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import {
  ContainerEventType,
  ContainerState,
  type CriClient,
  CriError,
  createCriClient,
  hasCriCode,
  isNotFound,
  isUnimplemented,
  PodSandboxState,
} from '../../src/index.js';
import {
  CONTRACT_COMMANDS,
  CONTRACT_EXEC,
  contractContainerConfig,
  contractPodConfig,
  ipInCidr,
  MISSING_IMAGE,
  uniqueName,
  waitForContainer,
} from './contract-fixtures.js';

/** A runtime to run the contract against. */
export interface CriContractTarget {
  /** `unix:///…` socket of the runtime. */
  readonly endpoint: string;
  /** An image present on the node (busybox: sh, sleep, echo). */
  readonly imageRef: string;
  /** The CIDR pod IPs must come from, when known. */
  readonly podCidr?: string;
  /** A host directory for pod log directories (created by the contract), when the runtime runs on this host. */
  readonly podLogRoot?: string;
  /**
   * `linux.cgroup_parent` of the contract's sandboxes (cgroupfs syntax), as the kubelet always
   * sets one; containerd needs it for PodSandboxStats. @default "" (none)
   */
  readonly sandboxCgroupParent?: string;
  /** Releases the runtime. */
  teardown(): Promise<void>;
}

/** Where runtimes legitimately differ; each flag switches one assertion to its other accepted form. */
export interface CriContractCapabilities {
  /** GetContainerEvents streams events; otherwise it must fail with UNIMPLEMENTED (containerd 1.6). */
  readonly containerEvents: boolean;
  /** StopContainer/StopPodSandbox of an unknown ID succeed (CRI says idempotent); otherwise NOT_FOUND (containerd 1.6). */
  readonly stopOfUnknownSucceeds: boolean;
  /** PodSandboxStats/ListPodSandboxStats answer; otherwise UNIMPLEMENTED. */
  readonly podSandboxStats: boolean;
  /**
   * Env values that are not UTF-8 reach the process byte for byte; otherwise each invalid byte
   * arrives as U+FFFD (a runtime that writes the OCI spec through Go's JSON encoder).
   */
  readonly binaryEnvValues: boolean;
}

/** Defines the contract suite `name` against the runtime `setup()` starts. */
export function defineCriContract(
  name: string,
  setup: () => Promise<CriContractTarget>,
  capabilities: CriContractCapabilities,
): void {
  describe(`CRI contract: ${name}`, () => {
    let target: CriContractTarget;
    let cri: CriClient;
    const pods: string[] = [];
    const podConfigs = new Map<string, Awaited<ReturnType<typeof contractPodConfig>>>();

    beforeAll(async () => {
      target = await setup();
      cri = createCriClient(target.endpoint, { timeoutMs: 60_000 });
      await cri.waitForReady({ timeoutMs: 30_000 });
    });
    afterEach(async () => {
      for (const id of pods.splice(0)) {
        // Already removed by the test: containerd 1.6 answers NOT_FOUND, which is fine here.
        await cri.runtime.stopPodSandbox({ podSandboxId: id }).catch((e: unknown) => {
          if (!isNotFound(e)) throw e;
        });
        await cri.runtime.removePodSandbox({ podSandboxId: id });
      }
    });
    afterAll(async () => {
      cri?.close();
      await target?.teardown();
    });

    const runPod = async (labels: Record<string, string> = {}): Promise<string> => {
      const config = await contractPodConfig(
        uniqueName('pod'),
        target.podLogRoot,
        labels,
        target.sandboxCgroupParent,
      );
      const { podSandboxId } = await cri.runtime.runPodSandbox({ config });
      pods.push(podSandboxId);
      podConfigs.set(podSandboxId, config);
      return podSandboxId;
    };
    const createContainer = async (
      podSandboxId: string,
      argv: readonly string[],
      options: { start?: boolean; labels?: Record<string, string> } = {},
    ): Promise<string> => {
      const config = contractContainerConfig(uniqueName('ctr'), target.imageRef, argv, options.labels);
      // containerd takes the log directory from the sandbox config sent with the request.
      const sandboxConfig = podConfigs.get(podSandboxId);
      const { containerId } = await cri.runtime.createContainer({ podSandboxId, config, sandboxConfig });
      if (options.start ?? true) await cri.runtime.startContainer({ containerId });
      return containerId;
    };
    const exited = (s: { state: ContainerState }) => s.state === ContainerState.CONTAINER_EXITED;

    it('reports its version and ready conditions', async () => {
      const version = await cri.runtime.version({ version: 'v1' });
      expect(version.runtimeApiVersion).toBe('v1');
      expect(version.runtimeName).not.toBe('');
      expect(version.runtimeVersion).not.toBe('');
      const { status } = await cri.runtime.status({});
      const ready = Object.fromEntries((status?.conditions ?? []).map((c) => [c.type, c.status]));
      expect(ready).toMatchObject({ RuntimeReady: true, NetworkReady: true });
    });

    it('runs a sandbox with an IP in the pod CIDR, stops it (NOTREADY) and removes it', async () => {
      const id = await runPod({ tier: 'lifecycle' });
      const { status } = await cri.runtime.podSandboxStatus({ podSandboxId: id });
      expect(status?.state).toBe(PodSandboxState.SANDBOX_READY);
      expect(status?.labels).toMatchObject({ tier: 'lifecycle' });
      expect(status?.createdAt).toBeGreaterThan(0n);
      const ip = status?.network?.ip ?? '';
      expect(ip).toMatch(/^\d+\.\d+\.\d+\.\d+$/);
      if (target.podCidr !== undefined)
        expect(ipInCidr(ip, target.podCidr), `${ip} in ${target.podCidr}`).toBe(true);

      await cri.runtime.stopPodSandbox({ podSandboxId: id });
      const stopped = await cri.runtime.podSandboxStatus({ podSandboxId: id });
      expect(stopped.status?.state).toBe(PodSandboxState.SANDBOX_NOTREADY);
      // The network namespace is gone, and with it the IP.
      expect(stopped.status?.network?.ip ?? '').toBe('');

      await cri.runtime.removePodSandbox({ podSandboxId: id });
      pods.splice(pods.indexOf(id), 1);
      await expect(cri.runtime.podSandboxStatus({ podSandboxId: id })).rejects.toSatisfy(isNotFound);
      expect((await cri.runtime.listPodSandbox({ filter: { id } })).items).toEqual([]);
    });

    it('creates, starts, stops and removes containers, reporting real exit codes', async () => {
      const pod = await runPod();
      const failing = await createContainer(pod, CONTRACT_COMMANDS.exit3, { start: false });
      const created = await waitForContainer(cri, failing, () => true);
      expect(created.state).toBe(ContainerState.CONTAINER_CREATED);
      expect(created.startedAt).toBe(0n);
      await cri.runtime.startContainer({ containerId: failing });
      const ok = await createContainer(pod, CONTRACT_COMMANDS.exit0);

      const s3 = await waitForContainer(cri, failing, exited);
      expect(s3).toMatchObject({ exitCode: 3, reason: 'Error' });
      // No order between the two: containerd 1.6 stamps started_at after the task start
      // returns, which can be after a fast process already exited.
      expect(s3.startedAt).toBeGreaterThanOrEqual(s3.createdAt);
      expect(s3.finishedAt).toBeGreaterThanOrEqual(s3.createdAt);
      expect(s3.image?.image).toBe(target.imageRef);
      expect(s3.imageRef).not.toBe('');
      expect(await waitForContainer(cri, ok, exited)).toMatchObject({ exitCode: 0, reason: 'Completed' });

      const running = await createContainer(pod, CONTRACT_COMMANDS.sleep);
      expect((await waitForContainer(cri, running, () => true)).state).toBe(ContainerState.CONTAINER_RUNNING);
      await cri.runtime.stopContainer({ containerId: running, timeout: 0n });
      expect(await waitForContainer(cri, running, () => true)).toMatchObject({
        state: ContainerState.CONTAINER_EXITED,
        exitCode: 137,
        reason: 'Error',
      });
      for (const id of [failing, ok, running]) await cri.runtime.removeContainer({ containerId: id });
      await expect(cri.runtime.containerStatus({ containerId: running })).rejects.toSatisfy(isNotFound);
    });

    it('escalates to SIGKILL (137) only at the stop timeout for a container that ignores SIGTERM', async () => {
      const pod = await runPod();
      const stubborn = await createContainer(pod, CONTRACT_COMMANDS.ignoreTerm);
      const graceful = await createContainer(pod, CONTRACT_COMMANDS.graceful);
      await waitForContainer(cri, stubborn, (s) => s.state === ContainerState.CONTAINER_RUNNING);

      const t0 = Date.now();
      await cri.runtime.stopContainer({ containerId: stubborn, timeout: 2n });
      const tookMs = Date.now() - t0;
      expect(tookMs).toBeGreaterThanOrEqual(1900);
      expect(await waitForContainer(cri, stubborn, () => true)).toMatchObject({
        state: ContainerState.CONTAINER_EXITED,
        exitCode: 137,
      });

      await cri.runtime.stopContainer({ containerId: graceful, timeout: 20n });
      expect(await waitForContainer(cri, graceful, () => true)).toMatchObject({
        state: ContainerState.CONTAINER_EXITED,
        exitCode: 0,
        reason: 'Completed',
      });
    });

    it('runs ExecSync with separate stdout, stderr and the exit code', async () => {
      const pod = await runPod();
      const id = await createContainer(pod, CONTRACT_COMMANDS.sleep);
      const res = await cri.runtime.execSync({ containerId: id, cmd: [...CONTRACT_EXEC.argv], timeout: 10n });
      expect(res.stdout.toString()).toBe(CONTRACT_EXEC.stdout);
      expect(res.stderr.toString()).toBe(CONTRACT_EXEC.stderr);
      expect(res.exitCode).toBe(CONTRACT_EXEC.exitCode);
    });

    it('hands env values to the process as bytes (KeyValue.value is bytes since cri-api v0.36.3)', async () => {
      const pod = await runPod();
      const config = {
        ...contractContainerConfig(uniqueName('env'), target.imageRef, CONTRACT_COMMANDS.sleep),
        envs: [
          { key: 'TEXT', value: Buffer.from('héllo wörld', 'utf8') },
          { key: 'BIN', value: Buffer.from([0x41, 0xff, 0xfe, 0x42]) },
        ],
      };
      const { containerId } = await cri.runtime.createContainer({
        podSandboxId: pod,
        config,
        sandboxConfig: podConfigs.get(pod),
      });
      await cri.runtime.startContainer({ containerId });
      // `env` prints KEY=value lines as raw bytes (busybox; the fake answers from the config).
      const { stdout, exitCode } = await cri.runtime.execSync({ containerId, cmd: ['env'], timeout: 10n });
      expect(exitCode).toBe(0);
      const line = (key: string): number[] | undefined => {
        const prefix = Buffer.from(`${key}=`);
        let start = 0;
        while (start < stdout.length) {
          const end = stdout.indexOf(0x0a, start);
          const l = stdout.subarray(start, end === -1 ? stdout.length : end);
          if (l.subarray(0, prefix.length).equals(prefix)) return [...l.subarray(prefix.length)];
          start = end === -1 ? stdout.length : end + 1;
        }
        return undefined;
      };
      expect(line('TEXT')).toEqual([...Buffer.from('héllo wörld', 'utf8')]);
      expect(line('BIN')).toEqual(
        capabilities.binaryEnvValues ? [0x41, 0xff, 0xfe, 0x42] : [...Buffer.from('A\ufffd\ufffdB')],
      );
    });

    it('reports container and sandbox stats', async () => {
      const pod = await runPod();
      const id = await createContainer(pod, CONTRACT_COMMANDS.sleep);
      await waitForContainer(cri, id, (s) => s.state === ContainerState.CONTAINER_RUNNING);
      const { stats } = await cri.runtime.containerStats({ containerId: id });
      expect(stats?.attributes?.id).toBe(id);
      expect(stats?.cpu?.timestamp).toBeGreaterThan(0n);
      expect(stats?.memory?.workingSetBytes?.value).toBeGreaterThan(0n);
      const listed = await cri.runtime.listContainerStats({ filter: { podSandboxId: pod } });
      expect(listed.stats.map((s) => s.attributes?.id)).toEqual([id]);

      if (capabilities.podSandboxStats) {
        const sandbox = (await cri.runtime.podSandboxStats({ podSandboxId: pod })).stats;
        expect(sandbox?.attributes?.id).toBe(pod);
        const all = await cri.runtime.listPodSandboxStats({ filter: { id: pod } });
        expect(all.stats.map((s) => s.attributes?.id)).toEqual([pod]);
      } else {
        await expect(cri.runtime.podSandboxStats({ podSandboxId: pod })).rejects.toSatisfy(isUnimplemented);
      }
    });

    it('lists and inspects the imported image, and reports image filesystem usage', async () => {
      const { images } = await cri.image.listImages({});
      const image = images.find((i) => i.repoTags.includes(target.imageRef));
      expect(image, `${target.imageRef} in ${images.flatMap((i) => i.repoTags).join(', ')}`).toBeDefined();
      expect(image?.id).toMatch(/^sha256:[0-9a-f]{64}$/);
      expect(image?.size).toBeGreaterThan(0n);
      const byRef = await cri.image.imageStatus({ image: { image: target.imageRef } });
      expect(byRef.image?.id).toBe(image?.id);
      const byId = await cri.image.imageStatus({ image: { image: image?.id ?? '' } });
      expect(byId.image?.repoTags).toContain(target.imageRef);
      const filtered = await cri.image.listImages({ filter: { image: { image: target.imageRef } } });
      expect(filtered.images.map((i) => i.id)).toEqual([image?.id]);
      const fs = await cri.image.imageFsInfo({});
      expect(fs.imageFilesystems.length).toBeGreaterThan(0);
      // containerd samples snapshotter usage every 10 s, so a fresh node may still report 0.
      expect(fs.imageFilesystems[0]?.usedBytes?.value).toBeGreaterThanOrEqual(0n);
      expect(fs.imageFilesystems[0]?.fsId?.mountpoint).not.toBe('');
    });

    it('fails to pull an image that does not exist with a clear CriError, and reports it absent', async () => {
      const error = await cri.image
        .pullImage({ image: { image: MISSING_IMAGE } }, { timeoutMs: 60_000 })
        .then(
          () => undefined,
          (e: unknown) => e,
        );
      expect(error).toBeInstanceOf(CriError);
      const e = error as CriError;
      expect(e.rpc).toMatch(/PullImage/);
      expect(e.code).not.toBe('OK');
      expect(e.details).toContain(MISSING_IMAGE);
      expect((await cri.image.imageStatus({ image: { image: MISSING_IMAGE } })).image).toBeUndefined();
    });

    it('treats stop and remove as idempotent', async () => {
      const pod = await runPod();
      const id = await createContainer(pod, CONTRACT_COMMANDS.sleep);
      await cri.runtime.stopContainer({ containerId: id, timeout: 0n });
      await cri.runtime.stopContainer({ containerId: id, timeout: 0n });
      await cri.runtime.removeContainer({ containerId: id });
      await cri.runtime.removeContainer({ containerId: id });
      await cri.runtime.stopPodSandbox({ podSandboxId: pod });
      await cri.runtime.stopPodSandbox({ podSandboxId: pod });
      await cri.runtime.removePodSandbox({ podSandboxId: pod });
      await cri.runtime.removePodSandbox({ podSandboxId: pod });
      pods.splice(pods.indexOf(pod), 1);

      const unknown = 'f'.repeat(64);
      await cri.runtime.removeContainer({ containerId: unknown });
      await cri.runtime.removePodSandbox({ podSandboxId: unknown });
      await cri.image.removeImage({ image: { image: `sha256:${'0'.repeat(64)}` } });
      const stopUnknown = [
        () => cri.runtime.stopContainer({ containerId: unknown, timeout: 0n }),
        () => cri.runtime.stopPodSandbox({ podSandboxId: unknown }),
      ];
      for (const call of stopUnknown) {
        if (capabilities.stopOfUnknownSucceeds) await call();
        else await expect(call()).rejects.toSatisfy(isNotFound);
      }
    });

    it('filters sandbox and container lists by id prefix, state, sandbox and labels', async () => {
      const tag = uniqueName('filter');
      const podA = await runPod({ filter: tag, which: 'a' });
      const podB = await runPod({ filter: tag, which: 'b' });
      await cri.runtime.stopPodSandbox({ podSandboxId: podB });
      const created = await createContainer(podA, CONTRACT_COMMANDS.sleep, {
        start: false,
        labels: { role: 'x' },
      });
      const running = await createContainer(podA, CONTRACT_COMMANDS.sleep, { labels: { role: 'y' } });

      const sandboxIds = async (filter: Record<string, unknown>) =>
        (await cri.runtime.listPodSandbox({ filter })).items.map((s) => s.id).sort();
      expect(await sandboxIds({ labelSelector: { filter: tag } })).toEqual([podA, podB].sort());
      expect(await sandboxIds({ labelSelector: { filter: tag, which: 'b' } })).toEqual([podB]);
      expect(await sandboxIds({ id: podA.slice(0, 12) })).toEqual([podA]);
      expect(
        await sandboxIds({ labelSelector: { filter: tag }, state: { state: PodSandboxState.SANDBOX_READY } }),
      ).toEqual([podA]);

      const containerIds = async (filter: Record<string, unknown>) =>
        (await cri.runtime.listContainers({ filter })).containers.map((c) => c.id).sort();
      expect(await containerIds({ podSandboxId: podA })).toEqual([created, running].sort());
      expect(await containerIds({ id: running.slice(0, 12) })).toEqual([running]);
      expect(
        await containerIds({ podSandboxId: podA, state: { state: ContainerState.CONTAINER_CREATED } }),
      ).toEqual([created]);
      expect(await containerIds({ podSandboxId: podA, labelSelector: { role: 'y' } })).toEqual([running]);
      expect(await containerIds({ podSandboxId: podB })).toEqual([]);
    });

    it(
      capabilities.containerEvents
        ? 'streams container events with the sandbox and container statuses'
        : 'answers GetContainerEvents with UNIMPLEMENTED, surfaced as a typed error',
      async () => {
        const controller = new AbortController();
        const events: { id: string; type: ContainerEventType; sandbox: string | undefined }[] = [];
        const stream = (async () => {
          for await (const e of cri.runtime.getContainerEvents({}, { signal: controller.signal })) {
            events.push({ id: e.containerId, type: e.containerEventType, sandbox: e.podSandboxStatus?.id });
          }
        })();
        if (!capabilities.containerEvents) {
          const error = await stream.then(
            () => undefined,
            (e: unknown) => e,
          );
          expect(isUnimplemented(error), String(error)).toBe(true);
          expect(hasCriCode(error, 'UNIMPLEMENTED') && error.rpc).toMatch(/GetContainerEvents/);
          return;
        }
        await new Promise((resolve) => setTimeout(resolve, 200)); // let the subscription reach the runtime
        const pod = await runPod();
        const id = await createContainer(pod, CONTRACT_COMMANDS.sleep);
        await cri.runtime.stopContainer({ containerId: id, timeout: 0n });
        await cri.runtime.removeContainer({ containerId: id });
        const deadline = Date.now() + 10_000;
        while (events.filter((e) => e.id === id).length < 4 && Date.now() < deadline) {
          await new Promise((resolve) => setTimeout(resolve, 50));
        }
        controller.abort();
        await stream;
        const mine = events.filter((e) => e.id === id);
        expect(mine.map((e) => e.type)).toEqual([
          ContainerEventType.CONTAINER_CREATED_EVENT,
          ContainerEventType.CONTAINER_STARTED_EVENT,
          ContainerEventType.CONTAINER_STOPPED_EVENT,
          ContainerEventType.CONTAINER_DELETED_EVENT,
        ]);
        expect(mine.every((e) => e.sandbox === pod)).toBe(true);
      },
    );
  });
}
