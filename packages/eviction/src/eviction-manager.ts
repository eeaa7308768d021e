/**
 * {@link EvictionManager}: the kubelet's eviction manager (`pkg/kubelet/eviction`). Every
 * monitoring interval it reads the Summary, observes the signals, evaluates hard and soft
 * thresholds (grace periods, min-reclaim, the pressure transition period), reports
 * MemoryPressure / DiskPressure / PIDPressure, tries node-level reclaim (container and image
 * GC) for disk signals, and otherwise evicts at most one pod per round, ranked for the
 * starved resource, never a critical one. It also answers admission while under pressure.
 *
 * Unlike upstream, which reads the whole Summary every round, it asks for the node's part only
 * (`{ pods: false }`: every signal is observed there) and reads the pods' stats only in a round
 * that ranks pods. The decisions are the same; the runtime is spared a `ListContainerStats`
 * (one shim call per container on containerd) every 10 s while the node is not under pressure.
 *
 * @module
 */
import type { V1Pod } from '@kubernetes/client-node';
import {
  isCriticalPod,
  NodePressureAdmitHandler,
  type PodAdmitAttributes,
  type PodAdmitHandler,
  type PodAdmitResult,
} from '@nodeagent/admission';
import {
  type Clock,
  InvalidOptionsError,
  type Logger,
  noopLogger,
  realClock,
  StartOnce,
} from '@nodeagent/core';
import { EvictionThresholdMet, nodeReference } from '@nodeagent/events';
import type { Summary, SummaryScope } from '@nodeagent/stats';
import type { EvictionManagerOptions, EvictionStatus } from './eviction-manager-options.js';
import { EVICTED_REASON, evictionMessage } from './eviction-message.js';
import { createEvictionMetrics, type EvictionMetrics } from './metrics.js';
import { makeSignalObservations, type PodStatsLookup, type SignalObservations } from './observations.js';
import { buildSignalToRankFunc, type RankFunc } from './ranking.js';
import { type PressureCondition, SIGNAL_TO_RESOURCE, type Signal } from './signals.js';
import {
  byEvictionPriority,
  nodeConditions as conditionsOf,
  mergeThresholds,
  nodeConditionsLastObservedAt,
  nodeConditionsObservedSince,
  thresholdsFirstObservedAt,
  thresholdsMet,
  thresholdsMetGracePeriod,
  thresholdsUpdatedStats,
} from './threshold-evaluation.js';
import { isHardEvictionThreshold, type Threshold } from './thresholds.js';

/** Grace period of a pod evicted for a hard threshold, seconds (upstream `immediateEvictionGracePeriodSeconds`). */
export const IMMEDIATE_EVICTION_GRACE_PERIOD_SECONDS = 1;
/** Default monitoring interval: 10 s. */
export const DEFAULT_MONITORING_INTERVAL_MS = 10_000;
/** How long the loop waits for an evicted pod's cleanup, ms (upstream `podCleanupTimeout`). */
export const POD_CLEANUP_TIMEOUT_MS = 30_000;
/** Poll period of that wait, ms (upstream `podCleanupPollFreq`). */
export const POD_CLEANUP_POLL_MS = 1_000;

type NodeReclaimFunc = () => Promise<void>;

/** The Summary's node part: every signal is observed there. */
const NODE_ONLY: SummaryScope = { pods: false };

function podName(pod: V1Pod): string {
  return `${pod.metadata?.namespace ?? ''}/${pod.metadata?.name ?? ''}`;
}

/**
 * Derives `containerfs.*` thresholds (upstream `UpdateContainerFsThresholds`): never taken
 * from the user; copies of the nodefs thresholds on a single filesystem, of the imagefs
 * ones with a dedicated image filesystem.
 */
export function withContainerFsThresholds(
  thresholds: readonly Threshold[],
  dedicatedImageFs: boolean,
): Threshold[] {
  const kept = thresholds.filter((t) => !t.signal.startsWith('containerfs.'));
  const from = dedicatedImageFs ? 'imagefs.' : 'nodefs.';
  const copies = kept
    .filter((t) => t.signal.startsWith(from))
    .map((t) => ({ ...t, signal: t.signal.replace(from, 'containerfs.') as Signal }));
  return [...kept, ...copies];
}

