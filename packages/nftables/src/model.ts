/**
 * The structured form of an nftables ruleset as the renderers produce it and the syncer,
 * fake executor and tracer consume it: chains with rule texts, sets/maps with their
 * declarations, and set/map elements.
 *
 * @module
 */

/** The nft address family of a table. */
export type NftFamily = 'ip' | 'ip6';

/** A base chain's hook registration. */
export interface ChainHook {
  /** `filter` or `nat`. */
  readonly type: 'filter' | 'nat';
  /** Netfilter hook. */
  readonly hook: 'prerouting' | 'input' | 'forward' | 'output' | 'postrouting';
  /** Numeric priority (dstnat = -100, srcnat = 100). */
  readonly priority: number;
}

/** A chain with its rules (rule texts as nft writes them after `add rule <family> <table> <chain>`). */
export interface ChainSpec {
  /** Chain name. */
  readonly name: string;
  /** Hook registration for base chains. */
  readonly hook?: ChainHook;
  /** Chain comment. */
  readonly comment?: string;
  /** Rules in order. */
  readonly rules: readonly string[];
}

/** A named set or map declaration. */
export interface SetSpec {
  /** Set name. */
  readonly name: string;
  /** `set` or `map`. */
  readonly kind: 'set' | 'map';
  /** The declaration body's type clause, e.g. `type ipv4_addr . inet_proto . inet_service : verdict` or `typeof ...`. */
  readonly type: string;
  /** `flags ...` value, e.g. `dynamic,timeout` or `interval`. */
  readonly flags?: string;
  /** Default element timeout in seconds. */
  readonly timeoutSeconds?: number;
  /** Set comment. */
  readonly comment?: string;
}

/** One element of a set or map. */
export interface ElementSpec {
  /** The set/map it belongs to. */
  readonly set: string;
  /** The key as written (`172.30.0.41 . tcp . 80`). */
  readonly key: string;
  /** The value of a map element (`goto service-...`, `10.0.0.1 . 80`), absent for sets. */
  readonly value?: string;
  /** Element comment. */
  readonly comment?: string;
}

/** Everything one service port contributes to the ruleset. */
export interface PortRender {
  /** The service port's `nameString` (`ns/svc:port`). */
  readonly key: string;
  /** The service's `ns/svc` (unit of change tracking). */
  readonly serviceKey: string;
  /** Per-service chains this port owns. */
  readonly chains: readonly ChainSpec[];
  /** Per-service sets this port owns (affinity sets). */
  readonly sets: readonly SetSpec[];
  /** Elements this port adds to shared sets and maps. */
  readonly elements: readonly ElementSpec[];
  /** Shared chains of the optimized layout this port's elements point at (`lb-vip-cluster-3`). */
  readonly needs?: readonly string[];
}

/** A complete desired ruleset for one table. */
export interface NftRuleset {
  /** Table family. */
  readonly family: NftFamily;
  /** Table name. */
  readonly table: string;
  /** Table comment. */
  readonly tableComment: string;
  /** Shared chains (base chains and top-level helpers), in write order. */
  readonly baseChains: readonly ChainSpec[];
  /** Shared sets and maps. */
  readonly baseSets: readonly SetSpec[];
  /** Elements owned by the table rather than a service (node-port IPs). */
  readonly baseElements: readonly ElementSpec[];
  /** Service ports in deterministic order. */
  readonly ports: ReadonlyMap<string, PortRender>;
}
