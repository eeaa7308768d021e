/**
 * The one check of what a renderer writes into a rule for a service port: protocol, port
 * numbers, affinity timeout, and every address and CIDR of the ruleset's family, in canonical
 * text. Every backend (iptables, nftables, IPVS) calls it; a port that fails is skipped with
 * one {@link InvalidServicePortError} listing every problem, and the others still render.
 *
 * Text is taken as it is (no trimming: what passes is what the renderer writes). Snapshots
 * built by {@link ProxyState} pass by construction (`parseService` refuses what this refuses); the check is what keeps a hand-built snapshot or renderer input from writing a
 * broken rule. Results for a {@link ServicePortInfo} are memoised per object, so a port is
 * checked once however many renders and backends see it.
 *
 * @module
 */
import { formatIPValue, parseCIDROrHostValue, parseIPValue } from '@nodeagent/core';
import { InvalidServicePortError, isValidPort } from './errors.js';
import { type IPFamily, ipFamilyName, type ServicePortInfo } from './types.js';

/** The fields of a service port that end up in rules, whatever the backend's input shape. */
export interface ServicePortFields {
  /** `TCP`, `UDP` or `SCTP`. */
  readonly protocol: string;
  /** Service port, 1–65535. */
  readonly port: number;
  /** Node port, 0–65535 (0 or undefined: none). */
  readonly nodePort?: number | undefined;
  /** Health-check node port, 0–65535 (0 or undefined: none). */
  readonly healthCheckNodePort?: number | undefined;
  /** ClientIP affinity timeout in seconds, 1–86400 (the API's limit); undefined when affinity is off. */
  readonly affinitySeconds?: number | undefined;
  /** Cluster IP. */
  readonly clusterIP: string;
  /** External IPs. */
  readonly externalIPs?: readonly string[] | undefined;
  /** Load-balancer VIPs. */
  readonly loadBalancerVIPs?: readonly string[] | undefined;
  /** `loadBalancerSourceRanges`: CIDRs, or bare addresses as host networks (as iptables, nft and ipset read them). */
  readonly loadBalancerSourceRanges?: readonly string[] | undefined;
}

/** The addresses of a checked service port in canonical text (`@nodeagent/core`'s `parseIP` form). */
export interface CheckedServicePort {
  /** Cluster IP. */
  readonly clusterIP: string;
  /** External IPs, in input order. */
  readonly externalIPs: readonly string[];
  /** Load-balancer VIPs, in input order. */
  readonly loadBalancerVIPs: readonly string[];
  /** Source ranges as network CIDRs (`10.0.0.5/8` → `10.0.0.0/8`, `1.2.3.4` → `1.2.3.4/32`), in input order. */
  readonly loadBalancerSourceRanges: readonly string[];
}

/** Options of {@link checkServicePortFields} and {@link checkEndpoint}. */
export interface ServicePortCheckOptions {
  /**
   * Keep IPv4-mapped IPv6 addresses (`::ffff:1.2.3.4`) as IPv6, as kube-proxy's iptables
   * proxier writes them into an IPv6 ruleset; otherwise they count as IPv4.
   * @default false
   */
  readonly keepV4Mapped?: boolean;
  /** Problems the backend found itself (a name its syntax cannot hold), reported in the same error. */
  readonly extraProblems?: readonly string[];
}

const PROTOCOLS = new Set(['TCP', 'UDP', 'SCTP']);
const MAX_AFFINITY_SECONDS = 86_400;

/** Canonical text of `text` as an address of `family`, or a problem naming `what`. */
function address(
  text: unknown,
  what: string,
  family: IPFamily,
  keepV4Mapped: boolean,
): { ip: string } | { problem: string } {
  const v = typeof text === 'string' ? parseIPValue(text, { keepV4Mapped }) : null;
  if (v === null) return { problem: `${what} ${JSON.stringify(text)} is not an IP address` };
  if (v.family !== family) return { problem: `${what} ${String(text)} is not ${ipFamilyName(family)}` };
  return { ip: formatIPValue(v) };
}

/**
 * Checks `fields` for a ruleset of `family` and returns the canonical addresses.
 * @param servicePortName - `ns/name:port`, named by the error.
 * @throws InvalidServicePortError listing every problem (and `options.extraProblems`).
 */