/** The kubelet's eviction manager. Implements the status package's `NodePressureProvider`, the admission package's `NodePressureSource` and a `PodAdmitHandler`. */
export class EvictionManager implements PodAdmitHandler {
  readonly #o: EvictionManagerOptions;
  readonly #clock: Clock;
  readonly #log: Logger;
  readonly #metrics: EvictionMetrics;
  readonly #transitionMs: number;
  readonly #intervalMs: number;
  readonly #admitHandler: NodePressureAdmitHandler;
  readonly #once = new StartOnce('EvictionManager');
  #abort = new AbortController();
  #loop: Promise<void> | undefined;

  #thresholds: readonly Threshold[];
  #initialized = false;
  #rankFuncs: Record<Signal, RankFunc> | undefined;
  #reclaimFuncs = new Map<Signal, NodeReclaimFunc[]>();
  #nodeConditions: PressureCondition[] = [];
  #conditionsLastObservedAt = new Map<PressureCondition, number>();
  #firstObservedAt = new Map<Threshold, number>();
  #thresholdsMet: Threshold[] = [];
  #lastObservations: SignalObservations = new Map();

  /** @throws InvalidOptionsError for an option out of range */
  constructor(options: EvictionManagerOptions) {
    const transition = options.pressureTransitionPeriodMs ?? 5 * 60_000;
    if (!(transition >= 0)) {
      throw new InvalidOptionsError(
        'EvictionManager',
        `pressureTransitionPeriodMs must be >= 0, got ${transition}`,
      );
    }
    const interval = options.monitoringIntervalMs ?? DEFAULT_MONITORING_INTERVAL_MS;
    if (!(interval >= 1)) {
      throw new InvalidOptionsError('EvictionManager', `monitoringIntervalMs must be >= 1, got ${interval}`);
    }
    const maxGrace = options.maxPodGracePeriodSeconds ?? 0;
    if (!(maxGrace >= 0)) {
      throw new InvalidOptionsError(
        'EvictionManager',
        `maxPodGracePeriodSeconds must be >= 0, got ${maxGrace}`,
      );
    }
    this.#o = options;
    this.#clock = options.clock ?? realClock;
    this.#log = (options.logger ?? noopLogger).child({ component: 'eviction' });
    this.#metrics = createEvictionMetrics(options.metrics);
    this.#transitionMs = transition;
    this.#intervalMs = interval;
    this.#thresholds = options.thresholds;
    this.#admitHandler = new NodePressureAdmitHandler(this);
  }

