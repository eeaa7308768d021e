/**
 * A pocket status manager (upstream `pkg/kubelet/status`): remembers the last status sent
 * per pod, PATCHes `pods/<name>/status` only when the status changed, and once a deleted
 * pod's containers are gone issues the final zero-grace DELETE with a UID precondition.
 *
 * @module
 */
import type { V1Pod, V1PodStatus } from '@kubernetes/client-node';
import { type Logger, noopLogger } from '@nodeagent/core';
import { type ApiClient, ApiError } from './api-client.js';

/** Status fields others own; never cleared by the agent's patches. */
const FOREIGN_FIELDS = new Set(['nominatedNodeName', 'resize', 'resourceClaimStatuses']);

function podPath(pod: V1Pod): string {
  return `/api/v1/namespaces/${pod.metadata?.namespace ?? 'default'}/pods/${pod.metadata?.name ?? ''}`;
}

/** Plain JSON copy (Dates become RFC 3339 strings, undefined fields vanish). */
export function toJson<T>(value: T): T {
  return JSON.parse(JSON.stringify(value)) as T;
}

/** Writes pod statuses and final deletes to the API. */
export class PodStatusWriter {
  /** Status patches sent. */
  patches = 0;
  readonly #sent = new Map<string, V1PodStatus>();
  readonly #log: Logger;
  readonly #api: ApiClient;

  /**
   * @param api API access.
   * @param logger pino-shaped logger.
   */
  constructor(api: ApiClient, logger: Logger = noopLogger) {
    this.#api = api;
    this.#log = logger.child({ component: 'status-writer' });
  }

  /** The status last sent for `uid` (what `computePodStatus` carries transition times from). */
  lastSent(uid: string): V1PodStatus | undefined {
    return this.#sent.get(uid);
  }

  /**
   * Sends `status` for `pod` unless it equals the last one sent. A merge patch replaces the
   * lists (container statuses, conditions) as a whole; kubelet-owned top-level fields that
   * vanished are set to null.
   */
  async setStatus(pod: V1Pod, status: V1PodStatus, signal?: AbortSignal): Promise<boolean> {
    const uid = pod.metadata?.uid ?? '';
    const next = toJson(status);
    const previous = this.#sent.get(uid) ?? toJson(pod.status ?? {});
    if (this.#sent.has(uid) && JSON.stringify(previous) === JSON.stringify(next)) return false;
    const patch: Record<string, unknown> = { ...next };
    for (const key of Object.keys(previous)) {
      if (!(key in next) && !FOREIGN_FIELDS.has(key)) patch[key] = null;
    }
    try {
      await this.#api.patch(`${podPath(pod)}/status`, 'merge', { status: patch }, signal);
    } catch (err) {
      // The pod is gone: nothing left to report.
      if (err instanceof ApiError && err.code === 404) return false;
      throw err;
    }
    this.#sent.set(uid, next);
    this.patches++;
    this.#log.debug(
      { pod: `${pod.metadata?.namespace}/${pod.metadata?.name}`, phase: next.phase },
      'Patched pod status',
    );
    return true;
  }

  /**
   * The final delete of a terminated pod that was being deleted (upstream status manager's
   * `canBeDeleted` → Delete with grace 0 and a UID precondition). 404 and 409 (a new pod
   * with the same name) are fine.
   */
  async deleteFinal(pod: V1Pod, signal?: AbortSignal): Promise<void> {
    const uid = pod.metadata?.uid ?? '';
    try {
      await this.#api.delete(podPath(pod), { gracePeriodSeconds: 0, preconditions: { uid } }, signal);
      this.#log.info(
        { pod: `${pod.metadata?.namespace}/${pod.metadata?.name}` },
        'Pod fully terminated and removed from etcd',
      );
    } catch (err) {
      if (!(err instanceof ApiError && (err.code === 404 || err.code === 409))) throw err;
    }
  }

  /** Forgets a pod that is no longer known. */
  forget(uid: string): void {
    this.#sent.delete(uid);
  }
}
