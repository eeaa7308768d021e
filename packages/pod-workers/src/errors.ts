/**
 * The typed errors of the pod workers.
 *
 * @module
 */

/** Thrown by {@link PodWorkers.updatePod} for an update that names no pod (nothing else is affected). */
export class InvalidPodUpdateError extends Error {
  /** @param message what is wrong with the update and what would be valid. */
  constructor(message: string) {
    super(message);
    this.name = 'InvalidPodUpdateError';
  }
}

/**
 * Rejected by {@link PodWorkers.killPodAndWait} when the pod did not finish terminating in
 * time. The termination goes on in the background.
 */
export class KillPodTimeoutError extends Error {
  /**
   * @param podUid the pod that did not terminate.
   * @param timeoutSeconds how long the caller waited.
   */
  constructor(
    readonly podUid: string,
    readonly timeoutSeconds: number,
  ) {
    super(`timeout waiting to kill pod ${podUid} (waited ${timeoutSeconds}s)`);
    this.name = 'KillPodTimeoutError';
  }
}
