// Type-level tests of the pod workers' generic and event-typed API (compiled by `tsc -b`, never run).
import { WorkQueue } from '@nodeagent/core';
import { expectTypeOf } from 'vitest';
import {
  type PodLifecycleState,
  type PodStatusProvider,
  type PodSyncer,
  type PodSyncOperation,
  PodWorkers,
  type RunningPod,
  type SyncPodResult,
} from '../src/index.js';

interface MyStatus {
  readonly observedAt: number;
}
declare const syncer: PodSyncer<MyStatus>;
declare const provider: PodStatusProvider<MyStatus>;
declare const otherProvider: PodStatusProvider<{ readonly other: true }>;

// S is inferred from the syncer and the status provider, and they must agree.
const workers = new PodWorkers({ syncer, statusProvider: provider, workQueue: new WorkQueue<string>() });
expectTypeOf(workers).toEqualTypeOf<PodWorkers<MyStatus, RunningPod>>();
// @ts-expect-error the provider's status type differs from the syncer's
new PodWorkers({ syncer, statusProvider: otherProvider, workQueue: new WorkQueue<string>() });

// The syncer sees the status type it declared.
expectTypeOf<Parameters<PodSyncer<MyStatus>['syncPod']>[4]>().toEqualTypeOf<MyStatus>();
expectTypeOf<ReturnType<PodSyncer<MyStatus>['syncPod']>>().toEqualTypeOf<Promise<SyncPodResult>>();
expectTypeOf<SyncPodResult['requeueAfterMs']>().toEqualTypeOf<number | undefined>();

// Typed events.
workers.on('stateChange', (event) => {
  expectTypeOf(event.uid).toEqualTypeOf<string>();
  expectTypeOf(event.state).toEqualTypeOf<PodLifecycleState>();
});
workers.on('syncError', (event) => {
  expectTypeOf(event.operation).toEqualTypeOf<PodSyncOperation>();
  expectTypeOf(event.error).toEqualTypeOf<Error>();
  expectTypeOf(event.retryInMs).toEqualTypeOf<number>();
});
// @ts-expect-error not an event of the pod workers
workers.on('relist', () => {});
