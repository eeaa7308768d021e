/**
 * {@link KubeRuntimeManager}: the kubelet's `kubeGenericRuntimeManager` — turns a pod spec and
 * its runtime status into CRI calls (`syncPod`), kills pods gracefully, computes the API
 * status. Everything it needs is read back from the runtime, so a restarted agent adopts
 * what an earlier one started.
 *
 * @module
 */
import { mkdirSync } from 'node:fs';
import type { V1Container, V1Pod, V1PodStatus, V1Secret } from '@kubernetes/client-node';
import {
  type Clock,
  definedFields,
  formatGoDuration,
  KeyedBackoff,
  type Logger,
  noopLogger,
  realClock,
} from '@nodeagent/core';
import { isNotFound, type PodSandboxConfig } from '@nodeagent/cri';
import {
  criPodStatusSource,
  formatFieldError,
  isRestartableInitContainer,
  type PodStatus,
  type PodStatusSource,
} from '@nodeagent/kubecontainer';
import { formatPod, stableContainerKey } from './container-hash.js';
import { ContainerStarter, type Prefetched } from './container-starter.js';
import { errorMessage, SyncErrorReason, SyncStepError } from './errors.js';
import { type RuntimeEventRecorder, safeRecorder } from './event-recorder.js';
import { podHostPathErrors } from './host-path-validation.js';
import { ImagePuller } from './image-puller.js';
import { type KillDeps, killContainer, killPod } from './kill.js';
import { createRuntimeMetrics, type RuntimeMetrics } from './metrics.js';
import { DEFAULT_POD_LOGS_ROOT, DEFAULT_PODS_ROOT } from './paths.js';
import { computePodActions } from './pod-actions.js';
import { computePodStatus } from './pod-status.js';
import type { PodStatusOptions } from './pod-status-options.js';
import { ReasonCache } from './reason-cache.js';
import type { KubeRuntimeManagerOptions } from './runtime-manager-options.js';
import { generatePodSandboxConfig } from './sandbox-config.js';
import { newestFirst } from './status-order.js';
import { DEFAULT_IMAGE_PULL_BACK_OFF_REQUEUE_MS, type SyncOutcome, syncOutcome } from './sync-back-off.js';
import { PodSyncResult } from './sync-result.js';
import { readTerminationMessage } from './termination-message.js';

/**
 * The runtime manager. Stateless toward the runtime: everything it needs is read back from
 * CRI (labels, annotations, restart counts, attempts), so a new instance adopts whatever an
 * earlier one started.
 *
 * @example
 * ```ts
 * const manager = new KubeRuntimeManager({ cri: createCriClient(endpoint) });
 * const status = await manager.getPodStatus(pod);
 * const result = await manager.syncPod(pod, status);
 * if (result.error()) console.error(result.error());
 * ```
 */
export class KubeRuntimeManager {
  /** CrashLoopBackOff state (upstream `backOff` passed to SyncPod). */
  readonly crashLoopBackOff: KeyedBackoff;
  /** Last start failure per container, for the waiting reasons of the status. */
  readonly reasonCache = new ReasonCache();
  readonly #clock: Clock;
  readonly #log: Logger;
  readonly #puller: ImagePuller;
  readonly #starter: ContainerStarter;
  readonly #source: PodStatusSource;
  readonly #podsRoot: string;
  readonly #podLogsRoot: string;
  #metrics: RuntimeMetrics | undefined;

  readonly #options: KubeRuntimeManagerOptions;
  readonly #record: RuntimeEventRecorder;
  #runtimeName: string | undefined;