  /** Starts the control loop (one round now, then every monitoring interval). */
  start(signal?: AbortSignal): Promise<void> {
    return this.#once.run(
      signal,
      async () => {
        this.#abort = new AbortController();
        this.#loop = this.#run(this.#abort.signal);
      },
      () => this.stop(),
    );
  }

  /** Stops the loop and waits for the round in progress. */
  async stop(): Promise<void> {
    this.#abort.abort();
    await this.#loop;
  }

  async #run(signal: AbortSignal): Promise<void> {
    while (!signal.aborted) {
      let evicted: V1Pod[] = [];
      try {
        evicted = await this.synchronize();
      } catch (err) {
        this.#log.error({ err }, 'Eviction manager: failed to synchronize');
      }
      try {
        if (evicted.length > 0 && this.#o.podCleanedUp !== undefined)
          await this.#waitForCleanup(evicted, signal);
        else await this.#clock.sleep(this.#intervalMs, signal);
      } catch {
        return;
      }
    }
  }

  async #waitForCleanup(pods: readonly V1Pod[], signal: AbortSignal): Promise<void> {
    const cleaned = this.#o.podCleanedUp as (pod: V1Pod) => boolean;
    const deadline = this.#clock.now() + POD_CLEANUP_TIMEOUT_MS;
    while (this.#clock.now() < deadline) {
      await this.#clock.sleep(POD_CLEANUP_POLL_MS, signal);
      if (pods.every(cleaned)) return;
    }
    this.#log.warn(
      { pods: pods.map(podName) },
      'Eviction manager: timed out waiting for pods to be cleaned up',
    );
  }

  /** The pressure conditions reported now, in the order they were raised (admission's `NodePressureSource`). */
  nodeConditions(): readonly PressureCondition[] {
    return [...this.#nodeConditions];
  }

  /** Whether MemoryPressure is reported. */
  isUnderMemoryPressure(): boolean {
    return this.#nodeConditions.includes('MemoryPressure');
  }

  /** Whether DiskPressure is reported. */
  isUnderDiskPressure(): boolean {
    return this.#nodeConditions.includes('DiskPressure');
  }

  /** Whether PIDPressure is reported. */
  isUnderPIDPressure(): boolean {
    return this.#nodeConditions.includes('PIDPressure');
  }

  /** Admission under pressure (upstream `managerImpl.Admit`, see `NodePressureAdmitHandler`). */
  admit(attributes: PodAdmitAttributes): PodAdmitResult {
    return this.#admitHandler.admit(attributes);
  }

  /** The thresholds in effect (with the derived `containerfs.*` ones after the first round). */
  thresholds(): readonly Threshold[] {
    return this.#thresholds;
  }

  async #initialize(): Promise<void> {
    const dedicated = (await this.#o.diskInfo?.hasDedicatedImageFs()) ?? false;
    this.#thresholds = withContainerFsThresholds(this.#o.thresholds, dedicated);
    this.#rankFuncs = buildSignalToRankFunc(dedicated);
    const gc: NodeReclaimFunc[] = [];
    const containerGC = this.#o.containerGC;
    const imageGC = this.#o.imageGC;
    if (containerGC !== undefined) gc.push(() => containerGC.deleteAllUnusedContainers());
    if (imageGC !== undefined) gc.push(() => imageGC.deleteUnusedImages());
    const node = dedicated ? [] : gc;
    this.#reclaimFuncs = new Map<Signal, NodeReclaimFunc[]>([
      ['nodefs.available', node],
      ['nodefs.inodesFree', node],
      ['imagefs.available', gc],
      ['imagefs.inodesFree', gc],
      ['containerfs.available', gc],
      ['containerfs.inodesFree', gc],
    ]);
    this.#initialized = true;
  }

  /**
   * One round of the control loop (upstream `synchronize`). Resolves with the pods evicted
   * (at most one). A failing summary is logged and skips the round.
   */
  async synchronize(): Promise<V1Pod[]> {
    if (this.#o.thresholds.length === 0) return [];
    if (!this.#initialized) await this.#initialize();
    const activePods = [...this.#o.activePods()];
    let summary: Summary;
    try {
      summary = await this.#o.summaryProvider.get(true, NODE_ONLY);
    } catch (err) {
      this.#log.error({ err }, 'Eviction manager: failed to get summary stats');
      return [];
    }
    const { observations } = makeSignalObservations(summary);
    let thresholds = thresholdsMet(this.#thresholds, observations, false);
    if (this.#thresholdsMet.length > 0) {
      thresholds = mergeThresholds(thresholds, thresholdsMet(this.#thresholdsMet, observations, true));
    }
    const now = this.#clock.now();
    const firstObservedAt = thresholdsFirstObservedAt(thresholds, this.#firstObservedAt, now);
    const lastObservedAt = nodeConditionsLastObservedAt(
      conditionsOf(thresholds),
      this.#conditionsLastObservedAt,
      now,
    );
    const conditions = nodeConditionsObservedSince(lastObservedAt, this.#transitionMs, now);
    thresholds = thresholdsMetGracePeriod(firstObservedAt, now);

    this.#nodeConditions = conditions;
    this.#firstObservedAt = firstObservedAt;
    this.#conditionsLastObservedAt = lastObservedAt;
    this.#thresholdsMet = thresholds;
    thresholds = thresholdsUpdatedStats(thresholds, observations, this.#lastObservations);
    this.#lastObservations = observations;

    if (thresholds.length === 0) return [];
    thresholds = byEvictionPriority(thresholds);
    const toReclaim = thresholds[0] as Threshold;
    const resource = SIGNAL_TO_RESOURCE[toReclaim.signal];
    this.#log.info({ resourceName: resource }, 'Eviction manager: attempting to reclaim');
    if (this.#o.nodeName) {
      this.#o.recorder?.event(
        nodeReference(this.#o.nodeName),
        'Warning',
        EvictionThresholdMet,
        `Attempting to reclaim ${resource}`,
      );
    }
    if (await this.#reclaimNodeLevelResources(toReclaim.signal)) {
      this.#log.info(
        { resourceName: resource },
        'Eviction manager: able to reduce resource pressure without evicting pods.',
      );
      return [];
    }
    const rank = this.#rankFuncs?.[toReclaim.signal];
    if (rank === undefined) return [];
    if (activePods.length === 0) {
      this.#log.error(
        {},
        'Eviction manager: eviction thresholds have been met, but no pods are active to evict',
      );
      return [];
    }
    // The pods' stats, read now that there are pods to rank.
    let podStats: PodStatsLookup;
    try {
      podStats = makeSignalObservations(await this.#o.summaryProvider.get(true)).podStats;
    } catch (err) {
      this.#log.error({ err }, 'Eviction manager: failed to get summary stats');
      return [];
    }
    const ranked = rank(activePods, podStats);
    for (const t of thresholds) {
      const at = observations.get(t.signal)?.timeMs;
      if (at !== undefined) this.#metrics.statsAge(t.signal, Math.max(0, now - at) / 1000);
    }
    for (const pod of ranked) {
      let grace = IMMEDIATE_EVICTION_GRACE_PERIOD_SECONDS;
      if (!isHardEvictionThreshold(toReclaim)) {
        grace = this.#o.maxPodGracePeriodSeconds ?? 0;
        const own = pod.spec?.terminationGracePeriodSeconds;
        if (own !== undefined && own !== null) grace = Math.min(grace, own);
      }
      const { message, annotations } = evictionMessage(
        resource,
        pod,
        podStats(pod.metadata?.uid ?? ''),
        thresholds,
        observations,
      );
      if (await this.#evictPod(pod, grace, message, annotations)) {
        this.#metrics.eviction(toReclaim.signal);
        return [pod];
      }
    }
    this.#log.info({}, 'Eviction manager: unable to evict any pods from the node');
    return [];
  }

  async #reclaimNodeLevelResources(signal: Signal): Promise<boolean> {
    const funcs = this.#reclaimFuncs.get(signal) ?? [];
    for (const f of funcs) {
      try {
        await f();
      } catch (err) {
        this.#log.info(
          { err, signal },
          'Eviction manager: unexpected error when attempting to reduce resource pressure',
        );
      }
    }
    if (funcs.length === 0) return false;
    let summary: Summary;
    try {
      summary = await this.#o.summaryProvider.get(true, NODE_ONLY);
    } catch (err) {
      this.#log.error({ err }, 'Eviction manager: failed to get summary stats after resource reclaim');
      return false;
    }
    const { observations } = makeSignalObservations(summary);
    return thresholdsMet(this.#thresholds, observations, true).length === 0;
  }

  async #evictPod(
    pod: V1Pod,
    graceSeconds: number,
    message: string,
    annotations: Record<string, string>,
  ): Promise<boolean> {
    if (isCriticalPod(pod)) {
      this.#log.error({ pod: podName(pod) }, 'Eviction manager: cannot evict a critical pod');
      return false;
    }
    this.#o.recorder?.event(pod, 'Warning', EVICTED_REASON, message, annotations);
    const status: EvictionStatus = {
      phase: 'Failed',
      reason: 'Evicted',
      message,
      condition: {
        type: 'DisruptionTarget',
        status: 'True',
        reason: 'TerminationByKubelet',
        message,
        lastTransitionTime: new Date(this.#clock.now()),
      },
    };
    try {
      await this.#o.podKiller.killPod(pod, graceSeconds, status);
      this.#log.info({ pod: podName(pod) }, 'Eviction manager: pod is evicted successfully');
    } catch (err) {
      this.#log.error({ err, pod: podName(pod) }, 'Eviction manager: pod failed to evict');
    }
    return true;
  }
}
