/**
 * Pod statuses in the form the API server stores them (upstream `normalizeStatus`), so a
 * status the agent computed and the same status read back from the API compare equal and
 * no write storm follows: timestamps truncated to seconds, container statuses sorted,
 * termination messages cut to their share of 12 KiB, and the empty values the API omits
 * (`null`, `""`, `[]`, `{}`) dropped.
 *
 * @module
 */
import type { V1ContainerStatus, V1Pod, V1PodStatus } from '@kubernetes/client-node';
import { truncateTime } from './time.js';

/** Upstream `MaxPodTerminationMessageLogLength`: all termination messages of a pod share 12 KiB. */
export const MAX_POD_TERMINATION_MESSAGE_LENGTH = 1024 * 12;

const TIME_FIELDS: ReadonlySet<string> = new Set([
  'startTime',
  'lastProbeTime',
  'lastTransitionTime',
  'startedAt',
  'finishedAt',
  'lastHeartbeatTime',
]);

/** Plain JSON without the empty values the API server omits; time fields truncated to seconds. */
export function compactJson(value: unknown, key = ''): unknown {
  if (value instanceof Date || TIME_FIELDS.has(key)) value = truncateTime(value);
  if (value === null || value === undefined || value === '') return undefined;
  if (Array.isArray(value)) {
    const items = value.map((v) => compactJson(v)).filter((v) => v !== undefined);
    return items.length === 0 ? undefined : items;
  }
  if (typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value as Record<string, unknown>)) {
      const c = compactJson(v, k);
      if (c !== undefined) out[k] = c;
    }
    return Object.keys(out).length === 0 ? undefined : out;
  }
  return value;
}

function byName(a: V1ContainerStatus, b: V1ContainerStatus): number {
  return a.name < b.name ? -1 : a.name > b.name ? 1 : 0;
}

function cutMessages(statuses: V1ContainerStatus[] | undefined, maxBytes: number): void {
  for (const s of statuses ?? []) {
    for (const state of [s.state, s.lastState]) {
      const t = state?.terminated;
      if (t?.message !== undefined && Buffer.byteLength(t.message) > maxBytes) {
        t.message = Buffer.from(t.message).subarray(0, maxBytes).toString('utf8');
      }
    }
  }
}

/**
 * A normalized copy of `status` (the input is not modified): see the module comment. Init
 * container statuses follow the order of `pod.spec.initContainers`, the others are sorted by name.
 */
export function normalizePodStatus(pod: V1Pod | undefined, status: V1PodStatus): V1PodStatus {
  const out = (compactJson(status) ?? {}) as V1PodStatus;
  const specCount = (pod?.spec?.containers?.length ?? 0) + (pod?.spec?.initContainers?.length ?? 0);
  const maxBytes = Math.floor(MAX_POD_TERMINATION_MESSAGE_LENGTH / Math.max(1, specCount));
  cutMessages(out.containerStatuses, maxBytes);
  cutMessages(out.initContainerStatuses, maxBytes);
  out.containerStatuses?.sort(byName);
  out.ephemeralContainerStatuses?.sort(byName);
  const initOrder = (pod?.spec?.initContainers ?? []).map((c) => c.name);
  if (initOrder.length > 0) {
    const rank = (s: V1ContainerStatus) => {
      const i = initOrder.indexOf(s.name);
      return i < 0 ? initOrder.length : i;
    };
    out.initContainerStatuses?.sort((a, b) => rank(a) - rank(b));
  }
  return out;
}

/** Deterministic JSON (object keys sorted) for equality checks. */
export function stableJson(value: unknown): string {
  return JSON.stringify(value, (_k, v: unknown) => {
    if (v === null || typeof v !== 'object' || Array.isArray(v)) return v;
    const sorted: Record<string, unknown> = {};
    for (const k of Object.keys(v as Record<string, unknown>).sort()) {
      sorted[k] = (v as Record<string, unknown>)[k];
    }
    return sorted;
  });
}
