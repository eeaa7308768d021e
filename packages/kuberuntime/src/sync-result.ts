/**
 * What a sync or kill did, step by step (upstream `kubecontainer.PodSyncResult`).
 *
 * @module
 */
import type { SyncStepError } from './errors.js';

/** The step a {@link SyncResult} is about (upstream `SyncAction`). */
export type SyncAction =
  | 'StartContainer'
  | 'KillContainer'
  | 'CreatePodSandbox'
  | 'ConfigPodSandbox'
  | 'KillPodSandbox';

/** One step and its outcome. */
export interface SyncResult {
  /** The step. */
  readonly action: SyncAction;
  /** Container name, or the pod / sandbox it concerns. */
  readonly target: string;
  /** Set when the step failed. */
  error?: SyncStepError;
  /**
   * The sandbox (`CreatePodSandbox`) or container (`StartContainer`) the step made in the
   * runtime, once it exists, failed step or not: a PLEG relist can read it at once.
   */
  runtimeId?: string;
}

/** All steps of one `syncPod` / `killPod`. */
export class PodSyncResult {
  /** The steps, in order. */
  readonly results: SyncResult[] = [];
  /** A failure outside the steps (e.g. reading the new sandbox's status). */
  syncError: Error | undefined;

  /** Adds a step and returns it, so the caller can fail it later. */
  add(action: SyncAction, target: string): SyncResult {
    const r: SyncResult = { action, target };
    this.results.push(r);
    return r;
  }

  /** The sandboxes and containers the steps made (see {@link SyncResult.runtimeId}). */
  createdIds(): { sandboxIds: string[]; containerIds: string[] } {
    const ids = { sandboxIds: [] as string[], containerIds: [] as string[] };
    for (const r of this.results) {
      if (r.runtimeId === undefined) continue;
      if (r.action === 'CreatePodSandbox') ids.sandboxIds.push(r.runtimeId);
      else if (r.action === 'StartContainer') ids.containerIds.push(r.runtimeId);
    }
    return ids;
  }

  /** The first failure, if any (upstream `PodSyncResult.Error`). */
  error(): Error | undefined {
    return this.syncError ?? this.results.find((r) => r.error !== undefined)?.error;
  }
}
