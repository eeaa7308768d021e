/**
 * The kubelet-owned pod conditions (upstream `status/generate.go`): Initialized,
 * ContainersReady and Ready, with upstream's reasons and messages.
 *
 * @module
 */
import type { V1ContainerStatus, V1Pod, V1PodCondition } from '@kubernetes/client-node';
import { isRestartableInitContainer } from '@nodeagent/kubecontainer';
import { findStatus } from './pod-phase.js';

function goList(names: readonly string[]): string {
  return `[${names.join(' ')}]`;
}

function hasAnyRegularContainerStarted(pod: V1Pod, statuses: readonly V1ContainerStatus[]): boolean {
  const names = new Set((pod.spec?.containers ?? []).map((c) => c.name));
  return statuses.some((s) => names.has(s.name) && (s.state?.running != null || s.state?.terminated != null));
}

/** The Initialized condition (upstream `GeneratePodInitializedCondition`). */
export function initializedCondition(
  pod: V1Pod,
  statuses: readonly V1ContainerStatus[],
  phase: string,
): V1PodCondition {
  const inits = pod.spec?.initContainers ?? [];
  if (inits.length === 0) return { type: 'Initialized', status: 'True' };
  const unknown: string[] = [];
  const incomplete: string[] = [];
  for (const c of inits) {
    const s = findStatus(statuses, c.name);
    if (s === undefined) {
      unknown.push(c.name);
      continue;
    }
    if (isRestartableInitContainer(c)) {
      if (s.started !== true) incomplete.push(c.name);
      continue;
    }
    if (s.state?.terminated == null || s.state.terminated.exitCode !== 0) incomplete.push(c.name);
  }
  if (phase === 'Succeeded' && unknown.length === 0)
    return { type: 'Initialized', status: 'True', reason: 'PodCompleted' };
  if (hasAnyRegularContainerStarted(pod, statuses)) return { type: 'Initialized', status: 'True' };
  const messages: string[] = [];
  if (unknown.length > 0) messages.push(`containers with unknown status: ${goList(unknown)}`);
  if (incomplete.length > 0) messages.push(`containers with incomplete status: ${goList(incomplete)}`);
  if (messages.length > 0) {
    return {
      type: 'Initialized',
      status: 'False',
      reason: 'ContainersNotInitialized',
      message: messages.join(', '),
    };
  }
  return { type: 'Initialized', status: 'True' };
}

/** The ContainersReady condition (upstream `GenerateContainersReadyCondition`). */
export function containersReadyCondition(
  pod: V1Pod,
  statuses: readonly V1ContainerStatus[],
  phase: string,
): V1PodCondition {
  const unknown: string[] = [];
  const unready: string[] = [];
  const check = (name: string): void => {
    const s = findStatus(statuses, name);
    if (s === undefined) unknown.push(name);
    else if (!s.ready) unready.push(name);
  };
  for (const c of pod.spec?.initContainers ?? []) if (isRestartableInitContainer(c)) check(c.name);
  for (const c of pod.spec?.containers ?? []) check(c.name);
  if ((phase === 'Succeeded' && unknown.length === 0) || phase === 'Failed') {
    return {
      type: 'ContainersReady',
      status: 'False',
      reason: phase === 'Failed' ? 'PodFailed' : 'PodCompleted',
    };
  }
  const messages: string[] = [];
  if (unknown.length > 0) messages.push(`containers with unknown status: ${goList(unknown)}`);
  if (unready.length > 0) messages.push(`containers with unready status: ${goList(unready)}`);
  if (messages.length > 0) {
    return {
      type: 'ContainersReady',
      status: 'False',
      reason: 'ContainersNotReady',
      message: messages.join(', '),
    };
  }
  return { type: 'ContainersReady', status: 'True' };
}

/** The Ready condition (upstream `GeneratePodReadyCondition`). */
export function readyCondition(
  pod: V1Pod,
  containersReady: V1PodCondition,
  conditions: readonly V1PodCondition[],
): V1PodCondition {
  if (containersReady.status !== 'True') {
    return {
      type: 'Ready',
      status: containersReady.status,
      ...(containersReady.reason ? { reason: containersReady.reason } : {}),
      ...(containersReady.message ? { message: containersReady.message } : {}),
    };
  }
  const messages: string[] = [];
  for (const gate of pod.spec?.readinessGates ?? []) {
    const c = conditions.find((x) => x.type === gate.conditionType);
    if (c === undefined)
      messages.push(`corresponding condition of pod readiness gate "${gate.conditionType}" does not exist.`);
    else if (c.status !== 'True') {
      messages.push(
        `the status of pod readiness gate "${gate.conditionType}" is not "True", but ${c.status}`,
      );
    }
  }
  if (messages.length > 0)
    return { type: 'Ready', status: 'False', reason: 'ReadinessGatesNotReady', message: messages.join(', ') };
  return { type: 'Ready', status: 'True' };
}
