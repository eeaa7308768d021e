/**
 * Turning a Service into its per-family service ports (kube-proxy's `serviceToServiceMap` and
 * `newBaseServiceInfo`), validating everything a renderer would write into a rule.
 *
 * @module
 */
import type { V1Service } from '@kubernetes/client-node';
import { parseCIDR, parseIP } from '@nodeagent/core';
import { InvalidServiceError } from './errors.js';
import { namespacedName, servicePortNameString } from './service-port-name.js';
import type { IPFamily, Protocol, ServicePortInfo } from './types.js';

/** The service ports of one Service and one family, keyed by `nameString`, in sorted key order. */
export type ServicePortMap = ReadonlyMap<string, ServicePortInfo>;

/** A Service parsed for both families. Skipped services (headless, ExternalName, no cluster IP) have empty maps. */
export interface ParsedService {
  /** `ns/name`. */
  readonly key: string;
  /** Service ports for the IPv4 snapshot. */
  readonly v4: ServicePortMap;
  /** Service ports for the IPv6 snapshot. */
  readonly v6: ServicePortMap;
}

/** ClientIP affinity timeout the API server defaults to (3 hours). */
export const DEFAULT_STICKY_MAX_AGE_SECONDS = 10_800;
const MAX_STICKY_SECONDS = 86_400;
const EMPTY: ServicePortMap = new Map();
const SERVICE_TYPES = new Set(['ClusterIP', 'NodePort', 'LoadBalancer', 'ExternalName']);

/** True when `value` is one of the protocols kube-proxy programs. */
export function isProtocol(value: unknown): value is Protocol {
  return value === 'TCP' || value === 'UDP' || value === 'SCTP';
}

/** True when `value` is an integer in [min, max]. */
export function isIntInRange(value: unknown, min: number, max: number): value is number {
  return typeof value === 'number' && Number.isInteger(value) && value >= min && value <= max;
}

/** Reads `metadata.namespace` (the default namespace when unset, as kubectl applies manifests) and `metadata.name`. */
export function objectIdentity(obj: { metadata?: { namespace?: string; name?: string } | undefined }): {
  namespace: string;
  name: string;
} {
  const namespace =
    typeof obj.metadata?.namespace === 'string' && obj.metadata.namespace !== ''
      ? obj.metadata.namespace
      : 'default';
  const name = typeof obj.metadata?.name === 'string' ? obj.metadata.name : '';
  return { namespace, name };
}

/** A JSON type name for messages: `an object`, `a string "80"`, `the number 5`. */
export function describeValue(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'a list';
  if (typeof value === 'object') return 'an object';
  if (typeof value === 'string') return `a string ${JSON.stringify(value)}`;
  return `the ${typeof value} ${String(value)}`;
}

/**
 * The list at `field` (absent or null = empty), or an empty list and a problem when the value
 * is not a list; elements that are not objects are left out with a problem each.
 */
export function objectList<T = Record<string, unknown>>(
  value: unknown,
  field: string,
  problems: string[],
): T[] {
  if (value === undefined || value === null) return [];
  if (!Array.isArray(value)) {
    problems.push(`${field} must be a list, not ${describeValue(value)}`);
    return [];
  }
  const out: T[] = [];
  value.forEach((v, i) => {
    if (typeof v === 'object' && v !== null && !Array.isArray(v)) out.push(v as T);
    else problems.push(`${field}[${i}] must be an object, not ${describeValue(v)}`);
  });
  return out;
}

/** The object at `field` (absent or null = `{}`), or `{}` and a problem when it is not an object. */
export function objectField(value: unknown, field: string, problems: string[]): Record<string, unknown> {
  if (value === undefined || value === null) return {};
  if (typeof value === 'object' && !Array.isArray(value)) return value as Record<string, unknown>;
  problems.push(`${field} must be an object, not ${describeValue(value)}`);
  return {};
}

function policy(value: unknown, field: string, problems: string[]): 'Cluster' | 'Local' {
  if (value === undefined || value === null || value === 'Cluster') return 'Cluster';
  if (value === 'Local') return 'Local';
  problems.push(`spec.${field} ${JSON.stringify(value)} is not Cluster or Local`);
  return 'Cluster';
}

function ipsByFamily(values: unknown, field: string, problems: string[]): Record<IPFamily, string[]> {
  const out: Record<IPFamily, string[]> = { 4: [], 6: [] };
  if (values === undefined || values === null) return out;
  if (!Array.isArray(values)) {
    problems.push(`${field} must be a list of IP addresses`);
    return out;
  }
  for (const value of values) {
    const parsed = typeof value === 'string' ? parseIP(value.trim()) : null;
    if (parsed === null) problems.push(`${field} ${JSON.stringify(value)} is not a valid IP address`);
    else out[parsed.family].push(parsed.ip);
  }
  return out;
}

/**
 * Parses a Service into its service ports per family, or throws {@link InvalidServiceError}
 * listing every problem (the whole Service is then skipped, so no partial rules are written).
 */
