/**
 * The immutable per-family snapshot handed to renderers, with memoised endpoint
 * categorisation: a result is reused (across snapshots too) while the service port object,
 * its endpoint list and the node's name and zone are unchanged.
 *
 * @module
 */
import { type CategorizeOptions, categorizeEndpoints } from './categorize-endpoints.js';
import type {
  CategorizedEndpoints,
  Endpoint,
  IPFamily,
  NodeInfo,
  ProxySnapshot,
  ServicePortInfo,
} from './types.js';

/** A memo entry: the inputs a categorisation was computed from (endpoints compared by identity). */
export interface CategorizeMemoEntry {
  readonly endpoints: readonly Endpoint[];
  /** The node name and zone the result was computed for (other labels do not matter). */
  readonly nodeKey: string;
  readonly result: CategorizedEndpoints;
}

/** Categorisations keyed by the service port object they were computed for; shared by the snapshots of one family. */
export type CategorizeMemo = WeakMap<ServicePortInfo, CategorizeMemoEntry>;

/** What {@link createProxySnapshot} needs. */
export interface ProxySnapshotInit {
  /** The family. */
  readonly ipFamily: IPFamily;
  /** The checkout counter. */
  readonly generation: number;
  /** The node. */
  readonly node: NodeInfo;
  /** Service ports in iteration order. */
  readonly services: ReadonlyMap<string, ServicePortInfo>;
  /** Endpoints per service port key (every service key present). */
  readonly endpoints: ReadonlyMap<string, readonly Endpoint[]>;
  /** Sum of the endpoint list lengths. */
  readonly totalEndpoints: number;
  /** Changed namespaced names. */
  readonly changedServices: ReadonlySet<string>;
  /** Whether renderers should do a full sync. */
  readonly fullSyncRequired: boolean;
  /** The family's shared memo. */
  readonly memo: CategorizeMemo;
  /** Categorisation options. */
  readonly options: CategorizeOptions;
}

const NO_ENDPOINTS: readonly Endpoint[] = Object.freeze([]);
const NOTHING: CategorizedEndpoints = Object.freeze({
  clusterEndpoints: NO_ENDPOINTS,
  localEndpoints: NO_ENDPOINTS,
  allReachableEndpoints: NO_ENDPOINTS,
  hasAnyEndpoints: false,
  topologyMode: '',
});

class Snapshot implements ProxySnapshot {
  readonly ipFamily: IPFamily;
  readonly generation: number;
  readonly node: NodeInfo;
  readonly services: ReadonlyMap<string, ServicePortInfo>;
  readonly endpoints: ReadonlyMap<string, readonly Endpoint[]>;
  readonly changedServices: ReadonlySet<string>;
  readonly fullSyncRequired: boolean;
  readonly totalEndpoints: number;
  readonly #memo: CategorizeMemo;
  readonly #options: CategorizeOptions;
  readonly #nodeKey: string;

  constructor(init: ProxySnapshotInit) {
    this.ipFamily = init.ipFamily;
    this.generation = init.generation;
    this.node = init.node;
    this.services = init.services;
    this.endpoints = init.endpoints;
    this.changedServices = init.changedServices;
    this.fullSyncRequired = init.fullSyncRequired;
    this.totalEndpoints = init.totalEndpoints;
    this.#memo = init.memo;
    this.#options = init.options;
    this.#nodeKey = `${init.node.name}\u0000${init.node.zone}`;
  }

  categorize(nameString: string): CategorizedEndpoints {
    const info = this.services.get(nameString);
    if (info === undefined) return NOTHING;
    const endpoints = this.endpoints.get(nameString) ?? NO_ENDPOINTS;
    const hit = this.#memo.get(info);
    if (hit !== undefined && hit.endpoints === endpoints && hit.nodeKey === this.#nodeKey) return hit.result;
    const result = categorizeEndpoints(endpoints, info, this.node, this.#options);
    this.#memo.set(info, { endpoints, nodeKey: this.#nodeKey, result });
    return result;
  }
}

/** Builds an immutable snapshot. */
export function createProxySnapshot(init: ProxySnapshotInit): ProxySnapshot {
  return new Snapshot(init);
}