  constructor(options: KubeRuntimeManagerOptions) {
    this.#options = options;
    this.#runtimeName = options.runtimeName;
    this.#clock = options.clock ?? realClock;
    this.#log = (options.logger ?? noopLogger).child({ component: 'kuberuntime' });
    this.#podsRoot = options.podsRoot ?? DEFAULT_PODS_ROOT;
    this.#podLogsRoot = options.podLogsRoot ?? DEFAULT_POD_LOGS_ROOT;
    this.#record = safeRecorder(options.recorder, this.#log);
    const crash = options.crashLoopBackOff ?? {};
    this.crashLoopBackOff = new KeyedBackoff({
      initialMs: crash.initialMs ?? 10_000,
      maxMs: crash.maxMs ?? 300_000,
      resetAfterMs: crash.resetAfterMs ?? 600_000,
      clock: this.#clock,
    });
    const pull = options.imagePullBackOff ?? {};
    const pullBackoff = new KeyedBackoff({
      initialMs: pull.initialMs ?? 10_000,
      maxMs: pull.maxMs ?? 300_000,
      clock: this.#clock,
    });
    this.#puller = new ImagePuller({
      cri: options.cri,
      backoff: pullBackoff,
      logger: this.#log,
      now: () => this.#clock.now(),
      metrics: () => this.#metrics,
      recorder: this.#record,
      ...definedFields({ maxParallelImagePulls: options.maxParallelImagePulls }),
    });
    this.#source =
      options.podStatusSource ??
      criPodStatusSource(options.cri, { clock: this.#clock, terminationMessage: readTerminationMessage });
    this.#starter = new ContainerStarter({
      options,
      clock: this.#clock,
      logger: this.#log,
      puller: this.#puller,
      podsRoot: this.#podsRoot,
      podLogsRoot: this.#podLogsRoot,
      getPodStatus: (pod) => this.getPodStatus(pod),
      killDeps: () => this.#killDeps(),
      recorder: this.#record,
    });
  }

  /** Reads a pod's runtime status (what PLEG would cache). */
  async getPodStatus(pod: V1Pod, signal?: AbortSignal): Promise<PodStatus> {
    await this.runtimeName();
    const m = pod.metadata;
    return this.#source.getPodStatus(m?.uid ?? '', m?.name ?? '', m?.namespace ?? '', signal);
  }

  /**
   * The runtime's name as container IDs carry it (`containerd` in `containerd://<id>`,
   * `cri-o`, the fake's `fakeRuntime`): `Version().runtime_name`, asked once and kept (upstream
   * reads it when the runtime manager is created). `undefined` while the runtime has not
   * answered; the next call asks again.
   */
  async runtimeName(): Promise<string | undefined> {
    if (this.#runtimeName !== undefined) return this.#runtimeName;
    try {
      const v = await this.#options.cri.runtime.version({ version: 'v1' });
      if (v.runtimeName !== '') this.#runtimeName = v.runtimeName;
    } catch (err) {
      this.#log.debug({ err: errorMessage(err) }, 'Runtime version not known yet');
    }
    return this.#runtimeName;
  }

  #killDeps(): KillDeps {
    return {
      cri: this.#options.cri,
      clock: this.#clock,
      logger: this.#log,
      runtimeRequestTimeoutMs: this.#options.runtimeRequestTimeoutMs ?? 120_000,
      recorder: this.#record,
      ...definedFields({ httpGet: this.#options.httpGet }),
    };
  }

  #ensureMetrics(): void {
    if (this.#options.metrics === undefined || this.#metrics !== undefined) return;
    this.#metrics = createRuntimeMetrics(this.#options.metrics);
  }

  /**
   * Moves the pod toward its spec (upstream `SyncPod`): compute actions, kill what must go,
   * create the sandbox, start init containers then containers, honouring CrashLoopBackOff.
   * Failures are reported in the result (and the reason cache), never thrown.
   */
  async syncPod(
    pod: V1Pod,
    podStatus: PodStatus,
    pullSecrets: readonly V1Secret[] = [],
    backoff: KeyedBackoff = this.crashLoopBackOff,
  ): Promise<PodSyncResult> {
    this.#ensureMetrics();
    await this.runtimeName();
    const result = new PodSyncResult();
    try {
      await this.#doSyncPod(pod, newestFirst(podStatus), pullSecrets, backoff, result);
    } catch (err) {
      result.syncError = err instanceof Error ? err : new Error(String(err));
    }
    const uid = pod.metadata?.uid ?? '';
    for (const r of result.results) {
      if (r.action !== 'StartContainer') continue;
      if (r.error === undefined) this.reasonCache.remove(uid, r.target);
      else this.reasonCache.add(uid, r.target, { reason: r.error.reason, message: r.error.message });
    }
    return result;
  }

  async #doSyncPod(
    pod: V1Pod,
    podStatus: PodStatus,
    pullSecrets: readonly V1Secret[],
    backoff: KeyedBackoff,
    result: PodSyncResult,
  ): Promise<void> {
    const actions = computePodActions(pod, podStatus, this.#options.probes ?? {});
    const log = this.#log.child({ pod: `${pod.metadata?.namespace}/${pod.metadata?.name}` });
    log.debug(
      { actions: { ...actions, containersToKill: actions.containersToKill.map((k) => k.name) } },
      'computed pod actions',
    );
    if (actions.killPod) {
      if (actions.createSandbox && actions.sandboxId !== '') {
        this.#record(
          pod,
          undefined,
          'Normal',
          'SandboxChanged',
          'Pod sandbox changed, it will be killed and re-created.',
        );
      }
      const killResult = await killPod(this.#killDeps(), pod, podStatus);
      result.results.push(...killResult.results);
      if (killResult.error() !== undefined) return;
      if (actions.createSandbox) await this.#purgeInitContainers(pod, podStatus);
    } else {
      for (const k of actions.containersToKill) {
        const step = result.add('KillContainer', k.name);
        const status = podStatus.containerStatuses.find((c) => c.id === k.id);
        if (status === undefined) continue;
        try {
          await killContainer(this.#killDeps(), pod, status, {
            message: k.message,
            reason: k.reason,
            podIp: podStatus.ips[0] ?? '',
          });
        } catch (err) {
          step.error =
            err instanceof SyncStepError
              ? err
              : new SyncStepError(SyncErrorReason.KillContainerError, errorMessage(err));
          return;
        }
      }
    }
    await this.#pruneInitContainersBeforeStart(pod, podStatus);

    let podIps = [...podStatus.ips];
    let sandboxId = actions.sandboxId;
    const prefetched = new Map<string, Prefetched>();
    // The config a new sandbox was made with: the containers get the same one (upstream
    // generates it again from the same pod and attempt, with the same result).
    let createdWith: PodSandboxConfig | undefined;
    if (actions.createSandbox) {
      // While the (slow) sandbox is created: ask for the images and prepare the node side of
      // the containers; neither depends on the sandbox.
      const starting = [
        ...actions.initContainersToStart.map((i) => pod.spec?.initContainers?.[i]),
        ...actions.containersToStart.map((i) => pod.spec?.containers[i]),
      ].filter((c): c is V1Container => c !== undefined);
      // Nothing is created on the node for a pod whose names would leave the pod directories.
      const unsafe = podHostPathErrors(pod)[0];
      if (unsafe !== undefined) {
        const message = `invalid pod spec: ${formatFieldError(unsafe)}`;
        for (const c of starting) {
          result.add('StartContainer', c.name).error = new SyncStepError(
            SyncErrorReason.CreateContainerConfigError,
            message,
          );
        }
        return;
      }
      // The sandbox first (the critical path, as upstream's order), then the rest while it is made.
      const step = result.add('CreatePodSandbox', formatPod(pod));
      let creating: Promise<string | Error>;
      try {
        const config = await this.#preparePodSandbox(pod, actions.attempt);
        createdWith = config;
        creating = this.#runPodSandbox(config).catch((err: unknown) => err as Error);
      } catch (err) {
        creating = Promise.resolve(err as Error);
      }
      const images = this.#puller.prefetch(starting);
      for (const c of starting) {
        const prepared = this.#starter.prepare(pod, c, podStatus);
        prepared.catch(() => {}); // consumed (and reported) when the container is started
        prefetched.set(c.name, { image: images.get(c.image ?? ''), prepared });
      }
      const created = await creating;
      if (typeof created !== 'string') {
        if (this.#options.isPodTerminationRequested?.(pod.metadata?.uid ?? '')) return;
        this.#record(
          pod,
          undefined,
          'Warning',
          'FailedCreatePodSandBox',
          `Failed to create pod sandbox: ${errorMessage(created)}`,
        );
        step.error = new SyncStepError(
          SyncErrorReason.CreatePodSandboxError,
          `Failed to create pod sandbox: ${errorMessage(created)}`,
          { cause: created },
        );
        return;
      }
      sandboxId = created;
      step.runtimeId = created;
      const status = await this.#options.cri.runtime.podSandboxStatus({ podSandboxId: sandboxId });
      if (status.status === undefined) throw new Error('pod sandbox status is nil');
      if (pod.spec?.hostNetwork !== true) {
        const net = status.status.network;
        podIps = net === undefined || net.ip === '' ? [] : [net.ip, ...net.additionalIps.map((a) => a.ip)];
      }
    }
    // As the kubelet (SyncPod takes them from the API status): a host-network pod's IPs are the node's.
    if (pod.spec?.hostNetwork === true && podIps.length === 0) podIps = [...(this.#options.hostIps ?? [])];
    const configStep = result.add('ConfigPodSandbox', sandboxId);
    let sandboxConfig: PodSandboxConfig;
    try {
      sandboxConfig = createdWith ?? generatePodSandboxConfig(pod, actions.attempt, this.#options);
    } catch (err) {
      configStep.error = new SyncStepError(
        SyncErrorReason.ConfigPodSandboxError,
        `GeneratePodSandboxConfig for pod "${formatPod(pod)}" failed: ${errorMessage(err)}`,
      );
      return;
    }
    const start = async (container: V1Container, type: 'container' | 'init_container'): Promise<boolean> => {
      const step = result.add('StartContainer', container.name);
      const inBackOff = this.#doBackOff(pod, container, podStatus, backoff);
      if (inBackOff !== undefined) {
        step.error = inBackOff;
        log.debug({ container: container.name }, 'Backing Off restarting container in pod');
        return false;
      }
      try {
        const known = prefetched.get(container.name);
        prefetched.delete(container.name);
        await this.#starter.start(
          sandboxId,
          sandboxConfig,
          container,
          pod,
          podStatus,
          pullSecrets,
          podIps,
          known,
          step,
        );
        this.#metrics?.startedContainer(type);
        return true;
      } catch (err) {
        const e =
          err instanceof SyncStepError
            ? err
            : new SyncStepError(SyncErrorReason.RunContainerError, errorMessage(err));
        this.#metrics?.startedContainer(type, e.reason);
        step.error = e;
        log.info({ container: container.name, reason: e.reason, err: e.message }, 'container start failed');
        return false;
      }
    };
    for (const idx of actions.initContainersToStart) {
      const container = pod.spec?.initContainers?.[idx];
      if (container === undefined) continue;
      if (!(await start(container, 'init_container')) && !isRestartableInitContainer(container)) return;
    }
    for (const idx of actions.containersToStart) {
      const container = pod.spec?.containers[idx];
      if (container !== undefined) await start(container, 'container');
    }
  }

  /** CrashLoopBackOff check (upstream `doBackOff`); returns the error while in backoff. */
  #doBackOff(
    pod: V1Pod,
    container: V1Container,
    podStatus: PodStatus,
    backoff: KeyedBackoff,
  ): SyncStepError | undefined {
    const exited = podStatus.containerStatuses.find((c) => c.name === container.name && c.state === 'exited');
    if (exited === undefined) return undefined;
    const key = stableContainerKey(pod, container);
    if (backoff.isInBackOffSince(key, exited.finishedAt)) {
      this.#record(
        pod,
        container,
        'Warning',
        'BackOff',
        `Back-off restarting failed container ${container.name} in pod ${formatPod(pod)}`,
      );
      return new SyncStepError(
        SyncErrorReason.CrashLoopBackOff,
        `back-off ${formatGoDuration(backoff.get(key))} restarting failed container=${container.name} pod=${formatPod(pod)}`,
      );
    }
    backoff.next(key, exited.finishedAt);
    return undefined;
  }

  /** The sandbox config, with its log directory made (upstream's `createPodSandbox` does both first). */
  async #preparePodSandbox(pod: V1Pod, attempt: number): Promise<PodSandboxConfig> {
    const config = generatePodSandboxConfig(pod, attempt, this.#options);
    // Synchronous: one directory on the node's disk, right before RunPodSandbox.
    mkdirSync(config.logDirectory, { recursive: true, mode: 0o755 });
    return config;
  }

  async #runPodSandbox(config: PodSandboxConfig): Promise<string> {
    const begin = this.#clock.now();
    try {
      const res = await this.#options.cri.runtime.runPodSandbox({ config });
      this.#metrics?.observeRunPodSandbox((this.#clock.now() - begin) / 1000, false);
      this.#metrics?.startedPod(false);
      return res.podSandboxId;
    } catch (err) {
      this.#metrics?.observeRunPodSandbox((this.#clock.now() - begin) / 1000, true);
      this.#metrics?.startedPod(true);
      throw err;
    }
  }

  async #purgeInitContainers(pod: V1Pod, podStatus: PodStatus): Promise<void> {
    const names = new Set((pod.spec?.initContainers ?? []).map((c) => c.name));
    for (const c of podStatus.containerStatuses) {
      if (names.has(c.name)) await this.#removeContainer(c.id);
    }
  }

  async #pruneInitContainersBeforeStart(pod: V1Pod, podStatus: PodStatus): Promise<void> {
    for (const ic of pod.spec?.initContainers ?? []) {
      let count = 0;
      for (const c of podStatus.containerStatuses) {
        if (c.name !== ic.name || (c.state !== 'exited' && c.state !== 'unknown')) continue;
        count++;
        if (count > 1) await this.#removeContainer(c.id);
      }
    }
  }

  async #removeContainer(id: string): Promise<void> {
    try {
      await this.#options.cri.runtime.removeContainer({ containerId: id });
    } catch (err) {
      if (!isNotFound(err))
        this.#log.warn({ containerId: id, err: errorMessage(err) }, 'failed to remove container');
    }
  }

  /**
   * Kills a pod (upstream `KillPod`): preStop hooks, graceful stops with sidecars last in
   * reverse order, then the sandboxes. `pod` may be undefined for an orphan found in the runtime.
   */
  async killPod(
    pod: V1Pod | undefined,
    podStatus: PodStatus,
    gracePeriodOverrideSeconds?: number,
  ): Promise<PodSyncResult> {
    return killPod(this.#killDeps(), pod, podStatus, gracePeriodOverrideSeconds);
  }

  /** Kills one container of the pod gracefully (see {@link killContainer}). */
  async killContainer(
    pod: V1Pod | undefined,
    podStatus: PodStatus,
    containerId: string,
    message = '',
    gracePeriodOverrideSeconds?: number,
  ): Promise<void> {
    const c = podStatus.containerStatuses.find((s) => s.id === containerId);
    if (c === undefined) return;
    await killContainer(this.#killDeps(), pod, c, {
      message,
      gracePeriodOverrideSeconds,
      podIp: podStatus.ips[0] ?? '',
    });
  }

  /**
   * The pod's API status (see {@link computePodStatus}), with this manager's reason cache and
   * clock, and the runtime's name (see {@link KubeRuntimeManager.runtimeName}) in container IDs.
   */
  computePodStatus(
    pod: V1Pod,
    podStatus: PodStatus,
    options: Omit<PodStatusOptions, 'reasonCache' | 'now'> = {},
  ): V1PodStatus {
    return computePodStatus(pod, podStatus, {
      hostIps: this.#options.hostIps ?? [],
      ...definedFields({ probes: this.#options.probes, runtimeName: this.#runtimeName }),
      ...options,
      reasonCache: this.reasonCache,
      now: this.#clock.now(),
    });
  }

  /** The CrashLoopBackOff delay of a container now, ms (0 when not backing off). */
  backOffDelayMs(pod: V1Pod, container: V1Container): number {
    return this.crashLoopBackOff.get(stableContainerKey(pod, container));
  }

  /**
   * What the pod worker does after {@link KubeRuntimeManager.syncPod} (upstream kubelet
   * `SyncPod`): a result whose only failures are CrashLoopBackOff / ImagePullBackOff is no
   * error, and the pod is due again when the first back-off expires (`requeueAfterMs`); any
   * other failure is the `error` to throw, which the pod workers retry after `backOffPeriod`.
   *
   * @example
   * ```ts
   * const { error, requeueAfterMs } = manager.syncOutcome(pod, status, await manager.syncPod(pod, status));
   * if (error !== undefined) throw error;
   * return { isTerminal: false, requeueAfterMs };
   * ```
   */
  syncOutcome(pod: V1Pod, status: PodStatus, result: PodSyncResult): SyncOutcome {
    return syncOutcome(pod, status, result, {
      nowMs: this.#clock.now(),
      crashLoopDelayMs: (p, c) => this.backOffDelayMs(p, c),
      imagePullBackOffMs: this.#options.imagePullBackOff?.initialMs ?? DEFAULT_IMAGE_PULL_BACK_OFF_REQUEUE_MS,
    });
  }
}
