/**
 * The pure planner: a proxy-state snapshot in, kube-proxy's IPVS layout out (virtual and real
 * servers, addresses for `kube-ipvs0`, ipset entries, residual iptables rules).
 *
 * @module
 */
import { cidrValueContains, parseCIDRValue, parseIP, parseIPValue } from '@nodeagent/core';
import {
  checkEndpoint,
  checkServicePort,
  type Endpoint,
  InvalidServicePortError,
  type IPFamily,
  type ProxySnapshot,
  type ServicePortInfo,
} from '@nodeagent/proxy-state';
import {
  InvalidEndpointError,
  IPSetOverflowError,
  type IpvsPlanError,
  VirtualServerConflictError,
} from './errors.js';
import {
  IPSET_DEFINITIONS,
  ipPortEntry,
  ipPortIpEntry,
  ipPortNetEntry,
  ipsetName,
  KUBE_CLUSTER_IP,
  KUBE_EXTERNAL_IP,
  KUBE_EXTERNAL_IP_LOCAL,
  KUBE_HEALTH_CHECK_NODE_PORT,
  KUBE_IPVS_IPS,
  KUBE_LOAD_BALANCER,
  KUBE_LOAD_BALANCER_FW,
  KUBE_LOAD_BALANCER_LOCAL,
  KUBE_LOAD_BALANCER_SOURCE_CIDR,
  KUBE_LOAD_BALANCER_SOURCE_IP,
  KUBE_LOOP_BACK,
  KUBE_NODE_PORT_LOCAL_SCTP_HASH,
  KUBE_NODE_PORT_LOCAL_TCP,
  KUBE_NODE_PORT_LOCAL_UDP,
  KUBE_NODE_PORT_SCTP_HASH,
  KUBE_NODE_PORT_TCP,
  KUBE_NODE_PORT_UDP,
} from './ipsets.js';
import {
  compareVirtualServers,
  type IPSet,
  type IpvsProtocol,
  type IpvsState,
  type RealServer,
  type VirtualServer,
  type VirtualServerFlag,
  virtualServerKey,
} from './model.js';
import {
  type IpvsPlanOptions,
  type ResolvedIpvsPlanOptions,
  resolveIpvsPlanOptions,
} from './plan-options.js';
import { buildResidualIptables, type NoNodeAccessEntry, type ResidualIptables } from './residual-iptables.js';

/** Which service address a virtual server was made for. */
export type VirtualServerKind = 'ClusterIP' | 'ExternalIP' | 'LoadBalancer' | 'NodePort';

/** A planned virtual server, with the service port it serves. */
export interface PlannedVirtualServer extends VirtualServer {
  /** The service port (`ns/svc:port`). */
  readonly servicePort: string;
  /** The kind of address. */
  readonly kind: VirtualServerKind;
}

/** The IPVS layout for one IP family. */
export interface IpvsPlan extends IpvsState {
  /** The family. */
  readonly ipFamily: IPFamily;
  /** Virtual servers, sorted by address, port, protocol. */
  readonly virtualServers: readonly PlannedVirtualServer[];
  /** Addresses that get NodePort virtual servers. */
  readonly nodePortIPs: readonly string[];
  /** The node's own addresses (never bound on the dummy interface). */
  readonly nodeAddresses: readonly string[];
  /** The residual iptables rules. */
  readonly iptables: ResidualIptables;
  /** One error per skipped object. */
  readonly errors: readonly IpvsPlanError[];
}

/** A service port whose fields passed proxy-state's check, with canonical addresses. */
interface CheckedPort {
  readonly info: ServicePortInfo;
  readonly protocol: IpvsProtocol;
  readonly clusterIP: string;
  readonly externalIPs: readonly string[];
  readonly lbIPs: readonly string[];
  readonly sourceRanges: readonly string[];
}

/** @throws InvalidServicePortError (from `@nodeagent/proxy-state`'s one check). */
function checkedPort(s: ServicePortInfo, family: IPFamily): CheckedPort {
  const c = checkServicePort(s, family);
  return {
    info: s,
    protocol: s.protocol,
    clusterIP: c.clusterIP,
    externalIPs: c.externalIPs,
    lbIPs: c.loadBalancerVIPs,
    sourceRanges: c.loadBalancerSourceRanges,
  };
}

