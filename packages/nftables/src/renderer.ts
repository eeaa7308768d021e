/**
 * The pure renderer: a proxy-state snapshot in, the desired table ({@link NftRuleset}) out.
 * Per-port output is cached by the identity of the snapshot's port info and categorisation
 * (snapshots reuse both when unchanged), so re-rendering after a one-service change only
 * renders that service.
 *
 * @module
 */
import {
  type CategorizedEndpoints,
  type Endpoint,
  InvalidServicePortError,
  type NodeInfo,
  type ProxySnapshot,
  type ServicePortInfo,
} from '@nodeagent/proxy-state';
import type { ChainSpec, NftRuleset, PortRender, SetSpec } from './model.js';
import { NFT, renderBase } from './render-base.js';
import { lbChain, optimizedPostroutingRules, renderOptimizedBase } from './render-base-optimized.js';
import { type NftRenderOptions, type ResolvedNftOptions, resolveNftOptions } from './render-options.js';
import { renderPortKubeProxy } from './render-port-kube-proxy.js';
import { renderPortOptimized } from './render-port-optimized.js';
import { portFacts } from './service-port-input.js';

/** A render result: the ruleset plus the ports skipped for bad input. */
export interface RenderResult {
  /** The desired table. */
  readonly ruleset: NftRuleset;
  /** One error per skipped service port. */
  readonly errors: readonly InvalidServicePortError[];
}

interface CacheEntry {
  readonly cat: CategorizedEndpoints;
  readonly out: PortRender | InvalidServicePortError;
  /** The endpoint list and node the categorisation came from (identity), for the fast path. */
  endpoints?: readonly Endpoint[] | undefined;
  node?: NodeInfo;
}

/** Renders snapshots of one family into kube-proxy's (or the optimized) nftables layout. */
export class NftRenderer {
  /** The resolved options. */
  readonly options: ResolvedNftOptions;
  readonly #cache = new WeakMap<ServicePortInfo, CacheEntry>();
  readonly #base: { chains: ChainSpec[]; sets: SetSpec[]; elements: NftRuleset['baseElements'] };
  readonly #lbChains = new Map<string, ChainSpec>();

  /** @throws InvalidOptionsError for unusable options. */
  constructor(options: NftRenderOptions = {}) {
    this.options = resolveNftOptions(options);
    const base = renderBase(this.options);
    if (this.options.layout === 'optimized') {
      const extra = renderOptimizedBase(this.options);
      const chains = base.chains.map((c) =>
        c.name === NFT.natPostrouting ? { ...c, rules: optimizedPostroutingRules(this.options) } : c,
      );
      this.#base = {
        chains: [...chains, ...extra.chains],
        sets: [...base.sets, ...extra.sets],
        elements: base.elements,
      };
    } else {
      this.#base = base;
    }
  }

  /** Renders one service port (cached by input identity). */
  renderPort(info: ServicePortInfo, cat: CategorizedEndpoints): PortRender | InvalidServicePortError {
    const hit = this.#cache.get(info);
    if (hit && hit.cat === cat) return hit.out;
    let out: PortRender | InvalidServicePortError;
    try {
      const f = portFacts(info, cat, this.options);
      out =
        this.options.layout === 'optimized'
          ? renderPortOptimized(f, this.options)
          : renderPortKubeProxy(f, this.options);
    } catch (e) {
      if (!(e instanceof InvalidServicePortError)) throw e;
      out = e;
    }
    this.#cache.set(info, { cat, out });
    return out;
  }

  /**
   * One port of a snapshot. Fast path: the same port info, endpoint list and node objects as
   * last time give the same categorisation, so the cached render is returned without asking
   * the snapshot to categorise (which costs several map lookups per port at 10,000 ports).
   */
  #portOf(snapshot: ProxySnapshot, key: string, info: ServicePortInfo): PortRender | InvalidServicePortError {
    const eps = snapshot.endpoints.get(key);
    const hit = this.#cache.get(info);
    if (hit && hit.endpoints === eps && hit.node === snapshot.node) return hit.out;
    const out = this.renderPort(info, snapshot.categorize(key));
    const entry = this.#cache.get(info)!;
    entry.endpoints = eps;
    entry.node = snapshot.node;
    return out;
  }

  /**
   * Renders a snapshot. @throws TypeError when the snapshot's family is not the renderer's.
   */
  render(snapshot: ProxySnapshot): RenderResult {
    const fam = snapshot.ipFamily === 6 ? 'ip6' : 'ip';
    if (fam !== this.options.family) {
      throw new TypeError(
        `snapshot is IPv${snapshot.ipFamily} but this renderer writes table ${this.options.family}`,
      );
    }
    const ports = new Map<string, PortRender>();
    const errors: InvalidServicePortError[] = [];
    const needs = new Set<string>();
    const add = (key: string, out: PortRender | InvalidServicePortError) => {
      if (out instanceof InvalidServicePortError) errors.push(out);
      else {
        ports.set(key, out);
        if (out.needs) for (const n of out.needs) needs.add(n);
      }
    };
    // Snapshots iterate sorted by key (proxy-state's contract); checked on the way, sorted if not.
    let prevKey: string | undefined;
    let sorted = true;
    for (const [key, info] of snapshot.services) {
      if (prevKey !== undefined && prevKey > key) {
        sorted = false;
        break;
      }
      prevKey = key;
      add(key, this.#portOf(snapshot, key, info));
    }
    if (!sorted) {
      ports.clear();
      errors.length = 0;
      needs.clear();
      const keys = [...snapshot.services.keys()].sort();
      for (const key of keys) add(key, this.#portOf(snapshot, key, snapshot.services.get(key)!));
    }
    const lb = [...needs].sort().map((name) => {
      let c = this.#lbChains.get(name);
      if (!c) {
        c = lbChain(name, this.options);
        this.#lbChains.set(name, c);
      }
      return c;
    });
    const o = this.options;
    return {
      ruleset: {
        family: o.family,
        table: o.table,
        tableComment: 'rules for kube-proxy',
        baseChains: [...this.#base.chains, ...lb],
        baseSets: this.#base.sets,
        baseElements: this.#base.elements,
        ports,
      },
      errors,
    };
  }
}
