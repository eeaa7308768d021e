/**
 * kube-proxy's EndpointSliceCache for one IP family: the slices of every service, split into
 * applied and pending, merged into per-service-port endpoint lists on checkout.
 *
 * @module
 */
import type { ParsedEndpointSlice } from './endpoint-slice-info.js';
import { endpointString } from './service-port-name.js';
import type { Endpoint, IPFamily, Protocol } from './types.js';

/** Endpoints of one service, keyed by {@link endpointsMapKey} (port name + protocol), each list sorted by endpoint string. */
export type EndpointsMap = ReadonlyMap<string, readonly Endpoint[]>;

/** The key of a service port inside an {@link EndpointsMap}. */
export function endpointsMapKey(portName: string, protocol: Protocol): string {
  return `${portName}\u0000${protocol}`;
}

/** One service's endpoints before and after the changes checked out. */
export interface EndpointsChange {
  /** The merged endpoints before. */
  readonly previous: EndpointsMap;
  /** The merged endpoints after. */
  readonly current: EndpointsMap;
  /** `last-change-trigger-time` annotations of the slices that changed (ISO strings, deduplicated). */
  readonly lastChangeTriggerTimes: readonly string[];
}

/** A pending value: the parsed slice, or null for "remove". */
type Pending = ParsedEndpointSlice | null;

interface SliceTracker {
  readonly applied: Map<string, ParsedEndpointSlice>;
  readonly pending: Map<string, Pending>;
  merged: EndpointsMap;
}

const EMPTY_MAP: EndpointsMap = new Map();

/**
 * The EndpointSlice cache of one family. `updatePending` records a slice (or its removal)
 * unless it would program nothing new; `checkoutChanges` applies the pending slices and
 * returns, per service whose merged endpoints differ, the before and after maps.
 */
export class EndpointSliceCache {
  readonly #trackers = new Map<string, SliceTracker>();
  /** Services with pending slices, kept up to date so handlers stay O(1). */
  readonly #pendingKeys = new Set<string>();
  readonly #nodeName: string;

  /**
   * @param ipFamily - The family this cache serves; slices of another family are refused.
   * @param nodeName - This proxy's node name, for `Endpoint.isLocal` (empty: nothing is local).
   */
  constructor(
    readonly ipFamily: IPFamily,
    nodeName: string,
  ) {
    this.#nodeName = nodeName;
  }

  /**
   * Records `slice` (or, with `remove`, its deletion) as pending. Returns true when this changes
   * the pending state; an update equal to the pending (or, if none, the applied) slice is a no-op,
   * and so is removing a slice the cache never applied.
   */
  updatePending(slice: ParsedEndpointSlice, remove: boolean): boolean {
    if (!remove && slice.family !== this.ipFamily) {
      throw new Error(`EndpointSlice ${slice.namespace}/${slice.sliceName} is not IPv${this.ipFamily}`);
    }
    let tracker = this.#trackers.get(slice.serviceKey);
    if (tracker === undefined) {
      if (remove) return false;
      tracker = { applied: new Map(), pending: new Map(), merged: EMPTY_MAP };
      this.#trackers.set(slice.serviceKey, tracker);
    }
    const next: Pending = remove ? null : slice;
    const applied = tracker.applied.get(slice.sliceName);
    if (tracker.pending.has(slice.sliceName)) {
      const pending = tracker.pending.get(slice.sliceName) ?? null;
      if (samePending(pending, next)) return false;
      // Back to what is applied: the pending change cancels.
      if (samePending(applied ?? null, next)) tracker.pending.delete(slice.sliceName);
      else tracker.pending.set(slice.sliceName, next);
      if (tracker.pending.size === 0) this.#pendingKeys.delete(slice.serviceKey);
      this.#dropIfEmpty(slice.serviceKey, tracker);
      return true;
    }
    if (samePending(applied ?? null, next)) return false;
    tracker.pending.set(slice.sliceName, next);
    this.#pendingKeys.add(slice.serviceKey);
    return true;
  }

