/**
 * Mirror pods (upstream `pod/mirror_client.go` and the mirror-pod steps of `SyncPod` and
 * housekeeping): for every static pod, a read-only copy in the API server with the
 * `kubernetes.io/config.mirror` annotation set to the static pod's config hash and the Node as
 * controlling owner. A missing mirror is created; one that is being deleted or carries another
 * hash is deleted (grace 0, UID precondition) and created again; a mirror without a static pod
 * is deleted, unless its static pod is still terminating.
 *
 * @module
 */
import type { V1Pod } from '@kubernetes/client-node';
import { type Logger, noopLogger } from '@nodeagent/core';
import { CONFIG_HASH_ANNOTATION, CONFIG_MIRROR_ANNOTATION, podFullName } from './pod-update.js';

/**
 * The two API calls mirror pods need. Adapters throw an error with a numeric `code` (HTTP
 * status) on failure: 409 on create means the pod exists; 404 and 409 on delete are ignored.
 */
export interface MirrorPodApi {
  /** `POST /api/v1/namespaces/<ns>/pods`. */
  createPod(namespace: string, pod: V1Pod): Promise<void>;
  /** `DELETE …/pods/<name>` with `gracePeriodSeconds: 0` and a UID precondition. */
  deletePod(namespace: string, name: string, uid: string): Promise<void>;
}

/** Options of {@link MirrorPodManager}. */
export interface MirrorPodManagerOptions {
  /** The API calls. */
  readonly api: MirrorPodApi;
  /** This node's name (owner reference). */
  readonly nodeName: string;
  /** This node's UID (owner reference); no mirror is created while it is unknown. */
  readonly nodeUid: () => string | undefined;
  /** Whether a static pod of that full name is still terminating (its orphaned mirror waits). @default never */
  readonly isTerminating?: (podFullName: string) => boolean;
  /**
   * Called after a mirror pod was created for `staticPod` (first time or again): the new
   * mirror has an empty status, so the static pod's status is due again (upstream routes the
   * mirror pod's arrival to the static pod's worker). @default none
   */
  readonly onCreated?: (staticPod: V1Pod) => void;
  /** @default noopLogger */
  readonly logger?: Logger;
}

function statusCode(err: unknown): number | undefined {
  const code =
    (err as { code?: unknown; statusCode?: unknown } | undefined)?.code ??
    (err as { statusCode?: unknown } | undefined)?.statusCode;
  return typeof code === 'number' ? code : undefined;
}

/** The config hash of a static pod (its `kubernetes.io/config.hash`, else its UID). */
export function staticPodHash(pod: V1Pod): string {
  return pod.metadata?.annotations?.[CONFIG_HASH_ANNOTATION] ?? pod.metadata?.uid ?? '';
}

/** The mirror pod object for `staticPod` (what is POSTed). */
export function mirrorPodFor(staticPod: V1Pod, nodeName: string, nodeUid: string): V1Pod {
  const { uid: _uid, resourceVersion: _rv, creationTimestamp: _ct, ...metadata } = staticPod.metadata ?? {};
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      ...metadata,
      annotations: { ...(metadata.annotations ?? {}), [CONFIG_MIRROR_ANNOTATION]: staticPodHash(staticPod) },
      ownerReferences: [{ apiVersion: 'v1', kind: 'Node', name: nodeName, uid: nodeUid, controller: true }],
    },
    ...(staticPod.spec === undefined ? {} : { spec: structuredClone(staticPod.spec) }),
  };
}

/** Whether `mirror` is the current mirror of `staticPod` (same hash, not being deleted). */
export function isMirrorPodOf(mirror: V1Pod, staticPod: V1Pod): boolean {
  const deleting =
    mirror.metadata?.deletionTimestamp !== undefined && mirror.metadata.deletionTimestamp !== null;
  return !deleting && mirror.metadata?.annotations?.[CONFIG_MIRROR_ANNOTATION] === staticPodHash(staticPod);
}

