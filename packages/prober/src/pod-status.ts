/**
 * How probe results become API status (upstream `UpdatePodStatus`): `started` from the startup
 * probe, `ready` from the readiness probe, plain init containers ready when they exited 0.
 *
 * @module
 */
import type { V1ContainerStatus, V1Pod, V1PodStatus } from '@kubernetes/client-node';
import { definedFields } from '@nodeagent/core';
import { isRestartableInitContainer } from '@nodeagent/kubecontainer';
import type { ProbeResult, ProbeType } from './probe-types.js';
import { timeMs } from './worker.js';

/** What {@link applyProbeResults} consults. */
export interface ProbeResultsView {
  /** The published result of `type` for `containerID` (the API form, `containerd://…`). */
  result(type: ProbeType, containerID: string): ProbeResult | undefined;
  /** True when a worker of `type` exists for the container (it has that probe). */
  hasWorker(podUID: string, containerName: string, type: ProbeType): boolean;
  /** Asks the readiness worker to probe now (upstream's manual trigger); optional. */
  triggerReadiness?(podUID: string, containerName: string): void;
  /** When the agent started (ms since the epoch), for the kubelet-restart rule. @default 0 */
  readonly startedAtMs?: number;
}

/** A container that was running 10 s before the agent started is not flipped to not ready. */
const KUBELET_RESTART_GRACE_MS = 10_000;

/**
 * A copy of `status` with `started` and `ready` of every container set from the probe results
 * (upstream `manager.UpdatePodStatus`, `ChangeContainerStatusOnKubeletRestart` off as by default).
 * `status` is not modified.
 */
export function applyProbeResults(pod: V1Pod, status: V1PodStatus, view: ProbeResultsView): V1PodStatus {
  const uid = pod.metadata?.uid ?? '';
  const startedAt = view.startedAtMs ?? 0;
  const isStarted = (s: V1ContainerStatus): boolean => {
    if (s.state?.running == null) return false;
    const result = view.result('startup', s.containerID ?? '');
    if (result !== undefined) return result === 'success';
    if (s.started === true) return true;
    return !view.hasWorker(uid, s.name, 'startup');
  };
  const readyOf = (s: V1ContainerStatus, hasReadinessProbe: boolean): boolean => {
    if (s.state?.running == null) return false;
    if (view.result('readiness', s.containerID ?? '') === 'success') return true;
    const exists = view.hasWorker(uid, s.name, 'readiness');
    let ready = !exists;
    if (exists) view.triggerReadiness?.(uid, s.name);
    // Kubelet-restart smoothing: no result yet for a container that ran before the agent started.
    const since = timeMs(s.state.running.startedAt);
    if (since !== undefined && since < startedAt - KUBELET_RESTART_GRACE_MS) {
      if (!ready && view.result('readiness', s.containerID ?? '') === undefined) ready = true;
      if (hasReadinessProbe) {
        const podReady = (pod.status?.conditions ?? []).some(
          (c) => c.type === 'Ready' && c.status === 'True',
        );
        if (!podReady) ready = false;
      }
    }
    return ready;
  };

  const containers = pod.spec?.containers ?? [];
  const containerStatuses = status.containerStatuses?.map((s) => {
    const started = isStarted(s);
    if (!started) return { ...s, started };
    const spec = containers.find((c) => c.name === s.name);
    return { ...s, started, ready: readyOf(s, spec?.readinessProbe != null) };
  });
  const inits = pod.spec?.initContainers ?? [];
  const initContainerStatuses = status.initContainerStatuses?.map((s, i) => {
    const started = isStarted(s);
    const spec = inits[i]?.name === s.name ? inits[i] : inits.find((c) => c.name === s.name);
    if (spec === undefined) return { ...s, started };
    if (!isRestartableInitContainer(spec)) {
      return s.state?.terminated != null && s.state.terminated.exitCode === 0
        ? { ...s, started, ready: true }
        : { ...s, started };
    }
    if (!started) return { ...s, started };
    return { ...s, started, ready: readyOf(s, spec.readinessProbe != null) };
  });
  return { ...status, ...definedFields({ containerStatuses, initContainerStatuses }) };
}