  /** Number of services with pending slice changes (kube-proxy's `endpoint_changes_pending`). */
  get pendingServices(): number {
    return this.#pendingKeys.size;
  }

  /** Namespaced names of the services with pending slice changes. */
  pendingServiceKeys(): IterableIterator<string> {
    return this.#pendingKeys.values();
  }

  /** The applied, merged endpoints of a service. */
  endpointsMap(serviceKey: string): EndpointsMap {
    return this.#trackers.get(serviceKey)?.merged ?? EMPTY_MAP;
  }

  /** Applies every pending slice; returns the services whose merged endpoints changed. */
  checkoutChanges(): Map<string, EndpointsChange> {
    const changes = new Map<string, EndpointsChange>();
    for (const serviceKey of [...this.#pendingKeys].sort()) {
      const tracker = this.#trackers.get(serviceKey)!;
      const triggers = new Set<string>();
      for (const [name, pending] of tracker.pending) {
        if (pending === null) tracker.applied.delete(name);
        else {
          tracker.applied.set(name, pending);
          if (pending.lastChangeTriggerTime !== null) triggers.add(pending.lastChangeTriggerTime);
        }
      }
      tracker.pending.clear();
      const previous = tracker.merged;
      const current = this.#merge(tracker.applied);
      tracker.merged = current;
      if (tracker.applied.size === 0) this.#trackers.delete(serviceKey);
      if (!endpointsMapsEqual(previous, current)) {
        changes.set(serviceKey, { previous, current, lastChangeTriggerTimes: [...triggers].sort() });
      }
    }
    this.#pendingKeys.clear();
    return changes;
  }

  #dropIfEmpty(serviceKey: string, tracker: SliceTracker): void {
    if (tracker.pending.size === 0 && tracker.applied.size === 0) this.#trackers.delete(serviceKey);
  }

  #merge(slices: ReadonlyMap<string, ParsedEndpointSlice>): EndpointsMap {
    const byPort = new Map<string, Map<string, Endpoint>>();
    // Slice names sorted so that the dedupe winner does not depend on arrival order.
    const names = [...slices.keys()].sort();
    for (const name of names) {
      const slice = slices.get(name)!;
      for (const port of slice.ports) {
        const key = endpointsMapKey(port.name, port.protocol);
        let set = byPort.get(key);
        if (set === undefined) {
          set = new Map();
          byPort.set(key, set);
        }
        for (const ep of slice.endpoints) {
          const str = endpointString(ep.ip, port.port);
          // The same IP:port in several slices: a non-terminating one wins over a terminating one.
          if (set.has(str) && ep.terminating) continue;
          set.set(str, {
            ip: ep.ip,
            port: port.port,
            endpoint: str,
            ready: ep.ready,
            serving: ep.serving,
            terminating: ep.terminating,
            isLocal: this.#nodeName !== '' && ep.nodeName === this.#nodeName,
            nodeName: ep.nodeName,
            zone: ep.zone,
            zoneHints: ep.zoneHints,
            nodeHints: ep.nodeHints,
          });
        }
      }
    }
    const out = new Map<string, readonly Endpoint[]>();
    for (const key of [...byPort.keys()].sort()) {
      const set = byPort.get(key)!;
      if (set.size === 0) continue;
      const list = [...set.values()].sort((a, b) =>
        a.endpoint < b.endpoint ? -1 : a.endpoint > b.endpoint ? 1 : 0,
      );
      out.set(key, list);
    }
    return out;
  }
}

function samePending(a: Pending, b: Pending): boolean {
  if (a === null || b === null) return a === b;
  return a.serviceKey === b.serviceKey && a.fingerprint === b.fingerprint;
}

/** Deep equality of two endpoints maps. */
export function endpointsMapsEqual(a: EndpointsMap, b: EndpointsMap): boolean {
  if (a === b) return true;
  if (a.size !== b.size) return false;
  for (const [key, list] of a) {
    const other = b.get(key);
    if (other === undefined || other.length !== list.length) return false;
    for (let i = 0; i < list.length; i++) {
      if (JSON.stringify(list[i]) !== JSON.stringify(other[i])) return false;
    }
  }
  return true;
}
