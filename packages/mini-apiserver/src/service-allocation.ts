/**
 * Service defaulting and allocation as kube-apiserver does it: `type: ClusterIP`,
 * `sessionAffinity`, traffic policies, IP families, `targetPort`, a `clusterIP` from the
 * service CIDRs (the `ServiceCIDR` objects of `networking.k8s.io/v1`, the default `kubernetes`
 * one made from `--service-cluster-ip-range`), NodePorts from `--service-node-port-range`,
 * with kube-apiserver's messages for a taken or out-of-range value. An allocation is free
 * again as soon as the Service holding it is deleted (the taken set is read from the store).
 *
 * @module
 */
import { InvalidOptionsError } from '@nodeagent/core';
import { defaultDaemonSet, defaultPod } from './api-defaults.js';
import { type ApiStatusError, invalid, type StatusCause } from './errors.js';
import { isPlainObject, type KubeObject } from './object.js';

type Rec = Record<string, unknown>;

/** kube-apiserver's default `--service-cluster-ip-range`. */
export const DEFAULT_SERVICE_CLUSTER_IP_RANGE = '10.0.0.0/24';
/** kube-apiserver's default `--service-node-port-range` (30000-32767). */
export const DEFAULT_SERVICE_NODE_PORT_RANGE = { base: 30000, size: 2768 } as const;
/** Name of the ServiceCIDR kube-apiserver creates from `--service-cluster-ip-range`. */
export const DEFAULT_SERVICE_CIDR_NAME = 'kubernetes';

/** An IPv4 CIDR as integers. */
export interface Ipv4Cidr {
  /** The text form, e.g. `10.0.0.0/24`. */
  readonly text: string;
  /** Network address. */
  readonly network: number;
  /** Prefix length. */
  readonly bits: number;
}

/** Parses a dotted IPv4 address; `undefined` when it is not one. */
export function parseIpv4(ip: string): number | undefined {
  const m = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/.exec(ip);
  if (!m) return undefined;
  let n = 0;
  for (let i = 1; i <= 4; i++) {
    const part = Number(m[i]);
    if (part > 255 || ((m[i] as string).length > 1 && (m[i] as string).startsWith('0'))) return undefined;
    n = n * 256 + part;
  }
  return n;
}

function formatIpv4(n: number): string {
  return [n >>> 24, (n >>> 16) & 255, (n >>> 8) & 255, n & 255].join('.');
}

/**
 * Parses an IPv4 CIDR (`10.0.0.0/24`).
 * @throws InvalidOptionsError for anything else
 */
export function parseIpv4Cidr(text: string): Ipv4Cidr {
  const [ip, bitsText] = text.split('/');
  const addr = parseIpv4(ip ?? '');
  const bits = Number(bitsText);
  if (addr === undefined || bitsText === undefined || !/^\d+$/.test(bitsText) || bits > 30 || bits < 8) {
    throw new InvalidOptionsError(
      'MiniApiServer',
      `service CIDR "${text}" is not an IPv4 CIDR with a prefix of /8 to /30`,
    );
  }
  const mask = bits === 0 ? 0 : (0xffffffff << (32 - bits)) >>> 0;
  return { text, network: (addr & mask) >>> 0, bits };
}

function inCidr(c: Ipv4Cidr, ip: number): boolean {
  const size = 2 ** (32 - c.bits);
  // The network and broadcast addresses are never handed out (the IPv4 allocator's rule).
  return ip > c.network && ip < c.network + size - 1;
}

/** Go's `%#v` of a `[]string`, as field errors print slice values. */
function goStringSlice(v: unknown): string {
  const list = Array.isArray(v) ? v.map((x) => JSON.stringify(String(x))) : [];
  return `[]string{${list.join(', ')}}`;
}

function nodePortsWanted(spec: Rec): boolean {
  return (
    spec.type === 'NodePort' || (spec.type === 'LoadBalancer' && spec.allocateLoadBalancerNodePorts !== false)
  );
}

/** Where the allocator reads the taken values and the ServiceCIDRs. */
export interface AllocationSource {
  /** Every stored object of a resource. */
  list(resource: string): KubeObject[];
}

/** Options of {@link ApiDefaulting}. */
export interface ApiDefaultingOptions {
  /** `--service-cluster-ip-range` (IPv4 only). @default '10.0.0.0/24' */
  readonly serviceClusterIpRange?: string;
  /** Source of randomness in [0, 1) for the allocators. @default Math.random */
  readonly random?: () => number;
}

