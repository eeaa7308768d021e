/**
 * Options of the pod status manager, and the small interfaces it takes from its peers:
 * the pod lookup (the agent's copy of API pods) and the static ↔ mirror pod UID translation
 * (the pod sources' business).
 *
 * @module
 */
import type { V1Pod } from '@kubernetes/client-node';
import type { Clock, Logger, MetricsOptions } from '@nodeagent/core';
import type { StatusApi } from './api.js';

/**
 * Static pods are known by their own UID on the node but their status is written to their
 * mirror pod in the API (upstream `podManager.GetUIDTranslations` / `TranslatePodUID`).
 * A pod source that creates mirror pods implements this.
 */
export interface MirrorPodTranslator {
  /**
   * For a static pod's UID: its mirror pod's UID, or `null` while the mirror pod does not
   * exist (no status is written then). `undefined` means the pod is not a static pod.
   */
  mirrorPodUid(staticPodUid: string): string | null | undefined;
  /** For a mirror pod's UID: the static pod's UID; `undefined` for any other UID. */
  staticPodUid(mirrorPodUid: string): string | undefined;
}

/** No static pods: every UID is its own. */
export const noMirrorPods: MirrorPodTranslator = {
  mirrorPodUid: () => undefined,
  staticPodUid: () => undefined,
};

/** Options of `PodStatusManager`. */
export interface PodStatusManagerOptions {
  /** Where statuses are written (GET, PATCH `pods/<name>/status`, DELETE). */
  readonly api: StatusApi;
  /**
   * The agent's current copy of a pod by UID (mirror pods included), as the informer last
   * delivered it (upstream `podManager.GetPodByUID`). Used to reconcile statuses the API lost
   * and to decide final deletes. @default none: no reconcile, deletes decided from the GET
   */
  readonly podLookup?: (uid: string) => V1Pod | undefined;
  /** Static ↔ mirror pod UID translation. @default {@link noMirrorPods} */
  readonly mirrorPods?: MirrorPodTranslator;
  /**
   * Whether the pod's containers could still be running, which keeps a terminal phase from
   * being written yet (upstream `ShouldDelayTransitioningPodToTerminal`). @default () => false
   */
  readonly couldHaveRunningContainers?: (pod: V1Pod) => boolean;
  /**
   * Period of the full batch sync that also reconciles differences with the API, ms
   * (upstream `syncPeriod`). Minimum: 1. @default 10_000
   */
  readonly syncPeriodMs?: number;
  /** @default realClock */
  readonly clock?: Clock;
  /** @default noopLogger */
  readonly logger?: Logger;
  /**
   * Registers `kubelet_pod_status_sync_duration_seconds` and
   * `nodeagent_status_api_requests_total{resource,verb,code}`. @default none
   */
  readonly metrics?: MetricsOptions;
}
