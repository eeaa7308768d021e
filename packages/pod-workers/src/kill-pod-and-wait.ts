/**
 * A kill that waits for the pod to stop (the kubelet's `killPodNow`, in newer versions
 * `TerminatePodAbnormallyAndWait`), used by eviction, critical-pod preemption and node
 * shutdown.
 *
 * @module
 */
import type { V1Pod } from '@kubernetes/client-node';
import type { Clock } from '@nodeagent/core';
import { KillPodTimeoutError } from './errors.js';
import { killPodWaitTimeoutSeconds } from './grace-period.js';
import type { KillPodOptions, PodEventRecorder, PodStatusFunc } from './types.js';

/** Options for {@link PodWorkers.killPodAndWait}. */
export interface KillPodAndWaitOptions {
  /** The pod is being evicted (its content is removed once terminated). @default false */
  readonly evict?: boolean;
  /** A grace period, in seconds, overriding the pod's if shorter. @default the pod's own */
  readonly gracePeriodSecondsOverride?: number;
  /** Amends the final pod status (reason `Evicted`, a message, conditions). */
  readonly podStatusFunc?: PodStatusFunc;
}

/** What the helper needs from the pod workers. @internal */
export interface KillPodAndWaitDeps {
  readonly clock: Clock;
  readonly recorder: PodEventRecorder | undefined;
  updatePod(options: { updateType: 'kill'; pod: V1Pod; killOptions: KillPodOptions }): void;
  onTimeout(uid: string, timeoutSeconds: number): void;
}

/** @internal see {@link PodWorkers.killPodAndWait}. */
export function killPodAndWait(
  deps: KillPodAndWaitDeps,
  pod: V1Pod,
  options: KillPodAndWaitOptions,
): Promise<void> {
  const timeoutSeconds = killPodWaitTimeoutSeconds(pod, options.gracePeriodSecondsOverride);
  const uid = pod.metadata?.uid ?? '';
  return new Promise<void>((resolve, reject) => {
    let settled = false;
    const timer = deps.clock.setTimeout(() => {
      if (settled) return;
      settled = true;
      deps.recorder?.event(
        pod,
        'Warning',
        'ExceededGracePeriod',
        'Container runtime did not terminate the pod within specified grace period.',
      );
      deps.onTimeout(uid, timeoutSeconds);
      reject(new KillPodTimeoutError(uid, timeoutSeconds));
    }, timeoutSeconds * 1000);
    const onCompleted = (): void => {
      if (settled) return;
      settled = true;
      timer.cancel();
      resolve();
    };
    try {
      deps.updatePod({
        updateType: 'kill',
        pod,
        killOptions: {
          onCompleted,
          ...(options.evict === true ? { evict: true } : {}),
          ...(options.podStatusFunc ? { podStatusFunc: options.podStatusFunc } : {}),
          ...(options.gracePeriodSecondsOverride !== undefined
            ? { podTerminationGracePeriodSecondsOverride: options.gracePeriodSecondsOverride }
            : {}),
        },
      });
    } catch (err) {
      settled = true;
      timer.cancel();
      reject(err);
    }
  });
}
