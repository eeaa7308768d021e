/**
 * The agent's pod config: `@nodeagent/pod-sources` wired to the API (the node's pod informer,
 * `--pod-manifest-path`, `--manifest-url`), and the mirror pods of static pods kept in the API.
 *
 * @module
 */
import type { V1Pod } from '@kubernetes/client-node';
import type { Clock, Logger } from '@nodeagent/core';
import {
  ApiServerSource,
  FileSource,
  HttpSource,
  isMirrorPodOf,
  MirrorPodManager,
  PodConfig,
  type PodInformer,
  podFullName,
} from '@nodeagent/pod-sources';
import { isStaticPod } from '@nodeagent/pod-workers';
import type { MirrorPodTranslator } from '@nodeagent/status';
import type { ApiClient } from './api-client.js';

/** What {@link startPodSources} wires. */
export interface PodSourcesOptions {
  readonly api: ApiClient;
  /** The node's pod informer (`spec.nodeName=<node>`). */
  readonly pods: PodInformer;
  readonly nodeName: string;
  readonly nodeUid: () => string | undefined;
  /** Whether the static pod of that full name still terminates (its mirror waits). */
  readonly isStaticPodTerminating: (podFullName: string) => boolean;
  /** A mirror pod was (re)created for this static pod: its status is due again. */
  readonly onMirrorPodCreated: (staticPod: V1Pod) => void;
  readonly podManifestPath: string | undefined;
  readonly manifestUrl: string | undefined;
  readonly manifestUrlHeaders: readonly (readonly [string, string])[] | undefined;
  /** Manifest re-read period, ms. @default 20_000 */
  readonly checkMs: number | undefined;
  readonly clock: Clock;
  readonly logger: Logger;
}

/** The sources, their merge and the mirror pods. */
export interface PodSources {
  /** The merged config the pod loop consumes. */
  readonly config: PodConfig;
  /** The mirror pod manager (counters for tests). */
  readonly mirrors: MirrorPodManager;
  /** Starts the sources; resolves once each sent its first snapshot (or failed to). */
  start(signal?: AbortSignal): Promise<void>;
  /** Brings the API's mirror pods in line with the static pods (never rejects). */
  reconcileMirrorPods(): void;
  /** Static pod UID ↔ its current mirror pod's UID, for the status manager. */
  readonly mirrorPodTranslator: MirrorPodTranslator;
  stop(): Promise<void>;
}

/** Creates the sources (nothing runs before `start`). */
export function startPodSources(o: PodSourcesOptions): PodSources {
  const config = new PodConfig({ clock: o.clock, logger: o.logger });
  const common = {
    nodeName: o.nodeName,
    clock: o.clock,
    logger: o.logger,
    checkIntervalMs: o.checkMs ?? 20_000,
  };
  const mirrors = new MirrorPodManager({
    api: {
      createPod: async (ns, pod) => {
        await o.api.create<V1Pod>(`/api/v1/namespaces/${ns}/pods`, pod);
      },
      deletePod: async (ns, name, uid) => {
        await o.api.delete(`/api/v1/namespaces/${ns}/pods/${name}`, {
          gracePeriodSeconds: 0,
          preconditions: { uid },
        });
      },
    },
    nodeName: o.nodeName,
    nodeUid: o.nodeUid,
    isTerminating: o.isStaticPodTerminating,
    onCreated: o.onMirrorPodCreated,
    logger: o.logger,
  });
  const reconcileMirrorPods = () => {
    // Orphans only once every source reported: a restarting agent has not read its manifests yet.
    void mirrors.reconcile(
      config.pods().filter(isStaticPod),
      apiSource.mirrorPods(),
      config.seenAllSources(),
    );
  };
  const apiSource = new ApiServerSource({
    informer: o.pods,
    sink: config.channel('api'),
    onMirrorPods: reconcileMirrorPods,
  });
  const sources: { start(signal?: AbortSignal): Promise<void>; stop(): Promise<void> }[] = [apiSource];
  if (o.podManifestPath !== undefined) {
    sources.push(new FileSource({ ...common, path: o.podManifestPath, sink: config.channel('file') }));
  }
  if (o.manifestUrl !== undefined) {
    const headers = o.manifestUrlHeaders ?? [];
    sources.push(new HttpSource({ ...common, url: o.manifestUrl, headers, sink: config.channel('http') }));
  }
  const mirrorOf = (staticPod: V1Pod) =>
    apiSource
      .mirrorPods()
      .find((m) => podFullName(m) === podFullName(staticPod) && isMirrorPodOf(m, staticPod));
  const mirrorPodTranslator: MirrorPodTranslator = {
    mirrorPodUid: (staticUid) => {
      // Asked for every cached status on each status pass: a lookup, not a scan of every pod.
      const pod = config.pod(staticUid);
      if (pod === undefined || !isStaticPod(pod)) return undefined;
      return mirrorOf(pod)?.metadata?.uid ?? null;
    },
    staticPodUid: (mirrorUid) => {
      const mirror = apiSource.mirrorPods().find((m) => m.metadata?.uid === mirrorUid);
      if (mirror === undefined) return undefined;
      const pod = config
        .pods()
        .find((p) => isStaticPod(p) && podFullName(p) === podFullName(mirror) && isMirrorPodOf(mirror, p));
      return pod?.metadata?.uid;
    },
  };
  return {
    config,
    mirrors,
    reconcileMirrorPods,
    mirrorPodTranslator,
    start: async (signal) => {
      await Promise.all(sources.map((s) => s.start(signal)));
    },
    stop: async () => {
      await Promise.all(sources.map((s) => s.stop()));
    },
  };
}
