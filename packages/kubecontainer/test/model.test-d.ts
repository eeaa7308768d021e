// Type-level tests of the runtime pod model (compiled by `tsc -b`, never run).
import type { PodSandboxStatus } from '@nodeagent/cri';
import { expectTypeOf } from 'vitest';
import {
  type ContainerRuntimeStatus,
  emptyPodStatus,
  findContainerStatusByName,
  type KUBERNETES_POD_UID_LABEL,
  type PodStatus,
  type PodStatusSource,
  type RuntimeContainerState,
  type RuntimeLister,
  type RuntimePod,
  sortContainerStatusesByCreationTime,
} from '../src/index.js';

// The model is read-only.
declare const status: PodStatus;
expectTypeOf(status.containerStatuses).toEqualTypeOf<readonly ContainerRuntimeStatus[]>();
expectTypeOf(status.sandboxStatuses).toEqualTypeOf<readonly PodSandboxStatus[]>();
// @ts-expect-error readonly
status.ips = [];
expectTypeOf<ContainerRuntimeStatus['state']>().toEqualTypeOf<RuntimeContainerState>();
expectTypeOf<RuntimeContainerState>().toEqualTypeOf<'created' | 'running' | 'exited' | 'unknown'>();
expectTypeOf<ContainerRuntimeStatus['hash']>().toEqualTypeOf<bigint>();

// Label keys are literal types.
expectTypeOf<typeof KUBERNETES_POD_UID_LABEL>().toEqualTypeOf<'io.kubernetes.pod.uid'>();

// Helpers keep the element type.
expectTypeOf(emptyPodStatus('uid')).toEqualTypeOf<PodStatus>();
expectTypeOf(findContainerStatusByName(status, 'app')).toEqualTypeOf<ContainerRuntimeStatus | undefined>();
interface Mine {
  readonly createdAt: number;
  readonly restartCount: number;
  readonly tag: 'mine';
}
declare const mine: readonly Mine[];
expectTypeOf(sortContainerStatusesByCreationTime(mine)).toEqualTypeOf<Mine[]>();
// @ts-expect-error needs createdAt and restartCount
sortContainerStatusesByCreationTime([{ createdAt: 1 }]);

// The two runtime reads PLEG and the runtime manager take.
expectTypeOf<RuntimeLister['listPods']>().returns.toEqualTypeOf<Promise<RuntimePod[]>>();
expectTypeOf<PodStatusSource['getPodStatus']>().returns.toEqualTypeOf<Promise<PodStatus>>();