/** Keeps one current mirror pod per static pod. */
export class MirrorPodManager {
  readonly #options: MirrorPodManagerOptions;
  readonly #log: Logger;
  #running: Promise<void> | undefined;
  #next: { staticPods: readonly V1Pod[]; mirrorPods: readonly V1Pod[]; deleteOrphans: boolean } | undefined;
  /** Mirror pods created. */
  created = 0;
  /** Mirror pods deleted. */
  deleted = 0;

  /** @param options see {@link MirrorPodManagerOptions}. */
  constructor(options: MirrorPodManagerOptions) {
    this.#options = options;
    this.#log = (options.logger ?? noopLogger).child({ component: 'mirror-pods' });
  }

  /**
   * Brings the API's mirror pods in line with the static pods. Calls while one runs coalesce:
   * the latest arguments run once more afterwards. Never rejects; failures are logged and the
   * next call retries.
   *
   * @param deleteOrphans delete mirrors without a static pod; pass false until every static
   *   source has been seen (upstream deletes orphans only in housekeeping, once all sources are
   *   ready), or a restarting agent deletes the mirrors of static pods it has not read yet.
   *   @default true
   */
  reconcile(staticPods: readonly V1Pod[], mirrorPods: readonly V1Pod[], deleteOrphans = true): Promise<void> {
    this.#next = { staticPods, mirrorPods, deleteOrphans };
    this.#running ??= (async () => {
      while (this.#next !== undefined) {
        const { staticPods: s, mirrorPods: m, deleteOrphans: d } = this.#next;
        this.#next = undefined;
        await this.#reconcile(s, m, d);
      }
    })().finally(() => {
      this.#running = undefined;
    });
    return this.#running;
  }

  async #reconcile(
    staticPods: readonly V1Pod[],
    mirrorPods: readonly V1Pod[],
    deleteOrphans: boolean,
  ): Promise<void> {
    const mirrors = new Map(mirrorPods.map((m) => [podFullName(m), m]));
    const wanted = new Set<string>();
    for (const pod of staticPods) {
      const name = podFullName(pod);
      wanted.add(name);
      const mirror = mirrors.get(name);
      if (mirror !== undefined && isMirrorPodOf(mirror, pod)) continue;
      if (mirror !== undefined) {
        // Stale (another hash) or being deleted: delete it, then create the current one.
        if (!(await this.#delete(mirror))) continue;
      }
      await this.#create(pod);
    }
    if (!deleteOrphans) return;
    const isTerminating = this.#options.isTerminating ?? (() => false);
    for (const [name, mirror] of mirrors) {
      if (wanted.has(name) || isTerminating(name)) continue;
      await this.#delete(mirror);
    }
  }

  async #create(pod: V1Pod): Promise<void> {
    const nodeUid = this.#options.nodeUid();
    if (nodeUid === undefined) return;
    const body = mirrorPodFor(pod, this.#options.nodeName, nodeUid);
    try {
      await this.#options.api.createPod(body.metadata?.namespace ?? 'default', body);
      this.created++;
      this.#log.info({ pod: podFullName(pod) }, 'Created mirror pod');
      this.#options.onCreated?.(pod);
    } catch (err) {
      if (statusCode(err) === 409) return; // created meanwhile; the next pass checks its hash
      this.#log.warn({ pod: podFullName(pod), err: (err as Error).message }, 'Failed creating a mirror pod');
    }
  }

  async #delete(mirror: V1Pod): Promise<boolean> {
    const { namespace = 'default', name = '', uid = '' } = mirror.metadata ?? {};
    try {
      await this.#options.api.deletePod(namespace, name, uid);
      this.deleted++;
      this.#log.info({ pod: podFullName(mirror) }, 'Deleted mirror pod');
      return true;
    } catch (err) {
      const code = statusCode(err);
      if (code === 404 || code === 409) return true;
      this.#log.warn(
        { pod: podFullName(mirror), err: (err as Error).message },
        'Failed deleting a mirror pod',
      );
      return false;
    }
  }
}
