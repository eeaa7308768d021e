/**
 * The volume manager in the agent (`@nodeagent/volumes`): the pod sync sets a pod's volumes
 * up before the runtime starts containers (else `FailedMount` and a retry), the runtime mounts
 * the host paths the manager reports, a terminated pod's volumes are torn down, and pod
 * directories nothing uses any more are removed once the pod sources have synced.
 *
 * @module
 */
import type { V1Node, V1Pod } from '@kubernetes/client-node';
import type { Clock, Logger } from '@nodeagent/core';
import type { PodVolumeLookup } from '@nodeagent/kuberuntime';
import {
  apiVolumeDataSource,
  type MemoryMediumMode,
  UnmountedVolumesError,
  type VolumeJsonApi,
  VolumeManager,
} from '@nodeagent/volumes';

/** What the pod syncer calls (see `AgentPodSyncerDeps.volumes`). */
export interface PodVolumes {
  /** Sets up the pod's volumes; rejects (after a `FailedMount` event) when one is not ready. */
  waitForAttachAndMount(pod: V1Pod, signal?: AbortSignal): Promise<void>;
  /** Tears the pod's volumes down once its containers are gone. */
  unmountPodVolumes(pod: V1Pod): Promise<void>;
}

/** Inputs of {@link createVolumeParts}. */
export interface VolumePartsOptions {
  /** ConfigMaps, Secrets, TokenRequests. */
  readonly api: VolumeJsonApi;
  /** Pod directories (`<root-dir>/pods`). */
  readonly podsDir: string;
  /** `'directory'` only for a runtime that needs no real mounts, without root. @default 'tmpfs' */
  readonly memoryMedium?: MemoryMediumMode | undefined;
  /** This node (its allocatable feeds downwardAPI limits and tmpfs sizes). */
  readonly node: () => V1Node | undefined;
  /** Pod events (`FailedMount`). */
  readonly recordPodEvent: (pod: V1Pod, type: 'Normal' | 'Warning', reason: string, message: string) => void;
  /** Whether a pod directory is still needed (a known pod or one that may still run). */
  readonly podDirInUse: (uid: string) => boolean;
  /** Remount period, ms (the kubelet's sync period). @default 60_000 */
  readonly remountPeriodMs?: number | undefined;
  readonly clock: Clock;
  readonly logger: Logger;
}

/** The manager, the runtime's lookup and the syncer's hooks. */
export function createVolumeParts(options: VolumePartsOptions): {
  manager: VolumeManager;
  podVolumes: PodVolumeLookup;
  hooks: PodVolumes;
} {
  const manager = new VolumeManager({
    podsDir: options.podsDir,
    dataSource: apiVolumeDataSource(options.api),
    memoryMedium: options.memoryMedium ?? 'tmpfs',
    nodeAllocatable: () => (options.node()?.status?.allocatable as Record<string, string> | undefined) ?? {},
    recorder: options.recordPodEvent,
    podDirInUse: options.podDirInUse,
    clock: options.clock,
    logger: options.logger,
    ...(options.remountPeriodMs === undefined ? {} : { remountPeriodMs: options.remountPeriodMs }),
  });
  return {
    manager,
    podVolumes: (pod) => manager.getMountedVolumesForPod(pod.metadata?.uid ?? ''),
    hooks: {
      async waitForAttachAndMount(pod, signal) {
        try {
          await manager.waitForAttachAndMount(pod, signal);
        } catch (err) {
          // As the kubelet's syncPod: one FailedMount for the pod besides the per-volume ones.
          if (err instanceof UnmountedVolumesError)
            options.recordPodEvent(pod, 'Warning', 'FailedMount', err.eventMessage);
          throw err;
        }
      },
      unmountPodVolumes: (pod) => manager.unmountPodVolumes(pod.metadata?.uid ?? ''),
    },
  };
}
