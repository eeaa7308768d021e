/**
 * Options of {@link EvictionManager}: the injected peers (summary provider, active pods,
 * pod killer, node-level reclaim) and the kubelet's eviction settings.
 *
 * @module
 */
import type { V1Pod, V1PodCondition } from '@kubernetes/client-node';
import type { Clock, Logger, MetricsOptions } from '@nodeagent/core';
import type { EventRecorder } from '@nodeagent/events';
import type { SummaryProvider } from '@nodeagent/stats';
import type { Threshold } from './thresholds.js';

/** The status the kubelet writes for an evicted pod. */
export interface EvictionStatus {
  /** Always `Failed`. */
  readonly phase: 'Failed';
  /** Always `Evicted`. */
  readonly reason: 'Evicted';
  /** Upstream's message (`The node was low on resource: …`). */
  readonly message: string;
  /** `DisruptionTarget=True`, reason `TerminationByKubelet`, the same message. */
  readonly condition: V1PodCondition;
}

/** Kills an evicted pod (upstream `KillPodFunc`); the pod worker's terminate path. */
export interface PodKiller {
  /**
   * Kills `pod` with a grace period override and records `status` as its final status.
   * Resolves when the pod's containers are stopped; a rejection is logged and the pod still
   * counts as evicted, as upstream.
   */
  killPod(pod: V1Pod, gracePeriodSeconds: number, status: EvictionStatus): Promise<void>;
}

/** The container garbage collector as the eviction manager calls it. */
export interface ContainerGarbageCollector {
  /** A container GC pass that also removes the containers and sandboxes of terminated pods (upstream `DeleteAllUnusedContainers`). */
  deleteAllUnusedContainers(): Promise<void>;
}

/** The image garbage collector as the eviction manager calls it. */
export interface ImageGarbageCollector {
  /** Removes every image no container uses (older than the minimum age). */
  deleteUnusedImages(): Promise<void>;
}

/** Whether images live on their own filesystem (upstream `DiskInfoProvider`). */
export interface DiskInfoProvider {
  /** True when the runtime's image filesystem is not the node filesystem. */
  hasDedicatedImageFs(): Promise<boolean>;
}

/** Options of {@link EvictionManager}. */
export interface EvictionManagerOptions {
  /** Where node and pod stats come from (`@nodeagent/stats`). */
  readonly summaryProvider: SummaryProvider;
  /** The pods that may be evicted: the kubelet's active pods (admitted, not terminated). */
  readonly activePods: () => readonly V1Pod[];
  /** Kills the chosen pod. */
  readonly podKiller: PodKiller;
  /** Thresholds, from {@link parseThresholdConfig}. An empty list disables eviction. */
  readonly thresholds: readonly Threshold[];
  /** Container GC for node-level reclaim of disk signals. @default none (no node-level reclaim) */
  readonly containerGC?: ContainerGarbageCollector;
  /** Image GC for node-level reclaim of disk signals. @default none */
  readonly imageGC?: ImageGarbageCollector;
  /** Filesystem layout. @default a single filesystem */
  readonly diskInfo?: DiskInfoProvider;
  /** Whether an evicted pod is cleaned up; the loop waits for it (1 s poll, 30 s cap). @default none (no wait) */
  readonly podCleanedUp?: (pod: V1Pod) => boolean;
  /** `--eviction-pressure-transition-period`, ms. Minimum: 0. @default 300000 */
  readonly pressureTransitionPeriodMs?: number;
  /** `--eviction-max-pod-grace-period`, seconds, for soft evictions. @default 0 */
  readonly maxPodGracePeriodSeconds?: number;
  /** Period of the control loop, ms (upstream `monitoringInterval`). Minimum: 1. @default 10000 */
  readonly monitoringIntervalMs?: number;
  /** Node name, for the `EvictionThresholdMet` node event. @default '' (no node event) */
  readonly nodeName?: string;
  /** Event recorder (`@nodeagent/events`). @default none */
  readonly recorder?: Pick<EventRecorder, 'event'>;
  /** Metrics on a registry you own. @default none */
  readonly metrics?: MetricsOptions;
  /** @default realClock */
  readonly clock?: Clock;
  /** @default noopLogger */
  readonly logger?: Logger;
}
