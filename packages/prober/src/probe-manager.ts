/**
 * The prober manager (upstream `prober_manager.go`): one worker per (pod UID, container,
 * probe type) for regular containers and sidecars, the three result caches, the typed events
 * the runtime side acts on, and `updatePodStatus`.
 *
 * @module
 */
import type { V1Container, V1Pod, V1PodStatus, V1Probe } from '@kubernetes/client-node';
import {
  type Clock,
  InvalidOptionsError,
  type Logger,
  noopLogger,
  realClock,
  StartOnce,
} from '@nodeagent/core';
import { isRestartableInitContainer, terminationGracePeriodSeconds } from '@nodeagent/kubecontainer';
import { EventEmitter } from 'eventemitter3';
import { createProberMetrics } from './metrics.js';
import { applyProbeResults } from './pod-status.js';
import { DEFAULT_USER_AGENT, type ProbeManagerOptions } from './probe-manager-options.js';
import type { ProbeResult, ProbeType } from './probe-types.js';
import { ResultsManager, runtimeContainerId } from './results-manager.js';
import { TickScheduler } from './tick-scheduler.js';
import { ProbeWorker, type WorkerHost } from './worker.js';

/** A published result changed (upstream `results.Update`, sent only on change). */
export interface ProbeResultUpdate {
  /** Which probe. */
  readonly probeType: ProbeType;
  /** The new result. */
  readonly result: ProbeResult;
  /** The container ID as the API shows it (`containerd://…`). */
  readonly containerID: string;
  /** The container's name. */
  readonly containerName: string;
  /** The pod. */
  readonly pod: V1Pod;
}

/**
 * A liveness or startup probe failed past its threshold: the runtime manager must kill this
 * container (with `gracePeriodSeconds`) and, by the restart policy, start it again.
 */
export interface RestartRequest {
  /** `liveness` or `startup`. */
  readonly probeType: 'liveness' | 'startup';
  /** The kubelet's kill reason (`LivenessProbe`, `StartupProbe`). */
  readonly reason: 'LivenessProbe' | 'StartupProbe';
  /**
   * The kubelet's kill message, e.g. `Container web failed liveness probe` (it appends
   * `, will be restarted` when the restart policy restarts it).
   */
  readonly message: string;
  /**
   * Grace period of the kill, seconds (upstream `setTerminationGracePeriod`): the pod's deletion
   * grace, else the probe's `terminationGracePeriodSeconds`, else the pod's, else 2.
   */
  readonly gracePeriodSeconds: number;
  /** The container ID as the API shows it. */
  readonly containerID: string;
  /** The container's name. */
  readonly containerName: string;
  /** The pod. */
  readonly pod: V1Pod;
}

/** One probe run that reached the probe action (for observation, tests and benchmarks). */
export interface ProbeAttempt {
  /** Which probe. */
  readonly probeType: ProbeType;
  /** The pod's UID. */
  readonly podUID: string;
  /** The container's name. */
  readonly containerName: string;
  /** When the worker started this iteration, ms since the epoch (the manager's clock). */
  readonly startedAtMs: number;
  /** How long it took, ms. */
  readonly durationMs: number;
  /** The prober's verdict before thresholds. */
  readonly result: 'success' | 'failure';
  /** The probe's output (the failure message, the body of a success). */
  readonly output: string;
  /** Set when the probe errored (the result is then discarded). */
  readonly error: Error | undefined;
}

/** Events of {@link ProbeManager}. */
export interface ProbeManagerEvents {
  /** A result changed. */
  result: [update: ProbeResultUpdate];
  /** A container must be restarted (liveness or startup failure). */
  restart: [request: RestartRequest];
  /** A probe ran. */
  probe: [attempt: ProbeAttempt];
}

const key = (uid: string, name: string, type: ProbeType): string => `${uid}\u0000${name}\u0000${type}`;

/**
 * Runs the liveness, readiness and startup probes of the pods it is given, like the kubelet's
 * prober manager. It reports; the runtime side acts: readiness and startup become
 * `containerStatuses[].ready` / `started` through {@link ProbeManager.updatePodStatus}, and a
 * liveness or startup failure is a {@link RestartRequest} (`restart` event,
 * {@link ProbeManager.restartRequest}).
 *
 * @example
 * ```ts
 * const manager = new ProbeManager({ statusProvider: { getPodStatus: (uid) => statuses.get(uid) } });
 * manager.on('restart', (r) => console.log(r.message, r.gracePeriodSeconds));
 * await manager.start();
 * manager.addPod(pod);
 * ```
 */
export class ProbeManager extends EventEmitter<ProbeManagerEvents> {
  /** Readiness results by container ID. */
  readonly readiness = new ResultsManager();
  /** Liveness results by container ID. */
  readonly liveness = new ResultsManager();
  /** Startup results by container ID. */
  readonly startup = new ResultsManager();
  readonly #once = new StartOnce('ProbeManager');
  readonly #workers = new Map<string, ProbeWorker>();
  readonly #restarts = new Map<string, RestartRequest>();
  readonly #host: WorkerHost;
  readonly #clock: Clock;
  readonly #logger: Logger;
  readonly #statusProvider: ProbeManagerOptions['statusProvider'];
  #running = false;
  #stopped = false;