/** Applies kube-apiserver's defaults and allocations to pods and services before validation. */
export class ApiDefaulting {
  /** The range the default ServiceCIDR is made from. */
  readonly serviceClusterIpRange: Ipv4Cidr;
  readonly #source: AllocationSource;
  readonly #random: () => number;

  /**
   * @param source where taken values and ServiceCIDRs are read (the store)
   * @throws InvalidOptionsError for a range that is not an IPv4 CIDR
   */
  constructor(source: AllocationSource, options: ApiDefaultingOptions = {}) {
    this.#source = source;
    this.serviceClusterIpRange = parseIpv4Cidr(
      options.serviceClusterIpRange ?? DEFAULT_SERVICE_CLUSTER_IP_RANGE,
    );
    this.#random = options.random ?? Math.random;
  }

  /** The default `kubernetes` ServiceCIDR object, as kube-apiserver creates it at start. */
  defaultServiceCidr(now: Date): KubeObject {
    return {
      metadata: { name: DEFAULT_SERVICE_CIDR_NAME },
      spec: { cidrs: [this.serviceClusterIpRange.text] },
      status: {
        conditions: [
          {
            type: 'Ready',
            status: 'True',
            reason: '',
            message: 'Kubernetes Service CIDR is ready',
            lastTransitionTime: now.toISOString().replace(/\.\d{3}Z$/, 'Z'),
          },
        ],
      },
    };
  }

  /**
   * Defaults (and for services allocates) `obj` in place; `old` is the stored version of an
   * update.
   * @throws ApiStatusError 422 for a taken or out-of-range clusterIP or nodePort
   */
  apply(resource: string, obj: KubeObject, old: KubeObject | undefined): void {
    if (resource === 'pods') defaultPod(obj, old === undefined);
    else if (resource === 'daemonsets') defaultDaemonSet(obj);
    else if (resource === 'services') {
      const bad = this.#service(obj, old);
      if (bad) throw bad;
    }
  }

