/**
 * The API `PodStatus` of a pod from its runtime status (upstream `generateAPIPodStatus`,
 * `convertToAPIContainerStatuses`, `getPhase`, `status/generate.go`): phase, the kubelet's
 * conditions with lastTransitionTime carried over, container and init container statuses with
 * state / lastState / restartCount / reasons, pod and host IPs.
 *
 * @module
 */
import type { V1Pod, V1PodCondition, V1PodStatus } from '@kubernetes/client-node';
import { podConditionByKubelet, setPodCondition } from '@nodeagent/core';
import type { PodStatus } from '@nodeagent/kubecontainer';
import { convertContainerStatuses } from './container-statuses.js';
import { containersReadyCondition, initializedCondition, readyCondition } from './pod-conditions.js';
import { getPhase } from './pod-phase.js';
import type { PodStatusOptions } from './pod-status-options.js';
import { podQosClass } from './resources.js';
import { podSandboxChanged } from './sandbox-changed.js';
import { newestFirst } from './status-order.js';

/**
 * Computes the API status of a pod from its runtime status.
 *
 * @example
 * ```ts
 * const status = computePodStatus(pod, await manager.getPodStatus(pod), { reasonCache: manager.reasonCache });
 * console.log(status.phase, status.containerStatuses?.[0]?.state);
 * ```
 */
export function computePodStatus(
  pod: V1Pod,
  rawStatus: PodStatus,
  options: PodStatusOptions = {},
): V1PodStatus {
  const podStatus = newestFirst(rawStatus);
  const old = options.oldStatus ?? pod.status ?? {};
  const now = options.now ?? Date.now();
  const inits = pod.spec?.initContainers ?? [];
  const hasInit = inits.length > 0;
  const containerStatuses = convertContainerStatuses(
    pod,
    podStatus,
    old.containerStatuses ?? [],
    pod.spec?.containers ?? [],
    hasInit,
    false,
    options,
  );
  const initContainerStatuses = convertContainerStatuses(
    pod,
    podStatus,
    old.initContainerStatuses ?? [],
    inits,
    hasInit,
    true,
    options,
  );
  const all = [...initContainerStatuses, ...containerStatuses];
  const regular = new Set((pod.spec?.containers ?? []).map((c) => c.name));
  const activeRegular = podStatus.containerStatuses.some(
    (c) => regular.has(c.name) && (c.state === 'running' || c.state === 'created'),
  );
  let phase: string = getPhase(pod, all, options.podIsTerminal ?? false, activeRegular);
  const terminal = (p: string | undefined): boolean => p === 'Failed' || p === 'Succeeded';
  if (!terminal(phase) && terminal(old.phase)) phase = old.phase as string;
  if (terminal(pod.status?.phase) && phase !== pod.status?.phase) phase = pod.status?.phase as string;

  const conditions: V1PodCondition[] = (pod.status?.conditions ?? []).filter(
    (c) => !podConditionByKubelet(c.type),
  );
  // As upstream: `DisruptionTarget` is set once, when the kubelet evicts the pod, and lives in
  // the previous status (the status manager's) until written; every later status carries it.
  const disruption = old.conditions?.find((c) => c.type === 'DisruptionTarget');
  if (disruption !== undefined) setPodCondition(conditions, disruption);
  conditions.push({
    type: 'PodReadyToStartContainers',
    status: podSandboxChanged(pod, podStatus).changed ? 'False' : 'True',
  });
  conditions.push(initializedCondition(pod, all, phase));
  const containersReady = containersReadyCondition(pod, all, phase);
  conditions.push(readyCondition(pod, containersReady, conditions));
  conditions.push(containersReady);
  conditions.push({ type: 'PodScheduled', status: 'True' });
  for (const c of conditions) {
    if (!podConditionByKubelet(c.type)) continue;
    const before = old.conditions?.find((x) => x.type === c.type);
    c.lastTransitionTime =
      before !== undefined && before.status === c.status && before.lastTransitionTime
        ? before.lastTransitionTime
        : new Date(now);
  }

  const status: V1PodStatus = {
    phase,
    conditions,
    containerStatuses,
    qosClass: podQosClass(pod),
    startTime: old.startTime ?? new Date(now),
  };
  if (hasInit) status.initContainerStatuses = initContainerStatuses;
  if (old.phase === phase) {
    // The reason and message go with the phase; the API's fill in what the previous status lacks.
    const reason = old.reason || pod.status?.reason;
    const message = old.message || pod.status?.message;
    if (reason) status.reason = reason;
    if (message) status.message = message;
  }
  let podIps = [...podStatus.ips];
  const hostIps = options.hostIps ?? [];
  if (hostIps.length > 0) {
    status.hostIP = hostIps[0] as string;
    status.hostIPs = hostIps.slice(0, 2).map((ip) => ({ ip }));
    if (pod.spec?.hostNetwork === true && podIps.length === 0) podIps = hostIps.slice(0, 2);
  }
  if (podIps.length > 0) {
    status.podIP = podIps[0] as string;
    status.podIPs = podIps.map((ip) => ({ ip }));
  }
  return status;
}
