/**
 * One probe worker per (pod UID, container, probe type) (upstream `worker.go`): waits for the
 * container, probes it every period, counts runs against the thresholds, publishes results and
 * holds after a liveness failure or any startup result until the container is replaced.
 *
 * @module
 */
import type { V1Container, V1ContainerStatus, V1Pod, V1PodStatus, V1Probe } from '@kubernetes/client-node';
import type { MetricLabels } from '@nodeagent/core';
import { isRestartableInitContainer } from '@nodeagent/kubecontainer';
import type { ProberMetrics } from './metrics.js';
import { type ProbeSpec, probeSpec } from './probe-spec.js';
import { initialResult, type ProbeResult, type ProbeType, probeTypeLabel } from './probe-types.js';
import { type ProbeMemo, type ProberDeps, type ProbeTarget, probeOnce } from './prober.js';
import { ProbeCancel } from './probes/probe-cancel.js';
import { TickEntry, type TickScheduler } from './tick-scheduler.js';

/** What a worker needs from its manager. @internal */
export interface WorkerHost extends ProberDeps {
  readonly metrics: ProberMetrics;
  readonly random: () => number;
  /** The manager's one timer for every worker's ticks. */
  readonly scheduler: TickScheduler;
  /** When the manager started (ms): jitter and the kubelet-restart grace period use it. */
  readonly startedAtMs: number;
  getPodStatus(uid: string): V1PodStatus | undefined;
  /** Publishes `result` for `containerID` (no-op when unchanged). */
  publish(worker: ProbeWorker, containerID: string, result: ProbeResult): void;
  /** Forgets the result of `containerID`. */
  unpublish(worker: ProbeWorker, containerID: string): void;
  /** Called once when the worker ends by itself or is stopped. */
  exited(worker: ProbeWorker): void;
  /** Called after every probe attempt that ran an action. */
  probed(
    worker: ProbeWorker,
    startedAtMs: number,
    durationMs: number,
    result: 'success' | 'failure',
    output: string,
    error: Error | undefined,
  ): void;
}

/** A container that was running this long before the manager started keeps its state (upstream: 10 s). */
const KUBELET_RESTART_GRACE_MS = 10_000;

/** @internal */
export class ProbeWorker {
  readonly type: ProbeType;
  readonly container: V1Container;
  readonly probe: V1Probe;
  readonly spec: ProbeSpec;
  readonly #host: WorkerHost;
  #pod: V1Pod;
  #containerID = '';
  #lastResult: ProbeResult | undefined;
  /** What this worker last published for `#containerID`. */
  #published: ProbeResult | undefined;
  #resultRun = 0;
  #onHold = false;
  #stopped = false;
  /** This worker's place in the manager's scheduler (one for its life: a tick allocates nothing). */
  readonly #tickEntry: WorkerTick;
  /** The next tick is the first (after the jitter wait): the schedule is anchored there. */
  #firstTick = true;
  #nextDueMs = 0;
  /**
   * Aborted when the worker stops; one per worker (a controller per run costs at thousands per
   * second), made on first use: only `exec` and `grpc` probes take a signal (an `AbortController`
   * and its `EventTarget` are a few hundred bytes per worker that `httpGet` and `tcpSocket`
   * workers, which use {@link ProbeCancel}, do not need).
   */
  #abort: AbortController | undefined;
  /** The same, for `httpGet` and `tcpSocket` probes: no listener per run. */
  readonly #cancel = new ProbeCancel();
  #inFlight = false;
  readonly #memo: ProbeMemo = {};
  #target: ProbeTarget | undefined;
  #pendingTick = false;
  #pendingManual = false;
  #ticking = false;
  /** The worker's metric series, built on first use (never without a metrics registry). */
  #labels: WorkerLabels | undefined;

  constructor(host: WorkerHost, type: ProbeType, pod: V1Pod, container: V1Container, probe: V1Probe) {
    this.#host = host;
    this.type = type;
    this.#pod = pod;
    this.container = container;
    this.probe = probe;
    this.spec = probeSpec(probe, type);
    this.#tickEntry = new WorkerTick(() => this.#onTick());
  }