export function checkServicePortFields(
  servicePortName: string,
  fields: ServicePortFields,
  family: IPFamily,
  options: ServicePortCheckOptions = {},
): CheckedServicePort {
  const problems = [...(options.extraProblems ?? [])];
  const keep = options.keepV4Mapped === true;
  if (!PROTOCOLS.has(fields.protocol))
    problems.push(`unknown protocol ${JSON.stringify(fields.protocol)} (want TCP, UDP or SCTP)`);
  if (!isValidPort(fields.port)) problems.push(`port ${String(fields.port)} is out of range 1-65535`);
  const nodePort = fields.nodePort ?? 0;
  if (!isValidPort(nodePort, true)) problems.push(`nodePort ${String(nodePort)} is out of range 0-65535`);
  const hc = fields.healthCheckNodePort ?? 0;
  if (!isValidPort(hc, true)) problems.push(`healthCheckNodePort ${String(hc)} is out of range 0-65535`);
  const t = fields.affinitySeconds;
  if (t !== undefined && !(Number.isInteger(t) && t >= 1 && t <= MAX_AFFINITY_SECONDS)) {
    problems.push(`session affinity timeout ${String(t)} is out of range 1-${MAX_AFFINITY_SECONDS} s`);
  }
  const ips = (list: readonly string[] | undefined, what: string): string[] =>
    (list ?? []).flatMap((text) => {
      const r = address(text, what, family, keep);
      if ('problem' in r) {
        problems.push(r.problem);
        return [];
      }
      return [r.ip];
    });
  const [clusterIP = ''] = ips([fields.clusterIP], 'cluster IP');
  const externalIPs = ips(fields.externalIPs, 'external IP');
  const loadBalancerVIPs = ips(fields.loadBalancerVIPs, 'load-balancer IP');
  const loadBalancerSourceRanges = (fields.loadBalancerSourceRanges ?? []).flatMap((text) => {
    const c = typeof text === 'string' ? parseCIDROrHostValue(text, { keepV4Mapped: keep }) : null;
    if (c === null) {
      problems.push(`loadBalancerSourceRange ${JSON.stringify(text)} is not a valid source range (a CIDR)`);
      return [];
    }
    if (c.family !== family) {
      problems.push(`loadBalancerSourceRange ${String(text)} is not ${ipFamilyName(family)}`);
      return [];
    }
    return [`${formatIPValue({ family: c.family, value: c.base })}/${c.prefixLength}`];
  });
  if (problems.length > 0) throw new InvalidServicePortError(servicePortName, problems);
  return { clusterIP, externalIPs, loadBalancerVIPs, loadBalancerSourceRanges };
}

/**
 * Checks one endpoint for a ruleset of `family`: its canonical IP, or the problem (the
 * backend decides whether that skips the endpoint or the whole service port).
 */
export function checkEndpoint(
  ip: unknown,
  port: unknown,
  family: IPFamily,
  options: Pick<ServicePortCheckOptions, 'keepV4Mapped'> = {},
): { readonly ip: string } | { readonly problem: string } {
  const r = address(ip, 'endpoint IP', family, options.keepV4Mapped === true);
  if ('problem' in r) return r;
  if (!isValidPort(port))
    return { problem: `endpoint ${String(ip)} port ${String(port)} is out of range 1-65535` };
  return r;
}

const memo: Record<IPFamily, WeakMap<ServicePortInfo, CheckedServicePort | InvalidServicePortError>> = {
  4: new WeakMap(),
  6: new WeakMap(),
};

/**
 * {@link checkServicePortFields} for a snapshot's {@link ServicePortInfo}, memoised per object
 * and family (snapshots share unchanged service port objects, so each is checked once). The
 * memo is a weak, pure cache: like the snapshots, a checked object must not be mutated.
 * @param family - The ruleset's family; defaults to the port's own `ipFamily`.
 * @throws InvalidServicePortError listing every problem.
 */
export function checkServicePort(
  info: ServicePortInfo,
  family: IPFamily = info.ipFamily,
): CheckedServicePort {
  const cache = memo[family];
  let r = cache.get(info);
  if (r === undefined) {
    try {
      r = checkServicePortFields(
        String(info.nameString),
        {
          protocol: info.protocol,
          port: info.port,
          nodePort: info.nodePort,
          healthCheckNodePort: info.healthCheckNodePort,
          affinitySeconds: info.sessionAffinityClientIP ? info.stickyMaxAgeSeconds : undefined,
          clusterIP: info.clusterIP,
          externalIPs: info.externalIPs,
          loadBalancerVIPs: info.loadBalancerVIPs,
          loadBalancerSourceRanges: info.loadBalancerSourceRanges,
        },
        family,
      );
    } catch (e) {
      if (!(e instanceof InvalidServicePortError)) throw e;
      r = e;
    }
    cache.set(info, r);
  }
  if (r instanceof InvalidServicePortError) throw r;
  return r;
}