  #cidrs(): Ipv4Cidr[] {
    const out: Ipv4Cidr[] = [];
    for (const o of this.#source.list('servicecidrs')) {
      const cidrs = isPlainObject(o.spec) && Array.isArray(o.spec.cidrs) ? o.spec.cidrs : [];
      for (const c of cidrs) {
        try {
          if (typeof c === 'string') out.push(parseIpv4Cidr(c));
        } catch {
          // An IPv6 or malformed CIDR is not used for IPv4 allocation.
        }
      }
    }
    return out.length > 0 ? out : [this.serviceClusterIpRange];
  }

  #taken(self: KubeObject): { ips: Set<string>; ports: Set<number> } {
    const ips = new Set<string>();
    const ports = new Set<number>();
    const ns = self.metadata?.namespace;
    const name = self.metadata?.name;
    for (const s of this.#source.list('services')) {
      if (s.metadata?.namespace === ns && s.metadata?.name === name) continue;
      const spec = isPlainObject(s.spec) ? s.spec : {};
      for (const ip of Array.isArray(spec.clusterIPs) ? spec.clusterIPs : [spec.clusterIP])
        if (typeof ip === 'string' && ip !== '' && ip !== 'None') ips.add(ip);
      for (const p of Array.isArray(spec.ports) ? spec.ports : [])
        if (isPlainObject(p) && typeof p.nodePort === 'number' && p.nodePort > 0) ports.add(p.nodePort);
      if (typeof spec.healthCheckNodePort === 'number' && spec.healthCheckNodePort > 0)
        ports.add(spec.healthCheckNodePort);
    }
    return { ips, ports };
  }

  #nextIp(taken: Set<string>): string | undefined {
    const cidrs = this.#cidrs();
    for (const c of cidrs) {
      const size = 2 ** (32 - c.bits) - 2;
      const start = Math.floor(this.#random() * size);
      for (let i = 0; i < size; i++) {
        const ip = formatIpv4(c.network + 1 + ((start + i) % size));
        if (!taken.has(ip)) return ip;
      }
    }
    return undefined;
  }

  #nextPort(taken: Set<number>): number | undefined {
    const { base, size } = DEFAULT_SERVICE_NODE_PORT_RANGE;
    const start = Math.floor(this.#random() * size);
    for (let i = 0; i < size; i++) {
      const p = base + ((start + i) % size);
      if (!taken.has(p)) return p;
    }
    return undefined;
  }

  #service(svc: KubeObject, old: KubeObject | undefined): ApiStatusError | undefined {
    const name = svc.metadata?.name ?? '';
    if (!isPlainObject(svc.spec)) svc.spec = {};
    const spec = svc.spec as Rec;
    const oldSpec = old && isPlainObject(old.spec) ? old.spec : undefined;
    const causes: StatusCause[] = [];
    if (spec.type === undefined || spec.type === '') spec.type = 'ClusterIP';
    if (spec.sessionAffinity === undefined || spec.sessionAffinity === '') spec.sessionAffinity = 'None';
    const ports = Array.isArray(spec.ports) ? spec.ports : [];
    for (const p of ports) {
      if (!isPlainObject(p)) continue;
      if (p.protocol === undefined || p.protocol === '') p.protocol = 'TCP';
      if (
        (p.targetPort === undefined || p.targetPort === 0 || p.targetPort === '') &&
        typeof p.port === 'number'
      )
        p.targetPort = p.port;
    }
    if (spec.type === 'ExternalName') return undefined;
    if (spec.internalTrafficPolicy === undefined || spec.internalTrafficPolicy === '')
      spec.internalTrafficPolicy = 'Cluster';
    const external = spec.type === 'NodePort' || spec.type === 'LoadBalancer';
    if (external && (spec.externalTrafficPolicy === undefined || spec.externalTrafficPolicy === ''))
      spec.externalTrafficPolicy = 'Cluster';
    if (spec.type === 'LoadBalancer' && spec.allocateLoadBalancerNodePorts === undefined)
      spec.allocateLoadBalancerNodePorts = true;

    // An update carries over what was allocated (kube-apiserver's patchAllocatedValues).
    if (oldSpec) {
      if ((spec.clusterIP === undefined || spec.clusterIP === '') && typeof oldSpec.clusterIP === 'string')
        spec.clusterIP = oldSpec.clusterIP;
      if (
        (spec.clusterIPs === undefined || (Array.isArray(spec.clusterIPs) && spec.clusterIPs.length === 0)) &&
        spec.clusterIP === oldSpec.clusterIP
      )
        spec.clusterIPs = oldSpec.clusterIPs;
      if (spec.ipFamilies === undefined && oldSpec.ipFamilies !== undefined)
        spec.ipFamilies = oldSpec.ipFamilies;
      if (spec.ipFamilyPolicy === undefined && oldSpec.ipFamilyPolicy !== undefined)
        spec.ipFamilyPolicy = oldSpec.ipFamilyPolicy;
      if (nodePortsWanted(spec)) {
        const oldPorts = Array.isArray(oldSpec.ports) ? oldSpec.ports.filter(isPlainObject) : [];
        for (const p of ports) {
          if (!isPlainObject(p) || (p.nodePort !== undefined && p.nodePort !== 0)) continue;
          const match = oldPorts.find((o) => o.port === p.port && (o.protocol ?? 'TCP') === p.protocol);
          if (match && typeof match.nodePort === 'number') p.nodePort = match.nodePort;
        }
      }
      if (spec.healthCheckNodePort === undefined && oldSpec.healthCheckNodePort !== undefined)
        spec.healthCheckNodePort = oldSpec.healthCheckNodePort;
    }

    // clusterIP / clusterIPs
    if (
      (spec.clusterIP === undefined || spec.clusterIP === '') &&
      Array.isArray(spec.clusterIPs) &&
      typeof spec.clusterIPs[0] === 'string'
    )
      spec.clusterIP = spec.clusterIPs[0];
    if (
      typeof spec.clusterIP === 'string' &&
      spec.clusterIP !== '' &&
      (!Array.isArray(spec.clusterIPs) || spec.clusterIPs.length === 0)
    )
      spec.clusterIPs = [spec.clusterIP];
    if (
      oldSpec &&
      typeof oldSpec.clusterIP === 'string' &&
      oldSpec.clusterIP !== '' &&
      spec.clusterIP !== oldSpec.clusterIP
    ) {
      causes.push({
        reason: 'FieldValueInvalid',
        message: `Invalid value: ${goStringSlice(spec.clusterIPs)}: may not change once set`,
        field: 'spec.clusterIPs[0]',
      });
      return invalid('', 'Service', name, causes);
    }
    const headless = spec.clusterIP === 'None';
    if (spec.ipFamilies === undefined) spec.ipFamilies = ['IPv4'];
    if (spec.ipFamilyPolicy === undefined)
      spec.ipFamilyPolicy = headless && !isPlainObject(spec.selector) ? 'RequireDualStack' : 'SingleStack';
    const taken = this.#taken(svc);
    if (!headless && (oldSpec === undefined || oldSpec.clusterIP !== spec.clusterIP)) {
      if (spec.clusterIP === undefined || spec.clusterIP === '') {
        const ip = this.#nextIp(taken.ips);
        if (ip === undefined) {
          causes.push({
            reason: 'FieldValueInvalid',
            message: 'Internal error occurred: failed to allocate a serviceIP: range is full',
            field: 'spec.clusterIPs',
          });
        } else {
          spec.clusterIP = ip;
          spec.clusterIPs = [ip];
        }
      } else {
        const ip = String(spec.clusterIP);
        const n = parseIpv4(ip);
        const cidrs = this.#cidrs();
        let err: string | undefined;
        if (n === undefined) {
          causes.push({
            reason: 'FieldValueInvalid',
            message: `Invalid value: ${JSON.stringify(ip)}: must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)`,
            field: 'spec.clusterIPs[0]',
          });
        } else if (!cidrs.some((c) => inCidr(c, n))) {
          err = `the provided IP (${ip}) is not in the valid range. The range of valid IPs is ${cidrs[0]?.text}`;
        } else if (taken.ips.has(ip)) {
          err = 'provided IP is already allocated';
        }
        if (err !== undefined)
          causes.push({
            reason: 'FieldValueInvalid',
            message: `Invalid value: ${goStringSlice(spec.clusterIPs)}: failed to allocate IP ${ip}: ${err}`,
            field: 'spec.clusterIPs',
          });
      }
    }
    // NodePorts
    const wantNodePorts = nodePortsWanted(spec);
    ports.forEach((p: unknown, i: number) => {
      if (!isPlainObject(p)) return;
      const field = `spec.ports[${i}].nodePort`;
      const np = p.nodePort;
      if (!external) {
        if (np !== undefined && np !== 0)
          causes.push({
            reason: 'FieldValueForbidden',
            message: "Forbidden: may not be used when `type` is 'ClusterIP'",
            field,
          });
        return;
      }
      if (np === undefined || np === 0) {
        if (!wantNodePorts) return;
        const next = this.#nextPort(taken.ports);
        if (next === undefined) {
          causes.push({
            reason: 'FieldValueInvalid',
            message: 'Internal error occurred: failed to allocate a nodePort: range is full',
            field,
          });
          return;
        }
        p.nodePort = next;
        taken.ports.add(next);
        return;
      }
      const oldHad =
        oldSpec &&
        Array.isArray(oldSpec.ports) &&
        oldSpec.ports.some((o) => isPlainObject(o) && o.nodePort === np);
      const { base, size } = DEFAULT_SERVICE_NODE_PORT_RANGE;
      if (typeof np !== 'number' || np < base || np >= base + size) {
        causes.push({
          reason: 'FieldValueInvalid',
          message: `Invalid value: ${JSON.stringify(np)}: provided port is not in the valid range. The range of valid ports is ${base}-${base + size - 1}`,
          field,
        });
      } else if (taken.ports.has(np) && !oldHad) {
        causes.push({
          reason: 'FieldValueInvalid',
          message: `Invalid value: ${np}: provided port is already allocated`,
          field,
        });
      } else taken.ports.add(np);
    });
    if (spec.type === 'LoadBalancer' && spec.externalTrafficPolicy === 'Local') {
      if (spec.healthCheckNodePort === undefined || spec.healthCheckNodePort === 0) {
        const next = this.#nextPort(taken.ports);
        if (next !== undefined) spec.healthCheckNodePort = next;
      } else if (
        typeof spec.healthCheckNodePort === 'number' &&
        taken.ports.has(spec.healthCheckNodePort) &&
        oldSpec?.healthCheckNodePort !== spec.healthCheckNodePort
      ) {
        causes.push({
          reason: 'FieldValueInvalid',
          message: `Invalid value: ${spec.healthCheckNodePort}: provided port is already allocated`,
          field: 'spec.healthCheckNodePort',
        });
      }
    }
    return causes.length > 0 ? invalid('', 'Service', name, causes) : undefined;
  }
}
