/**
 * The whole proxy-side state: Service and EndpointSlice handlers feed per-family change
 * trackers; `checkout()` applies what is pending and returns one immutable snapshot per family
 * with the services changed since the previous checkout.
 *
 * @module
 */
import type { V1EndpointSlice, V1Node, V1Service } from '@kubernetes/client-node';
import { type Logger, noopLogger, parseIP } from '@nodeagent/core';
import { ChangeTracker } from './change-tracker.js';
import { EndpointSliceCache, endpointsMapKey } from './endpoint-slice-cache.js';
import { type ParsedEndpointSlice, parseEndpointSlice } from './endpoint-slice-info.js';
import { InvalidEndpointSliceError, InvalidServiceError, type ProxyStateError } from './errors.js';
import { LayeredMapBuilder } from './layered-map.js';
import { type CategorizeMemo, createProxySnapshot } from './proxy-snapshot.js';
import {
  objectIdentity,
  type ParsedService,
  parseService,
  type ServicePortMap,
  servicePortMapsEqual,
} from './service-port-map.js';
import { namespacedName } from './service-port-name.js';
import type { Endpoint, IPFamily, NodeInfo, ProxyCheckout, ProxySnapshot, ServicePortInfo } from './types.js';

/** The node label kube-proxy reads the zone from. */
export const LABEL_TOPOLOGY_ZONE = 'topology.kubernetes.io/zone';

/** Options for {@link ProxyState}. */
export interface ProxyStateOptions {
  /** This node's name: endpoints whose `nodeName` equals it are local; node hints are matched against it. */
  readonly nodeName: string;
  /**
   * This node's IPs (any family, primary first). When empty, they are taken from the Node
   * object's `InternalIP` then `ExternalIP` addresses on {@link ProxyState.onNodeUpdate}.
   * @default []
   */
  readonly nodeIPs?: readonly string[];
  /**
   * Initial node labels (the zone comes from `topology.kubernetes.io/zone`), until a Node update.
   * @default {}
   */
  readonly nodeLabels?: Readonly<Record<string, string>>;
  /**
   * Honour node hints (`trafficDistribution: PreferSameNode`), kube-proxy's
   * `PreferSameTrafficDistribution` feature gate (on by default upstream since 1.34).
   * @default true
   */
  readonly preferSameTrafficDistribution?: boolean;
  /** Called for every Service or EndpointSlice that is skipped as invalid. */
  readonly onError?: (error: ProxyStateError) => void;
  /**
   * Logger (invalid objects are logged at warn).
   * @default noopLogger
   */
  readonly logger?: Logger;
}

/** What each handler returns. */
export interface UpdateResult {
  /** Whether any change is pending for the next checkout (kube-proxy's "needs sync"). */
  readonly pending: boolean;
  /** The error when the object was invalid and skipped (its previous version is withdrawn), else null. */
  readonly error: ProxyStateError | null;
}

/** Counters for kube-proxy's `*_changes_pending` gauges and `*_changes_total` counters. */
export interface ChangeCounts {
  /** Namespaced names with a pending Service change (any family). */
  readonly servicesPending: number;
  /** Namespaced names with pending EndpointSlice changes (any family). */
  readonly endpointsPending: number;
  /** Service handler calls since construction (as upstream counts every Service event). */
  readonly serviceChangesTotal: number;
  /** EndpointSlice handler calls that changed the pending state, since construction (as upstream counts them). */
  readonly endpointChangesTotal: number;
}

interface FamilyState {
  readonly family: IPFamily;
  readonly tracker: ChangeTracker<ServicePortMap>;
  readonly cache: EndpointSliceCache;
  readonly applied: Map<string, ServicePortMap>;
  readonly services: LayeredMapBuilder<ServicePortInfo>;
  readonly endpoints: LayeredMapBuilder<readonly Endpoint[]>;
  totalEndpoints: number;
  node: NodeInfo;
  fullSyncRequired: boolean;
  readonly memo: CategorizeMemo;
  /** The snapshot of this family's latest checkout. */
  last: ProxySnapshot | undefined;
}

const EMPTY_PORTS: ServicePortMap = new Map();
const BOTH_FAMILIES: readonly IPFamily[] = [4, 6];
const NO_ENDPOINTS: readonly Endpoint[] = Object.freeze([]);

