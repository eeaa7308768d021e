/**
 * The evicted pod's message and the Evicted event's annotations (upstream `evictionMessage`):
 * `The node was low on resource: memory. Threshold quantity: 100Mi, available: 50Mi. Container
 * app was using 200Mi, request is 0, has larger consumption of memory. `
 *
 * @module
 */
import type { V1Pod } from '@kubernetes/client-node';
import { quantityValue } from '@nodeagent/core';
import type { PodStats } from '@nodeagent/stats';
import type { SignalObservations } from './observations.js';
import { formatOfQuantityText, formatQuantity } from './quantity-format.js';
import { type ReclaimedResource, SIGNAL_TO_RESOURCE } from './signals.js';
import { type Threshold, thresholdQuantity } from './thresholds.js';

/** The status reason of an evicted pod and of its event. */
export const EVICTED_REASON = 'Evicted';
/** Event annotation: containers using more than they request, comma-separated. */
export const OFFENDING_CONTAINERS_KEY = 'offending_containers';
/** Event annotation: those containers' usage, comma-separated. */
export const OFFENDING_CONTAINERS_USAGE_KEY = 'offending_containers_usage';
/** Event annotation: the starved resource. */
export const STARVED_RESOURCE_KEY = 'starved_resource';

/** The threshold's amount and what was available, as upstream prints them. */
function thresholdMetInfo(
  resource: ReclaimedResource,
  thresholds: readonly Threshold[],
  observations: SignalObservations,
): { quantity: string; available: string } | undefined {
  for (const t of thresholds) {
    if (SIGNAL_TO_RESOURCE[t.signal] !== resource) continue;
    const observed = observations.get(t.signal);
    if (observed === undefined) continue;
    const amount = thresholdQuantity(t.value, observed.capacity);
    const format = t.value.quantity !== undefined ? t.value.quantity.format : 'BinarySI';
    return {
      quantity: formatQuantity(amount, format),
      available: formatQuantity(observed.available, observed.format),
    };
  }
  return undefined;
}

/** Message and event annotations for evicting `pod` to reclaim `resource`. */
export function evictionMessage(
  resource: ReclaimedResource,
  pod: V1Pod,
  stats: PodStats | undefined,
  thresholds: readonly Threshold[],
  observations: SignalObservations,
): { message: string; annotations: Record<string, string> } {
  let message = `The node was low on resource: ${resource}. `;
  const met = thresholdMetInfo(resource, thresholds, observations);
  if (met !== undefined) message += `Threshold quantity: ${met.quantity}, available: ${met.available}. `;
  if (stats === undefined) return { message, annotations: {} };
  const containers: string[] = [];
  const usages: string[] = [];
  for (const cs of stats.containers) {
    for (const c of pod.spec?.containers ?? []) {
      if (c.name !== cs.name) continue;
      const requestText = (c.resources?.requests as Record<string, string> | undefined)?.[resource];
      const request = requestText === undefined ? 0n : quantityValue(requestText);
      let usage: bigint | undefined;
      if (resource === 'ephemeral-storage') {
        if (cs.rootfs?.usedBytes !== undefined && cs.logs?.usedBytes !== undefined) {
          usage = BigInt(Math.trunc(cs.rootfs.usedBytes + cs.logs.usedBytes));
        }
      } else if (resource === 'memory' && cs.memory?.workingSetBytes !== undefined) {
        usage = BigInt(Math.trunc(cs.memory.workingSetBytes));
      }
      if (usage !== undefined && usage > request) {
        const used = formatQuantity(usage, 'BinarySI');
        const req =
          requestText === undefined ? '0' : formatQuantity(request, formatOfQuantityText(requestText));
        message += `Container ${c.name} was using ${used}, request is ${req}, has larger consumption of ${resource}. `;
        containers.push(c.name);
        usages.push(used);
      }
    }
  }
  return {
    message,
    annotations: {
      [OFFENDING_CONTAINERS_KEY]: containers.join(','),
      [OFFENDING_CONTAINERS_USAGE_KEY]: usages.join(','),
      [STARVED_RESOURCE_KEY]: resource,
    },
  };
}