export function parseService(service: V1Service): ParsedService {
  const { namespace, name } = objectIdentity(service);
  const key = namespacedName(namespace, name);
  const problems: string[] = [];
  if (name === '') throw new InvalidServiceError(namespace, name, ['metadata.name is empty']);
  const specProblems: string[] = [];
  const spec = objectField(service.spec, 'spec', specProblems) as NonNullable<V1Service['spec']>;
  if (specProblems.length > 0) throw new InvalidServiceError(namespace, name, specProblems);
  const type = spec.type ?? 'ClusterIP';
  if (typeof type !== 'string' || !SERVICE_TYPES.has(type)) {
    throw new InvalidServiceError(namespace, name, [
      `spec.type ${JSON.stringify(type)} is not ClusterIP, NodePort, LoadBalancer or ExternalName`,
    ]);
  }
  if (type === 'ExternalName') return { key, v4: EMPTY, v6: EMPTY };
  if (spec.clusterIP !== undefined && spec.clusterIP !== null && typeof spec.clusterIP !== 'string') {
    throw new InvalidServiceError(namespace, name, [
      `spec.clusterIP must be a string, not ${describeValue(spec.clusterIP)}`,
    ]);
  }
  if (spec.clusterIPs !== undefined && spec.clusterIPs !== null && !Array.isArray(spec.clusterIPs)) {
    throw new InvalidServiceError(namespace, name, [
      `spec.clusterIPs must be a list, not ${describeValue(spec.clusterIPs)}`,
    ]);
  }
  const clusterIPTexts =
    Array.isArray(spec.clusterIPs) && spec.clusterIPs.length > 0
      ? spec.clusterIPs
      : spec.clusterIP !== undefined && spec.clusterIP !== null && spec.clusterIP !== ''
        ? [spec.clusterIP]
        : [];
  if (clusterIPTexts.length === 0 || clusterIPTexts[0] === 'None') return { key, v4: EMPTY, v6: EMPTY };
  const clusterIPs = ipsByFamily(clusterIPTexts, 'spec.clusterIPs', problems);

  const externalIPs = ipsByFamily(spec.externalIPs, 'spec.externalIPs', problems);
  const sourceRanges: Record<IPFamily, string[]> = { 4: [], 6: [] };
  const ranges: unknown = spec.loadBalancerSourceRanges;
  if (ranges !== undefined && ranges !== null && !Array.isArray(ranges))
    problems.push(`spec.loadBalancerSourceRanges must be a list, not ${describeValue(ranges)}`);
  for (const range of Array.isArray(ranges) ? (ranges as unknown[]) : []) {
    const parsed = typeof range === 'string' ? parseCIDR(range.trim()) : null;
    if (parsed === null)
      problems.push(`spec.loadBalancerSourceRanges ${JSON.stringify(range)} is not a valid CIDR`);
    else sourceRanges[parsed.family].push(parsed.cidr);
  }
  const lbVIPs: Record<IPFamily, string[]> = { 4: [], 6: [] };
  const status = objectField(service.status, 'status', problems);
  const lb = objectField(status.loadBalancer, 'status.loadBalancer', problems);
  type Ingress = NonNullable<
    NonNullable<NonNullable<V1Service['status']>['loadBalancer']>['ingress']
  >[number];
  for (const ingress of objectList<Ingress>(lb.ingress, 'status.loadBalancer.ingress', problems)) {
    if (ingress.ip === undefined || ingress.ip === '') continue;
    const parsed = typeof ingress.ip === 'string' ? parseIP(ingress.ip) : null;
    if (parsed === null) {
      problems.push(`status.loadBalancer.ingress ip ${JSON.stringify(ingress.ip)} is not a valid IP address`);
      continue;
    }
    // Proxy-mode load balancers deliver to the node themselves; VIP (or unset) mode gets rules.
    if (ingress.ipMode !== undefined && ingress.ipMode !== null && ingress.ipMode !== 'VIP') continue;
    lbVIPs[parsed.family].push(parsed.ip);
  }

  const affinity = spec.sessionAffinity ?? 'None';
  if (affinity !== 'None' && affinity !== 'ClientIP') {
    problems.push(`spec.sessionAffinity ${JSON.stringify(affinity)} is not None or ClientIP`);
  }
  let stickyMaxAgeSeconds = 0;
  if (affinity === 'ClientIP') {
    const timeout = spec.sessionAffinityConfig?.clientIP?.timeoutSeconds;
    if (timeout === undefined || timeout === null) stickyMaxAgeSeconds = DEFAULT_STICKY_MAX_AGE_SECONDS;
    else if (isIntInRange(timeout, 1, MAX_STICKY_SECONDS)) stickyMaxAgeSeconds = timeout;
    else
      problems.push(
        `spec.sessionAffinityConfig.clientIP.timeoutSeconds ${JSON.stringify(timeout)} is not in 1-86400`,
      );
  }
  const etp = policy(spec.externalTrafficPolicy, 'externalTrafficPolicy', problems);
  const itp = policy(spec.internalTrafficPolicy, 'internalTrafficPolicy', problems);
  // Upstream's apiservice.ExternallyAccessible: by Service type, not by the per-port data.
  const serviceExternallyAccessible =
    type === 'LoadBalancer' ||
    type === 'NodePort' ||
    (type === 'ClusterIP' && (spec.externalIPs?.length ?? 0) > 0);
  const externalPolicyLocal = serviceExternallyAccessible && etp === 'Local';
  const internalPolicyLocal = itp === 'Local';
  let healthCheckNodePort = 0;
  if (type === 'LoadBalancer' && externalPolicyLocal && spec.healthCheckNodePort !== undefined) {
    if (isIntInRange(spec.healthCheckNodePort, 0, 65535)) healthCheckNodePort = spec.healthCheckNodePort;
    else
      problems.push(`spec.healthCheckNodePort ${JSON.stringify(spec.healthCheckNodePort)} is not in 0-65535`);
  }
  const trafficDistribution = typeof spec.trafficDistribution === 'string' ? spec.trafficDistribution : null;

  interface PortSpec {
    portName: string;
    port: number;
    protocol: Protocol;
    nodePort: number;
    targetPort: number | string;
  }
  const ports: PortSpec[] = [];
  const seenNames = new Set<string>();
  objectList<NonNullable<typeof spec.ports>[number]>(spec.ports, 'spec.ports', problems).forEach((p, i) => {
    const where = `spec.ports[${i}]`;
    const portName = p.name ?? '';
    const protocol = p.protocol ?? 'TCP';
    let ok = true;
    if (typeof portName !== 'string') {
      problems.push(`${where}.name must be a string`);
      ok = false;
    } else if (seenNames.has(portName)) {
      problems.push(`${where}.name ${JSON.stringify(portName)} is used by another port`);
      ok = false;
    }
    if (!isIntInRange(p.port, 1, 65535)) {
      problems.push(`${where}.port ${JSON.stringify(p.port)} is not in 1-65535`);
      ok = false;
    }
    if (!isProtocol(protocol)) {
      problems.push(`${where}.protocol ${JSON.stringify(protocol)} is not TCP, UDP or SCTP`);
      ok = false;
    }
    const nodePort = p.nodePort ?? 0;
    if (!isIntInRange(nodePort, 0, 65535)) {
      problems.push(`${where}.nodePort ${JSON.stringify(nodePort)} is not in 0-65535`);
      ok = false;
    }
    const target = p.targetPort ?? p.port;
    if (typeof target !== 'string' && !isIntInRange(target, 0, 65535)) {
      problems.push(`${where}.targetPort ${JSON.stringify(target)} is not a port number or name`);
      ok = false;
    }
    seenNames.add(String(portName));
    if (ok)
      ports.push({ portName, port: p.port, protocol: protocol as Protocol, nodePort, targetPort: target });
  });
  if (problems.length > 0) throw new InvalidServiceError(namespace, name, problems);

  const forFamily = (family: IPFamily): ServicePortMap => {
    const clusterIP = clusterIPs[family][0];
    if (clusterIP === undefined) return EMPTY;
    const entries: [string, ServicePortInfo][] = ports.map((p) => {
      const spn = { namespace, name, port: p.portName, protocol: p.protocol };
      const externallyAccessible =
        p.nodePort !== 0 || lbVIPs[family].length > 0 || externalIPs[family].length > 0;
      const info: ServicePortInfo = {
        name: spn,
        nameString: servicePortNameString(spn),
        serviceKey: key,
        ipFamily: family,
        type: type as ServicePortInfo['type'],
        clusterIP,
        port: p.port,
        protocol: p.protocol,
        nodePort: p.nodePort,
        targetPort: p.targetPort,
        sessionAffinityClientIP: affinity === 'ClientIP',
        stickyMaxAgeSeconds,
        externalIPs: externalIPs[family],
        loadBalancerVIPs: lbVIPs[family],
        loadBalancerSourceRanges: sourceRanges[family],
        externalPolicyLocal,
        internalPolicyLocal,
        healthCheckNodePort,
        trafficDistribution,
        externallyAccessible,
        usesClusterEndpoints: !internalPolicyLocal || externallyAccessible,
        usesLocalEndpoints: internalPolicyLocal || (externalPolicyLocal && externallyAccessible),
      };
      return [info.nameString, info];
    });
    entries.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return new Map(entries);
  };
  return { key, v4: forFamily(4), v6: forFamily(6) };
}

/** Deep equality of two service port maps (same keys, same field values). */
export function servicePortMapsEqual(a: ServicePortMap, b: ServicePortMap): boolean {
  if (a === b) return true;
  if (a.size !== b.size) return false;
  for (const [k, info] of a) {
    const other = b.get(k);
    if (other === undefined || JSON.stringify(info) !== JSON.stringify(other)) return false;
  }
  return true;
}