  /** @throws `InvalidOptionsError` (from `@nodeagent/core`) for a missing status provider or a bad option. */
  constructor(options: ProbeManagerOptions) {
    super();
    if (options == null || typeof options.statusProvider?.getPodStatus !== 'function') {
      throw new InvalidOptionsError('ProbeManager', 'statusProvider must have a getPodStatus(uid) method');
    }
    const slack = options.runtimeRequestTimeoutMs ?? 120_000;
    if (!(slack >= 0) || !Number.isFinite(slack)) {
      throw new InvalidOptionsError(
        'ProbeManager',
        `runtimeRequestTimeoutMs must be a finite number >= 0, got ${slack}`,
      );
    }
    const userAgent = options.userAgent ?? DEFAULT_USER_AGENT;
    if (typeof userAgent !== 'string' || userAgent === '') {
      throw new InvalidOptionsError(
        'ProbeManager',
        `userAgent must be a non-empty string, got ${JSON.stringify(userAgent)}`,
      );
    }
    this.#clock = options.clock ?? realClock;
    this.#logger = options.logger ?? noopLogger;
    this.#statusProvider = options.statusProvider;
    this.#host = {
      clock: this.#clock,
      logger: this.#logger,
      userAgent,
      runtimeRequestTimeoutMs: slack,
      commandRunner: options.commandRunner,
      recorder: options.recorder,
      metrics: createProberMetrics(options.metrics),
      random: options.random ?? Math.random,
      scheduler: new TickScheduler(this.#clock, this.#logger),
      startedAtMs: 0,
      getPodStatus: (uid) => this.#statusProvider.getPodStatus(uid),
      publish: (w, id, result) => this.#publish(w, id, result),
      unpublish: (w, id) => this.#unpublish(w, id),
      exited: (w) => this.#exited(w),
      probed: (w, startedAtMs, durationMs, result, output, error) => {
        if (this.listenerCount('probe') === 0) return;
        this.#emit('probe', {
          probeType: w.type,
          podUID: w.pod.metadata?.uid ?? '',
          containerName: w.container.name,
          startedAtMs,
          durationMs,
          result,
          output,
          error,
        });
      },
    };
  }

  /** Starts probing (workers added before `start` begin now). Resolves at once. */
  start(signal?: AbortSignal): Promise<void> {
    return this.#once.run(
      signal,
      async () => {
        if (this.#stopped) return;
        (this.#host as { startedAtMs: number }).startedAtMs = this.#clock.now();
        this.#running = true;
        for (const w of this.#workers.values()) w.start();
      },
      () => this.stop(),
    );
  }

  /** Stops every worker and forgets every result. Idempotent; safe before `start`. */
  async stop(): Promise<void> {
    this.#stopped = true;
    this.#running = false;
    for (const w of [...this.#workers.values()]) w.stop();
  }

  /** Number of workers. */
  get workerCount(): number {
    return this.#workers.size;
  }

  /**
   * Creates workers for every probe of the pod's regular containers and restartable init
   * containers (sidecars); plain init containers are never probed. Workers that exist are kept
   * (their pod object is refreshed, so a deletion timestamp is seen); probe specs do not change.
   */
  addPod(pod: V1Pod): void {
    if (this.#stopped) return;
    const uid = pod.metadata?.uid ?? '';
    // Malformed objects (from a file, an old server) must not throw here: skip what is not a container.
    const list = (value: unknown): V1Container[] =>
      Array.isArray(value) ? value.filter((c): c is V1Container => typeof c === 'object' && c !== null) : [];
    const containers = [
      ...list(pod.spec?.containers),
      ...list(pod.spec?.initContainers).filter((c) => isRestartableInitContainer(c)),
    ];
    for (const c of containers) {
      for (const type of ['startup', 'readiness', 'liveness'] as const) {
        const probe = probeOf(c, type);
        if (probe == null) continue;
        const k = key(uid, c.name, type);
        const existing = this.#workers.get(k);
        if (existing !== undefined) {
          existing.pod = pod;
          continue;
        }
        const w = new ProbeWorker(this.#host, type, pod, c, probe);
        this.#workers.set(k, w);
        if (this.#running) w.start();
      }
    }
  }

  /** Stops the liveness and startup workers of a terminating pod; readiness goes on. */
  stopLivenessAndStartup(pod: V1Pod): void {
    const uid = pod.metadata?.uid ?? '';
    for (const c of Array.isArray(pod.spec?.containers) ? pod.spec.containers : []) {
      for (const type of ['liveness', 'startup'] as const) this.#workers.get(key(uid, c.name, type))?.stop();
    }
  }

  /** Stops every worker of the pod and removes its results. */
  removePod(pod: V1Pod): void {
    this.#removeUID(pod.metadata?.uid ?? '');
  }

  /** Stops the workers of every pod whose UID is not in `desiredUIDs`. */
  cleanupPods(desiredUIDs: Iterable<string>): void {
    const desired = new Set(desiredUIDs);
    for (const w of [...this.#workers.values()]) if (!desired.has(w.pod.metadata?.uid ?? '')) w.stop();
  }

  /**
   * `status` with `containerStatuses[].started` and `.ready` set from the probe results
   * (upstream `UpdatePodStatus`); a readiness worker without a success is asked to probe now.
   * Returns a new object.
   */
  updatePodStatus(pod: V1Pod, status: V1PodStatus): V1PodStatus {
    return applyProbeResults(pod, status, {
      result: (type, id) => this.resultOf(type, id),
      hasWorker: (uid, name, type) => this.#workers.has(key(uid, name, type)),
      triggerReadiness: (uid, name) => this.#workers.get(key(uid, name, 'readiness'))?.trigger(),
      startedAtMs: this.#host.startedAtMs,
    });
  }

  /** The published result of `type` for `containerId` (`containerd://abc` or `abc`). */
  resultOf(type: ProbeType, containerId: string): ProbeResult | undefined {
    return this.#results(type).get(containerId);
  }

  /**
   * A lookup for the runtime side (`@nodeagent/kuberuntime`'s `liveness` / `startup` /
   * `readiness` options): `success`, `failure`, or `undefined` when none or unknown.
   */
  resultLookup(type: ProbeType): (containerId: string) => 'success' | 'failure' | undefined {
    const results = this.#results(type);
    return (id) => {
      const r = results.get(id);
      return r === 'unknown' ? undefined : r;
    };
  }

  /** The restart the runtime must do for `containerId`, if a liveness or startup probe failed. */
  restartRequest(containerId: string): RestartRequest | undefined {
    return this.#restarts.get(runtimeContainerId(containerId));
  }

  /** True when `containerId` must be restarted (see {@link ProbeManager.restartRequest}). */
  shouldRestart(containerId: string): boolean {
    return this.#restarts.has(runtimeContainerId(containerId));
  }

  #results(type: ProbeType): ResultsManager {
    return type === 'readiness' ? this.readiness : type === 'liveness' ? this.liveness : this.startup;
  }

  #removeUID(uid: string): void {
    for (const w of [...this.#workers.values()]) if ((w.pod.metadata?.uid ?? '') === uid) w.stop();
  }

  #publish(w: ProbeWorker, containerID: string, result: ProbeResult): void {
    const results = this.#results(w.type);
    if (results.get(containerID) === result) return; // the steady state: nothing to build
    const changed = results.set(containerID, {
      result,
      podUID: w.pod.metadata?.uid ?? '',
      containerName: w.container.name,
    });
    if (!changed) return;
    const id = runtimeContainerId(containerID);
    if (w.type !== 'readiness') {
      if (result === 'failure') {
        const type = w.type;
        const reason = type === 'liveness' ? 'LivenessProbe' : 'StartupProbe';
        const request: RestartRequest = {
          probeType: type,
          reason,
          message: `Container ${w.container.name} failed ${type} probe`,
          gracePeriodSeconds: terminationGracePeriodSeconds(w.pod, w.container, reason),
          containerID,
          containerName: w.container.name,
          pod: w.pod,
        };
        this.#restarts.set(id, request);
        this.#emit('result', {
          probeType: type,
          result,
          containerID,
          containerName: w.container.name,
          pod: w.pod,
        });
        this.#emit('restart', request);
        return;
      }
      if (this.#restarts.get(id)?.probeType === w.type) this.#restarts.delete(id);
    }
    this.#emit('result', {
      probeType: w.type,
      result,
      containerID,
      containerName: w.container.name,
      pod: w.pod,
    });
  }

  #unpublish(w: ProbeWorker, containerID: string): void {
    this.#results(w.type).remove(containerID);
    const id = runtimeContainerId(containerID);
    if (this.#restarts.get(id)?.probeType === w.type) this.#restarts.delete(id);
  }

  #exited(w: ProbeWorker): void {
    const k = key(w.pod.metadata?.uid ?? '', w.container.name, w.type);
    if (this.#workers.get(k) === w) this.#workers.delete(k);
  }

  #emit<E extends keyof ProbeManagerEvents>(event: E, ...args: ProbeManagerEvents[E]): void {
    try {
      (this.emit as (e: E, ...a: ProbeManagerEvents[E]) => boolean)(event, ...args);
    } catch (error) {
      this.#logger.error({ err: error, event }, 'ProbeManager event handler threw');
    }
  }
}

function probeOf(c: V1Container, type: ProbeType): V1Probe | undefined {
  const p = type === 'liveness' ? c.livenessProbe : type === 'readiness' ? c.readinessProbe : c.startupProbe;
  return p == null ? undefined : p;
}
