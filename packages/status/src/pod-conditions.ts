/**
 * The two rules built on which pod conditions the kubelet owns (`@nodeagent/core`'s
 * `podConditionByKubelet`): `mergePodStatus` (keep the conditions others own when writing) and
 * `isPodStatusByKubeletEqual` (compare only what the kubelet owns).
 *
 * @module
 */
import type { V1PodCondition, V1PodStatus } from '@kubernetes/client-node';
import { podConditionByKubelet, podConditionSharedByKubelet, setPodCondition } from '@nodeagent/core';
import { stableJson } from './pod-status-normalize.js';

/** Whether `phase` is `Succeeded` or `Failed`. */
export function isPodPhaseTerminal(phase: string | undefined): boolean {
  return phase === 'Succeeded' || phase === 'Failed';
}

function conditionsByKubelet(status: V1PodStatus): Map<string, V1PodCondition> {
  const out = new Map<string, V1PodCondition>();
  for (const c of status.conditions ?? []) {
    if (podConditionByKubelet(c.type) || podConditionSharedByKubelet(c.type)) out.set(c.type, c);
  }
  return out;
}

/**
 * Whether two (normalized) statuses agree on everything the kubelet writes: its own and shared
 * conditions (status, reason, message, probe and transition times), and every other field.
 * Conditions owned by others are ignored.
 */
export function isPodStatusByKubeletEqual(oldStatus: V1PodStatus, status: V1PodStatus): boolean {
  const oldConditions = conditionsByKubelet(oldStatus);
  const newConditions = conditionsByKubelet(status);
  if (oldConditions.size !== newConditions.size) return false;
  for (const [type, c] of newConditions) {
    const o = oldConditions.get(type);
    if (
      o === undefined ||
      o.status !== c.status ||
      (o.reason ?? '') !== (c.reason ?? '') ||
      (o.message ?? '') !== (c.message ?? '') ||
      stableJson(o.lastProbeTime ?? null) !== stableJson(c.lastProbeTime ?? null) ||
      stableJson(o.lastTransitionTime ?? null) !== stableJson(c.lastTransitionTime ?? null)
    ) {
      return false;
    }
  }
  const { conditions: _o, ...oldRest } = oldStatus;
  const { conditions: _n, ...newRest } = status;
  return stableJson(oldRest) === stableJson(newRest);
}

/**
 * The status to write over `oldStatus` (what the API has): conditions others own are kept,
 * the kubelet's come from `newStatus`; `DisruptionTarget` is only sent with the transition to
 * a terminal phase; `resourceClaimStatuses` stays the API's; a terminal phase waits while
 * containers could still run (`delayTerminal`); a terminal pod is not Ready nor
 * ContainersReady (reason `PodCompleted` or `PodFailed`, transition at `now`, RFC 3339).
 * Inputs are not modified.
 */
export function mergePodStatus(
  oldStatus: V1PodStatus,
  newStatus: V1PodStatus,
  delayTerminal: boolean,
  now: string,
): V1PodStatus {
  const merged: V1PodStatus = { ...newStatus };
  const conditions: V1PodCondition[] = (oldStatus.conditions ?? []).filter(
    (c) => !podConditionByKubelet(c.type),
  );
  const toTerminal = !isPodPhaseTerminal(oldStatus.phase) && isPodPhaseTerminal(newStatus.phase);
  for (const c of newStatus.conditions ?? []) {
    if (podConditionByKubelet(c.type)) conditions.push(c);
    else if (podConditionSharedByKubelet(c.type) && toTerminal && !delayTerminal)
      setPodCondition(conditions, c);
  }
  merged.conditions = conditions;
  if (oldStatus.resourceClaimStatuses !== undefined)
    merged.resourceClaimStatuses = oldStatus.resourceClaimStatuses;
  else delete merged.resourceClaimStatuses;
  if (toTerminal && delayTerminal) {
    setOrDelete(merged, 'phase', oldStatus.phase);
    setOrDelete(merged, 'reason', oldStatus.reason);
    setOrDelete(merged, 'message', oldStatus.message);
  }
  if (isPodPhaseTerminal(merged.phase)) {
    merged.conditions = merged.conditions.map((c) =>
      (c.type === 'Ready' || c.type === 'ContainersReady') && c.status === 'True'
        ? {
            ...c,
            status: 'False',
            reason: merged.phase === 'Failed' ? 'PodFailed' : 'PodCompleted',
            lastTransitionTime: now as unknown as Date,
          }
        : c,
    );
  }
  return merged;
}

function setOrDelete(
  status: V1PodStatus,
  key: 'phase' | 'reason' | 'message',
  value: string | undefined,
): void {
  if (value === undefined) delete status[key];
  else status[key] = value;
}