  get #metricLabels(): WorkerLabels {
    this.#labels ??= workerLabels(this.type, this.#pod, this.container);
    return this.#labels;
  }

  /** The pod this worker probes (refreshed by a later `addPod`). */
  get pod(): V1Pod {
    return this.#pod;
  }

  set pod(pod: V1Pod) {
    this.#pod = pod;
  }

  /** The container ID the worker last saw (`''` before the container exists). */
  get containerID(): string {
    return this.#containerID;
  }

  /** True while waiting for a new container after a liveness failure or a startup result. */
  get onHold(): boolean {
    return this.#onHold;
  }

  get #periodMs(): number {
    return this.spec.timing.periodSeconds * 1000;
  }

  /** Starts the loop: a random part of a period first when the manager started less than a period ago. */
  start(): void {
    const now = this.#host.clock.now();
    const period = this.#periodMs;
    const jitter = period > now - this.#host.startedAtMs ? Math.floor(this.#host.random() * period) : 0;
    this.#nextDueMs = now + jitter;
    // The ticker starts after the jitter sleep; the first probe runs at once after it.
    this.#firstTick = true;
    this.#host.scheduler.schedule(this.#tickEntry, this.#nextDueMs);
  }

  /** Probes now and restarts the period from here (upstream `manualTriggerCh`). */
  trigger(): void {
    if (this.#stopped || !this.#ticking) {
      // Before the first probe (not started, or in the jitter wait) the trigger waits, as
      // upstream's buffered channel does: the worker probes again right after its first probe.
      if (!this.#stopped) this.#pendingManual = true;
      return;
    }
    if (this.#inFlight) {
      this.#pendingManual = true;
      return;
    }
    this.#resetTicker();
    this.#run();
  }

  /** Stops the worker: no more probes, an in-flight one is aborted, its result is removed. */
  stop(): void {
    if (this.#stopped) return;
    this.#stopped = true;
    this.#host.scheduler.cancel(this.#tickEntry);
    this.#cancel.abort();
    this.#abort?.abort(new Error('probe worker stopped'));
    if (this.#containerID !== '') this.#host.unpublish(this, this.#containerID);
    const labels = this.#labels;
    if (labels !== undefined) {
      this.#host.metrics.remove([labels.successful, labels.failed, labels.unknown], [labels.duration]);
    }
    this.#host.exited(this);
  }

  /** The scheduler reached `#nextDueMs`: schedule the next tick, then probe. */
  #onTick(): void {
    if (this.#stopped) return;
    const now = this.#host.clock.now();
    if (this.#firstTick) {
      this.#firstTick = false;
      this.#nextDueMs = now;
      this.#ticking = true;
    }
    this.#nextDueMs += this.#periodMs;
    // Like Go's ticker: ticks the receiver missed are dropped, not queued.
    while (this.#nextDueMs <= now) this.#nextDueMs += this.#periodMs;
    this.#host.scheduler.schedule(this.#tickEntry, this.#nextDueMs);
    this.#tick();
  }

  #resetTicker(): void {
    this.#firstTick = false;
    this.#nextDueMs = this.#host.clock.now() + this.#periodMs;
    this.#host.scheduler.schedule(this.#tickEntry, this.#nextDueMs);
  }

  #tick(): void {
    if (this.#inFlight) {
      this.#pendingTick = true;
      return;
    }
    this.#run();
  }

  #run(): void {
    this.#inFlight = true;
    this.#doProbe().then(
      (keepGoing) => this.#after(keepGoing),
      (error: unknown) => {
        // Upstream recovers from a panicking probe and keeps going.
        this.#host.logger.error(
          { err: error, probeType: this.type, container: this.container.name },
          'probe crashed',
        );
        this.#after(true);
      },
    );
  }

  #after(keepGoing: boolean): void {
    this.#inFlight = false;
    if (this.#stopped) return;
    if (!keepGoing) {
      this.stop();
      return;
    }
    if (this.#pendingManual) {
      this.#pendingManual = false;
      this.#pendingTick = false;
      this.#resetTicker();
      this.#run();
    } else if (this.#pendingTick) {
      this.#pendingTick = false;
      this.#run();
    }
  }

  /** The signal of an `exec` or `grpc` probe; a never-aborted one for the others (see `#abort`). */
  #signal(): AbortSignal {
    if (this.probe.httpGet != null || this.probe.tcpSocket != null) {
      if (this.probe.exec == null && this.probe.grpc == null) return NEVER_ABORTED;
    }
    if (this.#abort === undefined) {
      this.#abort = new AbortController();
      if (this.#stopped) this.#abort.abort(new Error('probe worker stopped'));
    }
    return this.#abort.signal;
  }

  /**
   * Publishes `result` for the current container. The worker is the only writer of its
   * container's entry, so a result it already published is not sent again (the manager would
   * find it unchanged): the steady state costs no lookup.
   */
  #set(result: ProbeResult): void {
    if (this.#containerID === '' || this.#published === result) return;
    this.#published = result;
    this.#host.publish(this, this.#containerID, result);
  }

  /** One iteration (upstream `doProbe`); resolves whether the worker keeps going. */
  async #doProbe(): Promise<boolean> {
    const host = this.#host;
    const startedAtMs = host.clock.now();
    let status: V1PodStatus | undefined;
    try {
      status = host.getPodStatus(this.#pod.metadata?.uid ?? '');
    } catch (error) {
      host.logger.error({ err: error }, 'pod status provider failed');
      return true;
    }
    if (status == null) return true;
    if (status.phase === 'Failed' || status.phase === 'Succeeded') return false;

    const c =
      findStatus(status.containerStatuses, this.container.name) ??
      findStatus(status.initContainerStatuses, this.container.name);
    if (c === undefined) return true;

    if (c.containerID !== this.#containerID) {
      if (this.#containerID !== '') host.unpublish(this, this.#containerID);
      this.#published = undefined;
      this.#containerID = String(c.containerID);
      this.#lastResult = undefined;
      this.#resultRun = 0;
      // After an agent restart, a container that was already running keeps its state.
      const runningSince = timeMs(c.state?.running?.startedAt);
      const wasRunningBefore =
        runningSince !== undefined && runningSince < host.startedAtMs - KUBELET_RESTART_GRACE_MS;
      if (!wasRunningBefore) this.#set(initialResult(this.type));
      this.#onHold = false;
    }
    if (this.#onHold) return true;

    const running = c.state?.running;
    if (running == null) {
      this.#set('failure');
      const isSidecar =
        (this.#pod.spec?.initContainers ?? []).some((i) => i.name === this.container.name) &&
        isRestartableInitContainer(this.container);
      return c.state?.terminated == null || this.#pod.spec?.restartPolicy !== 'Never' || isSidecar;
    }

    if (this.#pod.metadata?.deletionTimestamp != null && this.type !== 'readiness') {
      this.#set('success');
      return false;
    }

    const since = timeMs(running.startedAt);
    const elapsedSeconds =
      since === undefined ? Number.POSITIVE_INFINITY : Math.trunc((host.clock.now() - since) / 1000);
    if (elapsedSeconds < this.spec.timing.initialDelaySeconds) return true;

    if (c.started === true) {
      if (this.type === 'startup') return true;
    } else if (this.type !== 'startup') {
      return true;
    }

    // The target changes only when a later addPod refreshes the pod object.
    if (this.#target?.pod !== this.#pod) {
      this.#target = {
        type: this.type,
        pod: this.#pod,
        container: this.container,
        probe: this.probe,
        timeoutSeconds: this.spec.timing.timeoutSeconds,
        invalid: this.spec.invalid,
        memo: this.#memo,
      };
    }
    const verdict = await probeOnce(
      host,
      this.#target,
      status,
      this.#containerID,
      this.#signal(),
      this.#cancel,
    );
    // stop() sets #stopped before it aborts: one check covers both.
    if (this.#stopped) return true;
    const durationMs = host.clock.now() - startedAtMs;
    host.probed(this, startedAtMs, durationMs, verdict.result, verdict.run.output, verdict.error);
    if (verdict.error !== undefined) return true;

    if (host.metrics.enabled) {
      const labels = this.#metricLabels;
      if (verdict.result === 'success') {
        host.metrics.probe(labels.successful);
        host.metrics.duration(labels.duration, durationMs / 1000);
      } else host.metrics.probe(labels.failed);
    }

    if (this.#lastResult === verdict.result) this.#resultRun++;
    else {
      this.#lastResult = verdict.result;
      this.#resultRun = 1;
    }
    const { failureThreshold, successThreshold } = this.spec.timing;
    if (
      (verdict.result === 'failure' && this.#resultRun < failureThreshold) ||
      (verdict.result === 'success' && this.#resultRun < successThreshold)
    ) {
      return true;
    }
    this.#set(verdict.result);
    if ((this.type === 'liveness' && verdict.result === 'failure') || this.type === 'startup') {
      // The container will be restarted (or has started): stop probing until a new container ID.
      this.#onHold = true;
      this.#resultRun = 0;
    }
    return true;
  }
}

/** The signal of `httpGet` and `tcpSocket` probes, which the worker's {@link ProbeCancel} stops. */
const NEVER_ABORTED = new AbortController().signal;

/** A worker's metric label sets (`prober_probe_total` by result, `prober_probe_duration_seconds`). */
interface WorkerLabels {
  readonly successful: MetricLabels;
  readonly failed: MetricLabels;
  readonly unknown: MetricLabels;
  readonly duration: MetricLabels;
}

function workerLabels(type: ProbeType, pod: V1Pod, container: V1Container): WorkerLabels {
  const duration = {
    probe_type: probeTypeLabel(type),
    container: container.name,
    pod: pod.metadata?.name ?? '',
    namespace: pod.metadata?.namespace ?? '',
  };
  const total = (result: string): MetricLabels => ({
    probe_type: duration.probe_type,
    result,
    container: duration.container,
    pod: duration.pod,
    namespace: duration.namespace,
    pod_uid: pod.metadata?.uid ?? '',
  });
  return { successful: total('successful'), failed: total('failed'), unknown: total('unknown'), duration };
}

/** A worker's entry in the manager's {@link TickScheduler}. */
class WorkerTick extends TickEntry {
  readonly #onFire: () => void;

  constructor(onFire: () => void) {
    super();
    this.#onFire = onFire;
  }

  fire(): void {
    this.#onFire();
  }
}

function findStatus(
  list: readonly V1ContainerStatus[] | undefined,
  name: string,
): V1ContainerStatus | undefined {
  if (list == null) return undefined;
  // A loop, not `find`: no closure per probe.
  for (const s of list) if (s.name === name) return s.containerID ? s : undefined;
  return undefined;
}

/** A `Date` or RFC 3339 string as ms since the epoch; `undefined` when absent or unparseable (Go's zero time). */
export function timeMs(value: Date | string | undefined | null): number | undefined {
  if (value == null) return undefined;
  const ms = value instanceof Date ? value.getTime() : Date.parse(String(value));
  return Number.isFinite(ms) ? ms : undefined;
}