/**
 * kube-proxy's service/endpoint bookkeeping for both families. Handlers take plain
 * Kubernetes JSON objects; invalid ones are skipped with a typed error (and a previously
 * valid version is withdrawn) while everything else is still processed.
 *
 * @example
 * ```ts
 * const state = new ProxyState({ nodeName: 'node-a', nodeIPs: ['192.168.0.2'] });
 * state.onServiceAdd(service);
 * state.onEndpointSliceAdd(slice);
 * const { v4 } = state.checkout();
 * for (const [name, svc] of v4.services) console.log(name, v4.categorize(name).clusterEndpoints);
 * ```
 */
export class ProxyState {
  readonly #nodeName: string;
  readonly #fixedNodeIPs: boolean;
  readonly #log: Logger;
  readonly #onError: ((error: ProxyStateError) => void) | undefined;
  readonly #preferSameNode: boolean;
  readonly #families: Record<IPFamily, FamilyState>;
  /** Latest valid parse of every Service, by namespaced name. */
  readonly #services = new Map<string, ParsedService>();
  /** Latest valid, non-FQDN parse of every EndpointSlice, by `ns/sliceName`. */
  readonly #slices = new Map<string, ParsedEndpointSlice>();
  #nodeIPs: readonly string[];
  #nodeLabels: Readonly<Record<string, string>>;
  #generation = 0;
  #serviceChangesTotal = 0;
  #endpointChangesTotal = 0;

  /** @param options - See {@link ProxyStateOptions}. */
  constructor(options: ProxyStateOptions) {
    this.#nodeName = options.nodeName;
    this.#log = (options.logger ?? noopLogger).child({ component: 'proxy-state' });
    this.#onError = options.onError;
    this.#preferSameNode = options.preferSameTrafficDistribution ?? true;
    this.#nodeIPs = normaliseIPs(options.nodeIPs ?? []);
    this.#fixedNodeIPs = this.#nodeIPs.length > 0;
    this.#nodeLabels = { ...(options.nodeLabels ?? {}) };
    const family = (f: IPFamily): FamilyState => ({
      family: f,
      tracker: new ChangeTracker(servicePortMapsEqual),
      cache: new EndpointSliceCache(f, options.nodeName),
      applied: new Map(),
      services: new LayeredMapBuilder(),
      endpoints: new LayeredMapBuilder(),
      totalEndpoints: 0,
      node: this.#nodeInfo(f),
      fullSyncRequired: true,
      memo: new WeakMap(),
      last: undefined,
    });
    this.#families = { 4: family(4), 6: family(6) };
  }

  /** A Service was added. */
  onServiceAdd(service: V1Service): UpdateResult {
    return this.#updateService(service, false);
  }

  /** A Service changed. The previous version is taken from this state (so `oldService` may be stale). */
  onServiceUpdate(_oldService: V1Service | undefined, service: V1Service): UpdateResult {
    return this.#updateService(service, false);
  }

  /** A Service was deleted. */
  onServiceDelete(service: V1Service): UpdateResult {
    return this.#updateService(service, true);
  }

  /** An EndpointSlice was added. */
  onEndpointSliceAdd(slice: V1EndpointSlice): UpdateResult {
    return this.#updateSlice(slice, false);
  }

  /** An EndpointSlice changed. The previous version is taken from this state. */
  onEndpointSliceUpdate(_oldSlice: V1EndpointSlice | undefined, slice: V1EndpointSlice): UpdateResult {
    return this.#updateSlice(slice, false);
  }

  /** An EndpointSlice was deleted. */
  onEndpointSliceDelete(slice: V1EndpointSlice): UpdateResult {
    return this.#updateSlice(slice, true);
  }