/** Builds the plan while walking the service ports. */
class PlanBuilder {
  readonly errors: IpvsPlanError[] = [];
  readonly #servers = new Map<string, PlannedVirtualServer>();
  readonly #bound = new Set<string>();
  readonly #entries = new Map<string, Set<string>>(
    IPSET_DEFINITIONS.map((d) => [d.baseName, new Set<string>()]),
  );
  readonly #noNodeAccess: NoNodeAccessEntry[] = [];
  readonly #o: ResolvedIpvsPlanOptions;
  readonly #family: IPFamily;

  constructor(o: ResolvedIpvsPlanOptions, family: IPFamily) {
    this.#o = o;
    this.#family = family;
  }

  #entry(set: string, entry: string): void {
    this.#entries.get(set)!.add(entry);
  }

  #realServers(eps: readonly Endpoint[], valid: ReadonlySet<string>): RealServer[] {
    return eps
      .filter((e) => valid.has(e.endpoint))
      .map((e) => ({ address: parseIP(e.ip)!.ip, port: e.port, weight: 1 }));
  }

  #server(
    p: CheckedPort,
    kind: PlannedVirtualServer['kind'],
    address: string,
    port: number,
    realServers: RealServer[],
    bind: boolean,
  ): void {
    const flags: VirtualServerFlag[] = [];
    if (p.info.sessionAffinityClientIP) flags.push('persistent');
    if (this.#o.scheduler === 'mh') flags.push('source-hash');
    const vs: PlannedVirtualServer = {
      address,
      port,
      protocol: p.protocol,
      scheduler: this.#o.scheduler,
      flags,
      timeoutSeconds: p.info.sessionAffinityClientIP ? p.info.stickyMaxAgeSeconds : 0,
      realServers,
      servicePort: p.info.nameString,
      kind,
    };
    const key = virtualServerKey(vs);
    const owner = this.#servers.get(key);
    if (owner) {
      this.errors.push(new VirtualServerConflictError(key, owner.servicePort, p.info.nameString));
      return;
    }
    this.#servers.set(key, vs);
    if (bind) this.#bound.add(address);
  }

  add(p: CheckedPort, snapshot: ProxySnapshot): void {
    const s = p.info;
    const proto = p.protocol.toLowerCase() as 'tcp' | 'udp' | 'sctp';
    const all = snapshot.endpoints.get(s.nameString) ?? [];
    const valid = new Set<string>();
    for (const e of all) {
      const r = checkEndpoint(e.ip, e.port, this.#family);
      if ('problem' in r) {
        this.errors.push(new InvalidEndpointError(s.nameString, String(e.endpoint), r.problem));
      } else {
        const ip = r.ip;
        valid.add(e.endpoint);
        // Hairpin: a pod reaching its own service through the VIP must be masqueraded. Only
        // this node's pods can hairpin here, so only local endpoints go in (as upstream).
        if (e.isLocal) this.#entry(KUBE_LOOP_BACK, ipPortIpEntry(ip, proto, e.port, ip));
      }
    }
    const cat = snapshot.categorize(s.nameString);
    const cluster = this.#realServers(cat.clusterEndpoints, valid);
    const local = this.#realServers(cat.localEndpoints, valid);
    // Local policy without local endpoints falls back to the cluster endpoints: pods on this
    // node can still reach the service (replies to external clients then fail, as upstream).
    const pick = (onlyLocal: boolean) =>
      onlyLocal && local.length === 0 ? cluster : onlyLocal ? local : cluster;
    const nodeAddr = new Set(this.#o.nodeAddresses);

    this.#entry(KUBE_CLUSTER_IP, ipPortEntry(p.clusterIP, proto, s.port));
    this.#server(p, 'ClusterIP', p.clusterIP, s.port, pick(s.internalPolicyLocal), true);

    for (const ip of p.externalIPs) {
      this.#entry(
        s.externalPolicyLocal ? KUBE_EXTERNAL_IP_LOCAL : KUBE_EXTERNAL_IP,
        ipPortEntry(ip, proto, s.port),
      );
      this.#server(p, 'ExternalIP', ip, s.port, pick(s.externalPolicyLocal), !nodeAddr.has(ip));
    }

    for (const ip of p.lbIPs) {
      const entry = ipPortEntry(ip, proto, s.port);
      this.#entry(KUBE_LOAD_BALANCER, entry);
      if (s.externalPolicyLocal) this.#entry(KUBE_LOAD_BALANCER_LOCAL, entry);
      if (p.sourceRanges.length > 0) {
        this.#entry(KUBE_LOAD_BALANCER_FW, entry);
        let allowFromNode = false;
        for (const cidr of p.sourceRanges) {
          this.#entry(KUBE_LOAD_BALANCER_SOURCE_CIDR, ipPortNetEntry(ip, proto, s.port, cidr));
          if (
            this.#o.nodeIP !== undefined &&
            cidrValueContains(parseCIDRValue(cidr)!, parseIPValue(this.#o.nodeIP)!)
          )
            allowFromNode = true;
        }
        if (allowFromNode) this.#entry(KUBE_LOAD_BALANCER_SOURCE_IP, ipPortIpEntry(ip, proto, s.port, ip));
        else this.#noNodeAccess.push({ address: ip, protocol: proto, port: s.port });
      }
      this.#server(p, 'LoadBalancer', ip, s.port, pick(s.externalPolicyLocal), !nodeAddr.has(ip));
    }

    if (s.nodePort !== 0 && this.#o.nodePortIPs.length > 0) {
      const entries =
        proto === 'sctp'
          ? this.#o.nodePortIPs.map((ip) => ipPortEntry(ip, proto, s.nodePort))
          : [String(s.nodePort)];
      const sets = {
        tcp: [KUBE_NODE_PORT_TCP, KUBE_NODE_PORT_LOCAL_TCP],
        udp: [KUBE_NODE_PORT_UDP, KUBE_NODE_PORT_LOCAL_UDP],
        sctp: [KUBE_NODE_PORT_SCTP_HASH, KUBE_NODE_PORT_LOCAL_SCTP_HASH],
      }[proto];
      for (const e of entries) {
        this.#entry(sets[0]!, e);
        if (s.externalPolicyLocal) this.#entry(sets[1]!, e);
      }
      for (const ip of this.#o.nodePortIPs) {
        this.#server(p, 'NodePort', ip, s.nodePort, pick(s.externalPolicyLocal), false);
      }
    }

    if (s.healthCheckNodePort !== 0) this.#entry(KUBE_HEALTH_CHECK_NODE_PORT, String(s.healthCheckNodePort));
  }

  finish(): IpvsPlan {
    const family = this.#family;
    const boundAddresses = [...this.#bound].sort();
    for (const a of boundAddresses) this.#entry(KUBE_IPVS_IPS, a);
    const byBase = new Map<string, IPSet>();
    const ipsets = IPSET_DEFINITIONS.map((d): IPSet => {
      const entries = [...this.#entries.get(d.baseName)!];
      const set: IPSet = {
        name: ipsetName(d.baseName, family),
        type: d.type,
        family: family === 4 ? 'inet' : 'inet6',
        hashSize: this.#o.ipsetHashSize,
        maxElem: this.#o.ipsetMaxElem,
        portRange: '0-65535',
        entries: d.type === 'bitmap:port' ? entries.sort((a, b) => Number(a) - Number(b)) : entries.sort(),
      };
      // The residual rules are built from what the sets should hold, refused or not.
      byBase.set(d.baseName, set);
      if (d.type === 'bitmap:port' || entries.length <= set.maxElem) return set;
      this.errors.push(new IPSetOverflowError(set.name, entries.length, set.maxElem));
      return { ...set, entries: [], entriesRefused: true };
    });
    return {
      ipFamily: family,
      virtualServers: [...this.#servers.values()].sort(compareVirtualServers),
      boundAddresses,
      nodePortIPs: this.#o.nodePortIPs,
      nodeAddresses: this.#o.nodeAddresses,
      ipsets,
      iptables: buildResidualIptables(byBase, family, this.#o, this.#noNodeAccess),
      errors: this.errors,
    };
  }
}

/**
 * Plans kube-proxy's IPVS layout for one snapshot. Invalid service ports and endpoints are
 * skipped and reported in `errors`; everything else is planned. Deterministic: the same
 * snapshot and options always give the same plan.
 *
 * @example
 * ```ts
 * const plan = planIpvs(v4, { localDetector: { mode: 'ClusterCIDR', cidr: '10.0.0.0/8' } });
 * plan.virtualServers[0]; // { address: '172.30.0.41', port: 80, protocol: 'TCP', scheduler: 'rr', realServers: [...] }
 * ```
 * @throws InvalidOptionsError when an option is unusable.
 */
export function planIpvs(snapshot: ProxySnapshot, options: IpvsPlanOptions = {}): IpvsPlan {
  const family = snapshot.ipFamily;
  const resolved = resolveIpvsPlanOptions(options, family, snapshot.node.ips);
  const b = new PlanBuilder(resolved, family);
  for (const s of snapshot.services.values()) {
    let checked: CheckedPort;
    try {
      checked = checkedPort(s, family);
    } catch (e) {
      if (e instanceof InvalidServicePortError) {
        b.errors.push(e);
        continue;
      }
      throw e;
    }
    b.add(checked, snapshot);
  }
  return b.finish();
}
