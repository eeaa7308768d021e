/**
 * Pod conditions as the kubelet sees them (upstream `pkg/kubelet/types/pod_status.go`): which
 * types it owns, which it shares with controllers, and setting one condition of a type.
 *
 * @module
 */

/**
 * Conditions the kubelet owns: `PodScheduled`, `Ready`, `Initialized`, `ContainersReady`,
 * `PodResizeInProgress`, `PodResizePending` and `PodReadyToStartContainers` (its feature gate
 * is on by default).
 */
export const POD_CONDITIONS_BY_KUBELET: readonly string[] = [
  'PodScheduled',
  'Ready',
  'Initialized',
  'ContainersReady',
  'PodResizeInProgress',
  'PodResizePending',
  'PodReadyToStartContainers',
];

/** Whether the kubelet owns condition `type`. */
export function podConditionByKubelet(type: string): boolean {
  return POD_CONDITIONS_BY_KUBELET.includes(type);
}

/** Conditions the kubelet shares with controllers: `DisruptionTarget`. */
export function podConditionSharedByKubelet(type: string): boolean {
  return type === 'DisruptionTarget';
}

/**
 * Puts `condition` in `conditions` in place of the one of its type, or at the end when there
 * is none. Modifies `conditions`.
 *
 * @example
 * ```ts
 * const conditions = [{ type: 'Ready', status: 'True' }, { type: 'DisruptionTarget', status: 'False' }];
 * setPodCondition(conditions, { type: 'DisruptionTarget', status: 'True' });
 * // [{ type: 'Ready', status: 'True' }, { type: 'DisruptionTarget', status: 'True' }]
 * ```
 */
export function setPodCondition<C extends { readonly type: string }>(conditions: C[], condition: C): void {
  const i = conditions.findIndex((c) => c.type === condition.type);
  if (i >= 0) conditions[i] = condition;
  else conditions.push(condition);
}
