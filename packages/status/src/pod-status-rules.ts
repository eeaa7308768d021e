/**
 * The pure rules the pod status manager applies before caching a status (upstream
 * `updateStatusInternal`, `TerminatePod`, `canBeDeleted`): refused container transitions,
 * transition and start times, the terminal status of a finished pod, and when a pod may be
 * deleted for good.
 *
 * @module
 */
import type { V1ContainerStatus, V1Pod, V1PodCondition, V1PodStatus } from '@kubernetes/client-node';
import { isPodPhaseTerminal } from './pod-conditions.js';

/** The annotation that marks a mirror pod. */
export const MIRROR_POD_ANNOTATION = 'kubernetes.io/config.mirror';

/** Condition types whose `lastTransitionTime` the manager maintains. */
const TRANSITION_CONDITIONS = [
  'ContainersReady',
  'Ready',
  'Initialized',
  'PodReadyToStartContainers',
  'PodScheduled',
  'DisruptionTarget',
];

function condition(status: V1PodStatus, type: string): V1PodCondition | undefined {
  return status.conditions?.find((c) => c.type === type);
}

function isMirrorPod(pod: V1Pod): boolean {
  return pod.metadata?.annotations?.[MIRROR_POD_ANNOTATION] !== undefined;
}

/**
 * Upstream `checkContainerStateTransition`: unless restarts are allowed (`Always`, or
 * `OnFailure` after a failure), a terminated container never becomes non-terminated.
 * Returns the error text, or `undefined` when the transition is legal.
 */
export function illegalContainerTransition(
  oldStatuses: readonly V1ContainerStatus[] | undefined,
  newStatuses: readonly V1ContainerStatus[] | undefined,
  restartPolicy: string | undefined,
): string | undefined {
  if (restartPolicy === 'Always' || restartPolicy === undefined) return undefined;
  for (const old of oldStatuses ?? []) {
    const t = old.state?.terminated;
    if (t === undefined) continue;
    if (t.exitCode !== 0 && restartPolicy === 'OnFailure') continue;
    const now = newStatuses?.find((s) => s.name === old.name);
    if (now !== undefined && now.state?.terminated === undefined) {
      return `terminated container ${now.name} attempted illegal transition to non-terminated state`;
    }
  }
  return undefined;
}

/**
 * Sets, in place, the `lastTransitionTime` of the conditions the kubelet maintains (kept from
 * `oldStatus` while the status holds, else `now`) and keeps `startTime` once set.
 */
export function applyTransitionTimes(status: V1PodStatus, oldStatus: V1PodStatus, now: string): void {
  for (const type of TRANSITION_CONDITIONS) {
    const c = condition(status, type);
    if (c === undefined) continue;
    const old = condition(oldStatus, type);
    c.lastTransitionTime = (
      old !== undefined && old.status === c.status ? old.lastTransitionTime : now
    ) as Date;
  }
  if (oldStatus.startTime !== undefined && oldStatus.startTime !== null)
    status.startTime = oldStatus.startTime;
  else if (status.startTime === undefined || status.startTime === null)
    status.startTime = now as unknown as Date;
}

/** Upstream `hasPodInitialized`: no init containers, or evidence that a regular container started. */
export function hasPodInitialized(pod: V1Pod): boolean {
  if ((pod.spec?.initContainers?.length ?? 0) === 0) return true;
  for (const s of pod.status?.containerStatuses ?? []) {
    if (s.lastState?.terminated !== undefined || s.state?.waiting === undefined) return true;
  }
  const init = pod.status?.initContainerStatuses ?? [];
  const last = init[init.length - 1];
  return last?.lastState?.terminated?.exitCode === 0 || last?.state?.terminated?.exitCode === 0;
}

const UNKNOWN_STATE = {
  terminated: {
    reason: 'ContainerStatusUnknown',
    message: 'The container could not be located when the pod was terminated',
    exitCode: 137,
  },
};

/**
 * The status of a finished pod (upstream `TerminatePod`), from its last status: containers
 * without a terminated state become `ContainerStatusUnknown` (exit 137) — regular ones once the
 * pod initialized, init containers except the trailing never-started ones — and a non-terminal
 * phase becomes `Failed` unless the pod is static.
 */
export function terminatedStatus(pod: V1Pod, last: V1PodStatus, isStatic: boolean): V1PodStatus {
  const status = structuredClone(last);
  if (hasPodInitialized(pod)) {
    for (const c of status.containerStatuses ?? [])
      if (c.state?.terminated === undefined) c.state = UNKNOWN_STATE;
  }
  const init = status.initContainerStatuses ?? [];
  let end = init.length - 1;
  while (end > 0 && init[end]?.state?.waiting !== undefined && init[end]?.lastState?.terminated === undefined)
    end--;
  for (const c of init.slice(0, end + 1)) if (c.state?.terminated === undefined) c.state = UNKNOWN_STATE;
  if (!isStatic && !isPodPhaseTerminal(status.phase)) status.phase = 'Failed';
  return status;
}

/** Upstream `canBeDeleted`: being deleted, not a mirror pod, terminal in the API, finished here. */
export function canBeDeleted(pod: V1Pod, podIsFinished: boolean): boolean {
  const deleting = pod.metadata?.deletionTimestamp !== undefined && pod.metadata.deletionTimestamp !== null;
  if (!deleting || isMirrorPod(pod)) return false;
  if (!isPodPhaseTerminal(pod.status?.phase)) return false;
  return podIsFinished;
}
