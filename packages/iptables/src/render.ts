/**
 * The iptables renderer: service ports in, kube-proxy's filter and nat rules out, as a
 * structured ruleset that serialises to the exact iptables-restore text kube-proxy's
 * iptables mode writes (see `restore-text.ts`).
 *
 * Pure and deterministic: service ports are rendered in `ns/name:port` + protocol order and
 * endpoints in endpoint-string order, where kube-proxy follows Go map order.
 *
 * @module
 */
import { InvalidServicePortError } from '@nodeagent/proxy-state';
import { KUBE_MARK_MASQ, KUBE_NODEPORTS, KUBE_SERVICES, portProtoHash } from './chain-names.js';
import { filterChains, filterHeadRules, filterTailRules, natHeadRules, natTailRules } from './fixed-rules.js';
import { ProbabilityCache } from './probability.js';
import {
  type IptablesRenderOptions,
  type ResolvedRenderOptions,
  resolveRenderOptions,
} from './render-options.js';
import {
  type IptablesServicePort,
  type NormalizedServicePort,
  normalizeServicePort,
} from './service-port.js';
import { type RenderContext, renderServicePortRules, type ServicePortRules } from './service-port-rules.js';

export type { ServicePortRules } from './service-port-rules.js';

/** A rendered ruleset for one IP family. */
export interface IptablesRuleset {
  /** The options it was rendered with (defaults applied). */
  readonly options: ResolvedRenderOptions;
  /** True when per-endpoint comments were dropped (more endpoints than the threshold). */
  readonly largeClusterMode: boolean;
  /** Filter chains every sync declares, in kube-proxy's order. */
  readonly filterChains: readonly string[];
  /** Filter rules written before the per-service rules (KUBE-FIREWALL). */
  readonly filterHeadRules: readonly string[];
  /** Filter rules written after the per-service rules (KUBE-FORWARD). */
  readonly filterTailRules: readonly string[];
  /** Nat chains every sync declares, in kube-proxy's order. */
  readonly natChains: readonly string[];
  /** Nat rules written before the per-service rules (KUBE-POSTROUTING, KUBE-MARK-MASQ). */
  readonly natHeadRules: readonly string[];
  /** The last rule(s) of nat KUBE-SERVICES (the jump to KUBE-NODEPORTS). */
  readonly natTailRules: readonly string[];
  /** Per service port, sorted. */
  readonly servicePorts: readonly ServicePortRules[];
  /** Service ports that were skipped because of bad input. */
  readonly errors: readonly InvalidServicePortError[];
}

/** Which service ports get their own chains written. */
export interface RenderScope {
  /**
   * Service keys (`ns/name`) whose chains are written; undefined writes every service (full).
   */
  readonly changedServices?: ReadonlySet<string>;
}

/**
 * A renderer with caches that make repeated renders cheap: chain-name hashes, probability
 * strings and normalised service ports (keyed by input object identity, so immutable
 * snapshots that reuse unchanged objects skip re-validation).
 */
