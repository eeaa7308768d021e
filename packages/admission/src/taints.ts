/**
 * Taints and tolerations (component-helpers' `ToleratesTaint` and
 * `FindMatchingUntoleratedTaint`).
 *
 * @module
 */
import type { V1Taint, V1Toleration } from '@kubernetes/client-node';

/** Whether one toleration tolerates one taint: effect (empty = any), key (empty = any, `Exists` only), value. */
export function toleratesTaint(toleration: V1Toleration, taint: V1Taint): boolean {
  if (toleration.effect !== undefined && toleration.effect !== '' && toleration.effect !== taint.effect)
    return false;
  if (toleration.key !== undefined && toleration.key !== '' && toleration.key !== taint.key) return false;
  switch (toleration.operator ?? 'Equal') {
    case '':
    case 'Equal':
      return (toleration.value ?? '') === (taint.value ?? '');
    case 'Exists':
      return true;
    default:
      return false;
  }
}

/** The first taint accepted by `filter` that no toleration tolerates, or undefined. */
export function findMatchingUntoleratedTaint(
  taints: readonly V1Taint[],
  tolerations: readonly V1Toleration[],
  filter: (taint: V1Taint) => boolean = () => true,
): V1Taint | undefined {
  return taints.find((t) => filter(t) && !tolerations.some((tol) => toleratesTaint(tol, t)));
}
