/**
 * Checks an update handed to `updatePod` and turns it into the worker's private copy:
 * which UID it is for, whether it is runtime-only, and whether it is ignored.
 *
 * @module
 * @internal
 */
import type { Logger } from '@nodeagent/core';
import { InvalidPodUpdateError } from './errors.js';
import type { PodUpdate } from './pod-sync-status.js';
import type { RunningPod, UpdatePodOptions } from './types.js';

/** An update accepted for a worker. */
export interface AcceptedUpdate<R extends RunningPod> {
  readonly uid: string;
  readonly name: string;
  readonly namespace: string;
  /** Only a runtime pod was given (no spec): it can only be killed. */
  readonly isRuntimePod: boolean;
  readonly update: PodUpdate<R>;
}

/**
 * Accepts `options` as upstream does: a runtime pod alone is only valid with `kill` (other
 * types are ignored, `undefined`); a runtime pod next to a pod is dropped.
 *
 * @throws {@link InvalidPodUpdateError} when the update names no pod or the pod has no UID.
 */
export function acceptUpdate<R extends RunningPod>(
  options: UpdatePodOptions<R>,
  log: Logger,
): AcceptedUpdate<R> | undefined {
  let runningPod = options.runningPod;
  let isRuntimePod = false;
  let uid: string | undefined;
  let name: string;
  let namespace: string;
  if (runningPod !== undefined && options.pod === undefined) {
    if (options.updateType !== 'kill') {
      log.info(
        { podUID: runningPod.id, updateType: options.updateType },
        'Pod update is ignored, runtime pods can only be killed',
      );
      return undefined;
    }
    ({ id: uid, name, namespace } = runningPod);
    isRuntimePod = true;
  } else {
    if (options.pod === undefined) {
      throw new InvalidPodUpdateError(
        'updatePod: an update needs `pod`, or `runningPod` with updateType "kill"',
      );
    }
    if (runningPod !== undefined) {
      log.info(
        { podUID: options.pod.metadata?.uid },
        'Pod update included RunningPod which is only valid when Pod is not specified',
      );
      runningPod = undefined;
    }
    uid = options.pod.metadata?.uid;
    name = options.pod.metadata?.name ?? '';
    namespace = options.pod.metadata?.namespace ?? '';
  }
  if (typeof uid !== 'string' || uid === '') {
    throw new InvalidPodUpdateError(`updatePod: pod ${namespace}/${name} has no metadata.uid`);
  }
  const update: PodUpdate<R> = {
    updateType: options.updateType,
    startTime: options.startTime,
    pod: options.pod,
    mirrorPod: options.mirrorPod,
    runningPod,
    killOptions: options.killOptions,
  };
  return { uid, name, namespace, isRuntimePod, update };
}