export class IptablesRenderer {
  readonly options: ResolvedRenderOptions;
  readonly #probabilities = new ProbabilityCache();
  readonly #ctx: RenderContext = {
    hash: (name, proto) => this.#hash(name, proto),
    probability: (n) => this.#probabilities.get(n),
  };
  readonly #hashes = new Map<string, string>();
  readonly #normalized = new WeakMap<IptablesServicePort, NormalizedServicePort | InvalidServicePortError>();
  // Shared-chain rules per normalised port (inputs are immutable), per large-cluster mode.
  readonly #rendered = new WeakMap<
    NormalizedServicePort,
    (ServicePortRules | InvalidServicePortError | undefined)[]
  >();

  // Input order and sorted order of the last render (see #sorted).
  #lastInput: NormalizedServicePort[] | undefined;
  #lastOrder: number[] | undefined;

  /** @throws InvalidOptionsError for unusable options. */
  constructor(options: IptablesRenderOptions = {}) {
    this.options = resolveRenderOptions(options);
  }

  /** Renders `servicePorts`; `scope.changedServices` limits which own chains are written. */
  render(servicePorts: Iterable<IptablesServicePort>, scope: RenderScope = {}): IptablesRuleset {
    const o = this.options;
    const errors: InvalidServicePortError[] = [];
    const valid: NormalizedServicePort[] = [];
    let totalEndpoints = 0;
    for (const sp of servicePorts) {
      const n = this.#normalize(sp);
      if (n instanceof InvalidServicePortError) {
        errors.push(n);
        continue;
      }
      valid.push(n);
      totalEndpoints += endpointCount(sp);
    }
    const sorted = this.#sorted(valid);
    const largeClusterMode = totalEndpoints > o.largeClusterEndpointsThreshold;
    const changed = scope.changedServices;
    const out: ServicePortRules[] = [];
    for (const sp of sorted) {
      const writeChains = changed === undefined || changed.has(sp.serviceKey);
      const r = this.#renderCached(sp, writeChains, largeClusterMode);
      if (r instanceof InvalidServicePortError) errors.push(r);
      else out.push(r);
    }
    return {
      options: o,
      largeClusterMode,
      filterChains: filterChains(o),
      filterHeadRules: filterHeadRules(o),
      filterTailRules: filterTailRules(o),
      natChains: [KUBE_SERVICES, KUBE_NODEPORTS, 'KUBE-POSTROUTING', KUBE_MARK_MASQ],
      natHeadRules: natHeadRules(o),
      natTailRules: natTailRules(o),
      servicePorts: out,
      errors,
    };
  }

  /**
   * `valid` in `ns/name:port` + protocol order. Repeated renders usually get the same ports in
   * the same input order with a few objects replaced by new versions of the same port: then
   * the previous order is reused after an O(n) identity check instead of sorting 10,000+
   * ports again (inputs that already arrive sorted, like snapshots, are only checked).
   */
  #sorted(valid: NormalizedServicePort[]): NormalizedServicePort[] {
    const last = this.#lastInput;
    if (last && last.length === valid.length) {
      let same = true;
      for (let i = 0; i < valid.length; i++) {
        const a = valid[i]!;
        const b = last[i]!;
        if (a !== b && (a.nameString !== b.nameString || a.proto !== b.proto)) {
          same = false;
          break;
        }
      }
      if (same) {
        this.#lastInput = valid;
        return this.#lastOrder!.map((i) => valid[i]!);
      }
    }
    let inOrder = true;
    for (let i = 1; i < valid.length; i++) {
      if (compareServicePorts(valid[i - 1]!, valid[i]!) > 0) {
        inOrder = false;
        break;
      }
    }
    const order = valid.map((_, i) => i);
    if (!inOrder) order.sort((i, j) => compareServicePorts(valid[i]!, valid[j]!));
    this.#lastInput = valid;
    this.#lastOrder = order;
    return inOrder ? valid : order.map((i) => valid[i]!);
  }

  #renderCached(
    sp: NormalizedServicePort,
    writeChains: boolean,
    largeClusterMode: boolean,
  ): ServicePortRules | InvalidServicePortError {
    // Only the shared-chain part is cached: it is what every partial render needs for every
    // service, and it is small. Own chains are rendered when written (full syncs, changes),
    // which keeps tens of megabytes of rule text out of the heap between syncs.
    const slot = largeClusterMode ? 1 : 0;
    let slots = this.#rendered.get(sp);
    if (!writeChains) {
      const hit = slots?.[slot];
      if (hit !== undefined) return hit;
    }
    let r: ServicePortRules | InvalidServicePortError;
    try {
      r = renderServicePortRules(sp, this.options, this.#ctx, writeChains, largeClusterMode);
    } catch (err) {
      if (!(err instanceof InvalidServicePortError)) throw err;
      r = err;
    }
    if (!slots) {
      slots = [];
      this.#rendered.set(sp, slots);
    }
    slots[slot] ??=
      r instanceof InvalidServicePortError || !writeChains
        ? r
        : { ...r, chains: undefined, chainRules: undefined, chainRuleCount: 0 };
    return r;
  }

  #normalize(sp: IptablesServicePort): NormalizedServicePort | InvalidServicePortError {
    const cached = this.#normalized.get(sp);
    if (cached) return cached;
    let result: NormalizedServicePort | InvalidServicePortError;
    try {
      result = normalizeServicePort(sp, this.options.ipFamily, this.options.nodeIP);
    } catch (err) {
      if (!(err instanceof InvalidServicePortError)) throw err;
      result = err;
    }
    this.#normalized.set(sp, result);
    return result;
  }

  #hash(nameString: string, proto: string): string {
    const key = nameString + proto;
    let h = this.#hashes.get(key);
    if (h === undefined) {
      h = portProtoHash(nameString, proto);
      this.#hashes.set(key, h);
    }
    return h;
  }
}

/** Renders a full ruleset with a fresh {@link IptablesRenderer} (no caches kept). */
export function renderIptablesRuleset(
  servicePorts: Iterable<IptablesServicePort>,
  options: IptablesRenderOptions = {},
  scope: RenderScope = {},
): IptablesRuleset {
  return new IptablesRenderer(options).render(servicePorts, scope);
}

function endpointCount(sp: IptablesServicePort): number {
  return sp.totalEndpoints ?? Math.max(sp.clusterEndpoints.length, sp.localEndpoints.length);
}

function compareStrings(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

function compareServicePorts(a: NormalizedServicePort, b: NormalizedServicePort): number {
  return compareStrings(a.nameString, b.nameString) || compareStrings(a.proto, b.proto);
}
