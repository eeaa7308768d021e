/**
 * Admission while the node is under pressure (the eviction manager's `Admit`). The pressure
 * conditions come from an injected provider that the eviction manager implements: with none,
 * admit; critical pods (static, mirror, priority ≥ 2000000000) always; under memory pressure
 * alone, every pod that is not BestEffort, and BestEffort pods tolerating the
 * `node.kubernetes.io/memory-pressure:NoSchedule` taint; otherwise reject with `Evicted`.
 *
 * @module
 */
import type { V1Pod } from '@kubernetes/client-node';
import { podQosClass } from '@nodeagent/kubecontainer';
import { isStaticPod } from '@nodeagent/pod-workers';
import {
  ADMITTED,
  type PodAdmitAttributes,
  type PodAdmitHandler,
  type PodAdmitResult,
} from './admit-handler.js';
import { findMatchingUntoleratedTaint } from './taints.js';

/** A node pressure condition the eviction manager reports. */
export type NodePressureCondition = 'MemoryPressure' | 'DiskPressure' | 'PIDPressure';

/** Where the pressure handler reads the node's current pressure conditions. */
export interface NodePressureSource {
  /** The pressure conditions in effect now, in the eviction manager's order. */
  nodeConditions(): readonly NodePressureCondition[];
}

/** Priority at and above which a pod is critical (`scheduling.SystemCriticalPriority`). */
export const SYSTEM_CRITICAL_PRIORITY = 2_000_000_000;

/** Whether the pod is critical (upstream `kubetypes.IsCriticalPod`): static, mirror, or system-critical priority. */
export function isCriticalPod(pod: V1Pod): boolean {
  if (isStaticPod(pod)) return true;
  if (pod.metadata?.annotations?.['kubernetes.io/config.mirror'] !== undefined) return true;
  return (pod.spec?.priority ?? Number.NEGATIVE_INFINITY) >= SYSTEM_CRITICAL_PRIORITY;
}

/** The eviction manager's admission handler over a {@link NodePressureSource}. */
export class NodePressureAdmitHandler implements PodAdmitHandler {
  readonly #source: NodePressureSource;

  /** @param source the eviction manager (or anything reporting pressure conditions). */
  constructor(source: NodePressureSource) {
    this.#source = source;
  }

  /** Upstream's rules; the message lists the conditions as Go prints a slice. */
  admit({ pod }: PodAdmitAttributes): PodAdmitResult {
    const conditions = this.#source.nodeConditions();
    if (conditions.length === 0 || isCriticalPod(pod)) return ADMITTED;
    if (conditions.length === 1 && conditions[0] === 'MemoryPressure') {
      if (podQosClass(pod) !== 'BestEffort') return ADMITTED;
      const taint = { key: 'node.kubernetes.io/memory-pressure', effect: 'NoSchedule' };
      if (findMatchingUntoleratedTaint([taint], pod.spec?.tolerations ?? []) === undefined) return ADMITTED;
    }
    return {
      admit: false,
      reason: 'Evicted',
      message: `The node had condition: [${conditions.join(' ')}]. `,
    };
  }
}
