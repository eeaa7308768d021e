/**
 * The relist diff (upstream `generic.go` `convertState`, `generateEvents`,
 * `getContainersFromPods`, `computeEvents`): pure functions from an old and a new view of a
 * pod to lifecycle events.
 *
 * @module
 */

import type { RuntimeContainerState, RuntimePod } from '@nodeagent/kubecontainer';
import type { PodLifecycleEvent } from './events.js';

/**
 * A container's state as the diff sees it: `created` counts as `unknown` (the kubelet does not
 * act on created containers) and a container absent from the listing is `non-existent`.
 */
export type PlegContainerState = 'running' | 'exited' | 'unknown' | 'non-existent';

/** Maps a runtime state to the diff's (upstream `convertState`). */
export function toPlegContainerState(state: RuntimeContainerState): PlegContainerState {
  switch (state) {
    case 'running':
      return 'running';
    case 'exited':
      return 'exited';
    default:
      return 'unknown';
  }
}

/**
 * The events for one container going from `oldState` to `newState` (upstream
 * `generateEvents`): none when equal; running → `ContainerStarted`; exited → `ContainerDied`;
 * unknown → `ContainerChanged`; gone after exited → `ContainerRemoved`; gone from any other
 * state → `ContainerDied` then `ContainerRemoved` (it died unseen).
 */
export function generateEvents(
  podUid: string,
  containerId: string,
  oldState: PlegContainerState,
  newState: PlegContainerState,
): PodLifecycleEvent[] {
  if (oldState === newState) return [];
  const event = (type: PodLifecycleEvent['type']): PodLifecycleEvent => ({
    id: podUid,
    type,
    data: containerId,
  });
  switch (newState) {
    case 'running':
      return [event('ContainerStarted')];
    case 'exited':
      return [event('ContainerDied')];
    case 'unknown':
      return [event('ContainerChanged')];
    case 'non-existent':
      return oldState === 'exited'
        ? [event('ContainerRemoved')]
        : [event('ContainerDied'), event('ContainerRemoved')];
  }
}

/** The state of `containerId` (container or sandbox) in `pod`; `non-existent` when absent. */
export function containerStateIn(pod: RuntimePod | undefined, containerId: string): PlegContainerState {
  if (pod === undefined) return 'non-existent';
  const found =
    pod.containers.find((c) => c.id === containerId) ?? pod.sandboxes.find((s) => s.id === containerId);
  return found === undefined ? 'non-existent' : toPlegContainerState(found.state);
}

/** IDs of every container and sandbox of either view, old first, without duplicates. */
export function containerIdsOf(oldPod: RuntimePod | undefined, newPod: RuntimePod | undefined): string[] {
  const ids = new Set<string>();
  for (const pod of [oldPod, newPod]) {
    if (pod === undefined) continue;
    for (const c of pod.containers) ids.add(c.id);
    for (const s of pod.sandboxes) ids.add(s.id);
  }
  return [...ids];
}

/**
 * Every event between two views of one pod, in container order (upstream: the loop over
 * `getContainersFromPods` calling `computeEvents`). `ContainerChanged` events are included;
 * the PLEG filters them out before sending.
 */
export function computePodEvents(
  podUid: string,
  oldPod: RuntimePod | undefined,
  newPod: RuntimePod | undefined,
): PodLifecycleEvent[] {
  const oldStates = stateIndex(oldPod);
  const newStates = stateIndex(newPod);
  const events: PodLifecycleEvent[] = [];
  for (const id of containerIdsOf(oldPod, newPod)) {
    events.push(
      ...generateEvents(podUid, id, oldStates.get(id) ?? 'non-existent', newStates.get(id) ?? 'non-existent'),
    );
  }
  return events;
}

/** Container ID → state, containers winning over sandboxes with the same ID (lookup order upstream). */
function stateIndex(pod: RuntimePod | undefined): Map<string, PlegContainerState> {
  const index = new Map<string, PlegContainerState>();
  if (pod === undefined) return index;
  for (const s of pod.sandboxes) index.set(s.id, toPlegContainerState(s.state));
  for (const c of pod.containers) index.set(c.id, toPlegContainerState(c.state));
  return index;
}