  /**
   * This node was added or changed: its labels (zone) and, when no `nodeIPs` option was given,
   * its addresses. A zone or IP change makes the next snapshots require a full sync. Nodes with
   * another name are ignored.
   */
  onNodeUpdate(node: V1Node): UpdateResult {
    if (node.metadata?.name !== this.#nodeName) return { pending: this.#anyPending(), error: null };
    this.#nodeLabels = { ...(node.metadata.labels ?? {}) };
    if (!this.#fixedNodeIPs) {
      const addresses = node.status?.addresses ?? [];
      const pick = (type: string) => addresses.filter((a) => a.type === type).map((a) => a.address);
      this.#nodeIPs = normaliseIPs([...pick('InternalIP'), ...pick('ExternalIP')]);
    }
    for (const fam of [this.#families[4], this.#families[6]]) {
      const next = this.#nodeInfo(fam.family);
      if (next.zone !== fam.node.zone || next.ips.join(',') !== fam.node.ips.join(','))
        fam.fullSyncRequired = true;
      fam.node = next;
    }
    return { pending: this.#anyPending(), error: null };
  }

  /** Pending-change gauges and change counters, for metrics. */
  get changeCounts(): ChangeCounts {
    const services = new Set<string>();
    const endpoints = new Set<string>();
    for (const fam of [this.#families[4], this.#families[6]]) {
      for (const key of fam.tracker.keys()) services.add(key);
      for (const key of fam.cache.pendingServiceKeys()) endpoints.add(key);
    }
    return {
      servicesPending: services.size,
      endpointsPending: endpoints.size,
      serviceChangesTotal: this.#serviceChangesTotal,
      endpointChangesTotal: this.#endpointChangesTotal,
    };
  }

  /**
   * Applies every pending change of `families` and returns one snapshot per family. Each
   * checked-out snapshot's `changedServices` lists the namespaced names whose service ports or
   * endpoints of that family differ from the family's previous checkout. A family left out
   * keeps its pending changes (for its own runner: a dual-stack proxier syncs each family on
   * its own, as kube-proxy's per-family proxiers do) and is returned as of its latest
   * checkout (empty before the first).
   * @param families - the families to check out. @default both
   */
  checkout(families: readonly IPFamily[] = BOTH_FAMILIES): ProxyCheckout {
    this.#generation++;
    const triggers = new Map<string, string[]>();
    const snap = (fam: FamilyState): ProxySnapshot =>
      families.includes(fam.family) ? this.#checkoutFamily(fam, triggers) : this.#lastSnapshot(fam);
    const v4 = snap(this.#families[4]);
    const v6 = snap(this.#families[6]);
    return { v4, v6, lastChangeTriggerTimes: triggers };
  }

  /**
   * Whether `family` has a pending Service or EndpointSlice change (what a dual-stack proxier's
   * family runner asks before queueing a sync, as each of kube-proxy's per-family proxiers does).
   */
  hasPending(family: IPFamily): boolean {
    const fam = this.#families[family];
    return fam.tracker.pendingCount > 0 || fam.cache.pendingServices > 0 || fam.fullSyncRequired;
  }

  /** A family left out of a checkout: its latest snapshot, or an empty one before its first checkout. */
  #lastSnapshot(fam: FamilyState): ProxySnapshot {
    fam.last ??= createProxySnapshot({
      ipFamily: fam.family,
      generation: 0,
      node: fam.node,
      services: new Map(),
      endpoints: new Map(),
      totalEndpoints: 0,
      changedServices: new Set(),
      fullSyncRequired: false,
      memo: fam.memo,
      options: { preferSameTrafficDistribution: this.#preferSameNode },
    });
    return fam.last;
  }

  #checkoutFamily(fam: FamilyState, triggers: Map<string, string[]>): ProxySnapshot {
    const serviceChanges = fam.tracker.checkout();
    const endpointChanges = fam.cache.checkoutChanges();
    const changed = new Set<string>([...serviceChanges.keys(), ...endpointChanges.keys()]);
    for (const [key, change] of endpointChanges) {
      if (change.lastChangeTriggerTimes.length === 0) continue;
      const list = triggers.get(key) ?? [];
      for (const t of change.lastChangeTriggerTimes) if (!list.includes(t)) list.push(t);
      triggers.set(key, list.sort());
    }
    // Only the ports of changed services are touched: the snapshot maps are layered views.
    for (const key of changed) {
      const before = fam.applied.get(key) ?? EMPTY_PORTS;
      const change = serviceChanges.get(key);
      const after = change === undefined ? before : change.current;
      if (after.size === 0) fam.applied.delete(key);
      else fam.applied.set(key, after);
      for (const name of before.keys()) {
        if (after.has(name)) continue;
        fam.services.delete(name);
        fam.totalEndpoints -= fam.endpoints.get(name)?.length ?? 0;
        fam.endpoints.delete(name);
      }
      const merged = fam.cache.endpointsMap(key);
      for (const [name, info] of after) {
        const list = merged.get(endpointsMapKey(info.name.port, info.protocol)) ?? NO_ENDPOINTS;
        fam.services.set(name, info);
        fam.totalEndpoints += list.length - (fam.endpoints.get(name)?.length ?? 0);
        fam.endpoints.set(name, list);
      }
    }
    const snapshot = createProxySnapshot({
      ipFamily: fam.family,
      generation: this.#generation,
      node: fam.node,
      services: fam.services.view(),
      endpoints: fam.endpoints.view(),
      totalEndpoints: fam.totalEndpoints,
      changedServices: changed,
      fullSyncRequired: fam.fullSyncRequired,
      memo: fam.memo,
      options: { preferSameTrafficDistribution: this.#preferSameNode },
    });
    fam.fullSyncRequired = false;
    fam.last = snapshot;
    return snapshot;
  }

  #updateService(service: V1Service, remove: boolean): UpdateResult {
    const { namespace, name } = objectIdentity(service);
    const key = namespacedName(namespace, name);
    const previous = this.#services.get(key);
    let current: ParsedService | undefined;
    let error: ProxyStateError | null = null;
    if (!remove) {
      try {
        current = parseService(service);
      } catch (err) {
        if (!(err instanceof InvalidServiceError)) throw err;
        error = this.#report(err);
      }
    }
    if (current === undefined) this.#services.delete(key);
    else this.#services.set(key, current);
    for (const fam of [this.#families[4], this.#families[6]]) {
      const prev = previous === undefined ? EMPTY_PORTS : fam.family === 4 ? previous.v4 : previous.v6;
      const cur = current === undefined ? EMPTY_PORTS : fam.family === 4 ? current.v4 : current.v6;
      fam.tracker.update(key, prev, cur);
    }
    this.#serviceChangesTotal++;
    return { pending: this.#anyPending(), error };
  }

  #updateSlice(slice: V1EndpointSlice, remove: boolean): UpdateResult {
    const { namespace, name } = objectIdentity(slice);
    const id = namespacedName(namespace, name);
    const previous = this.#slices.get(id);
    let current: ParsedEndpointSlice | undefined;
    let error: ProxyStateError | null = null;
    if (!remove) {
      try {
        const parsed = parseEndpointSlice(slice);
        if (parsed.family !== null) current = parsed; // FQDN slices are not kube-proxy's business
      } catch (err) {
        if (!(err instanceof InvalidEndpointSliceError)) throw err;
        error = this.#report(err);
      }
    }
    let changed = false;
    // A slice that moved to another service or family leaves its old place first.
    if (
      previous !== undefined &&
      (current === undefined ||
        current.serviceKey !== previous.serviceKey ||
        current.family !== previous.family)
    ) {
      changed = this.#families[previous.family as IPFamily].cache.updatePending(previous, true) || changed;
    }
    if (current !== undefined) {
      changed = this.#families[current.family as IPFamily].cache.updatePending(current, false) || changed;
      this.#slices.set(id, current);
    } else {
      this.#slices.delete(id);
    }
    if (changed) this.#endpointChangesTotal++;
    return { pending: this.#anyPending(), error };
  }

  #report(err: ProxyStateError): ProxyStateError {
    this.#log.warn({ kind: err.kind, namespace: err.namespace, problems: err.problems }, err.message);
    this.#onError?.(err);
    return err;
  }

  #anyPending(): boolean {
    for (const fam of [this.#families[4], this.#families[6]]) {
      if (fam.tracker.pendingCount > 0 || fam.cache.pendingServices > 0) return true;
    }
    return false;
  }

  #nodeInfo(family: IPFamily): NodeInfo {
    return {
      name: this.#nodeName,
      ips: this.#nodeIPs.filter((ip) => (ip.includes(':') ? 6 : 4) === family),
      zone: this.#nodeLabels[LABEL_TOPOLOGY_ZONE] ?? '',
      labels: this.#nodeLabels,
    };
  }
}

function normaliseIPs(ips: readonly string[]): string[] {
  const out: string[] = [];
  for (const text of ips) {
    const parsed = parseIP(text.trim());
    if (parsed !== null && !out.includes(parsed.ip)) out.push(parsed.ip);
  }
  return out;
}
