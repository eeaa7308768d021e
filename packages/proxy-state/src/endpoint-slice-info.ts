/**
 * Reducing an EndpointSlice to what kube-proxy reads from it (its `endpointSliceInfo`):
 * the owning service, sorted ports and endpoints with their conditions and hints.
 *
 * @module
 */
import type { V1EndpointSlice } from '@kubernetes/client-node';
import { parseIP } from '@nodeagent/core';
import { InvalidEndpointSliceError } from './errors.js';
import {
  describeValue,
  isIntInRange,
  isProtocol,
  objectField,
  objectIdentity,
  objectList,
} from './service-port-map.js';
import { namespacedName } from './service-port-name.js';
import type { IPFamily, Protocol } from './types.js';

/** The label naming the Service an EndpointSlice belongs to. */
export const LABEL_SERVICE_NAME = 'kubernetes.io/service-name';
/** The annotation the EndpointSlice controller stamps with the time of the triggering change. */
export const ANNOTATION_LAST_CHANGE_TRIGGER_TIME = 'endpoints.kubernetes.io/last-change-trigger-time';

/** One port of a slice (ports without a number are dropped, as upstream does). */
export interface SlicePort {
  /** The port name, `''` when unnamed. */
  readonly name: string;
  /** The port number, 1–65535. */
  readonly port: number;
  /** The protocol. */
  readonly protocol: Protocol;
}

/** One endpoint of a slice, reduced to its first address. */
export interface SliceEndpoint {
  /** The normalised first address. */
  readonly ip: string;
  /** `conditions.ready`, true when unset. */
  readonly ready: boolean;
  /** `conditions.serving`, true when unset. */
  readonly serving: boolean;
  /** `conditions.terminating`, false when unset. */
  readonly terminating: boolean;
  /** `nodeName`, or null. */
  readonly nodeName: string | null;
  /** `zone`, or null. */
  readonly zone: string | null;
  /** Sorted zone hints. */
  readonly zoneHints: readonly string[];
  /** Sorted node hints. */
  readonly nodeHints: readonly string[];
}

/** An EndpointSlice as the cache keeps it. */
export interface ParsedEndpointSlice {
  /** The slice's namespace. */
  readonly namespace: string;
  /** The slice's name. */
  readonly sliceName: string;
  /** `ns/<service-name label>`: the service the slice feeds. */
  readonly serviceKey: string;
  /** The family of its addresses, or null for `FQDN` slices (which kube-proxy ignores). */
  readonly family: IPFamily | null;
  /** Ports sorted by number. */
  readonly ports: readonly SlicePort[];
  /** Endpoints sorted by address. */
  readonly endpoints: readonly SliceEndpoint[];
  /** The `last-change-trigger-time` annotation, or null. */
  readonly lastChangeTriggerTime: string | null;
  /** A canonical text of ports and endpoints: two slices with equal fingerprints program the same rules. */
  readonly fingerprint: string;
}

function names(value: unknown, field: string, problems: string[]): string[] {
  return objectList(value, field, problems)
    .map((h) => h.name)
    .filter((n): n is string => typeof n === 'string' && n !== '')
    .sort();
}

/**
 * Parses an EndpointSlice, or throws {@link InvalidEndpointSliceError} listing every problem:
 * a missing `kubernetes.io/service-name` label, an unknown address type, an address that is not
 * an IP of the slice's family, a port outside 1–65535, an unknown protocol.
 */
export function parseEndpointSlice(slice: V1EndpointSlice): ParsedEndpointSlice {
  const { namespace, name: sliceName } = objectIdentity(slice);
  const problems: string[] = [];
  if (sliceName === '') problems.push('metadata.name is empty');
  const serviceName = slice.metadata?.labels?.[LABEL_SERVICE_NAME];
  if (typeof serviceName !== 'string' || serviceName === '') {
    problems.push(`no ${LABEL_SERVICE_NAME} label: kube-proxy cannot tell which Service it belongs to`);
  }
  const addressType = slice.addressType;
  let family: IPFamily | null = null;
  if (addressType === 'IPv4') family = 4;
  else if (addressType === 'IPv6') family = 6;
  else if (addressType !== 'FQDN')
    problems.push(`addressType ${JSON.stringify(addressType)} is not IPv4, IPv6 or FQDN`);

  const ports: SlicePort[] = [];
  const endpoints: SliceEndpoint[] = [];
  if (family !== null) {
    objectList<NonNullable<V1EndpointSlice['ports']>[number]>(slice.ports, 'ports', problems).forEach(
      (p, i) => {
        const where = `ports[${i}]`;
        const protocol = p.protocol ?? 'TCP';
        const portName = p.name ?? '';
        if (!isProtocol(protocol))
          problems.push(`${where}.protocol ${JSON.stringify(protocol)} is not TCP, UDP or SCTP`);
        if (typeof portName !== 'string') problems.push(`${where}.name must be a string`);
        // A port without a number (or 0) means "all ports", which kube-proxy does not program.
        if (p.port === undefined || p.port === null || p.port === 0) return;
        if (!isIntInRange(p.port, 1, 65535))
          problems.push(`${where}.port ${JSON.stringify(p.port)} is not in 1-65535`);
        else if (isProtocol(protocol) && typeof portName === 'string') {
          ports.push({ name: portName, port: p.port, protocol });
        }
      },
    );
    objectList<NonNullable<V1EndpointSlice['endpoints']>[number]>(
      slice.endpoints,
      'endpoints',
      problems,
    ).forEach((ep, i) => {
      const addresses: unknown = ep.addresses;
      if (addresses !== undefined && addresses !== null && !Array.isArray(addresses)) {
        problems.push(`endpoints[${i}].addresses must be a list, not ${describeValue(addresses)}`);
        return;
      }
      const first = ep.addresses?.[0];
      if (first === undefined) return; // upstream ignores endpoints without addresses
      const parsed = typeof first === 'string' ? parseIP(first) : null;
      if (parsed === null || parsed.family !== family) {
        problems.push(
          `endpoints[${i}].addresses[0] ${JSON.stringify(first)} is not an ${addressType} address`,
        );
        return;
      }
      const c = objectField(ep.conditions, `endpoints[${i}].conditions`, problems);
      const condition = (k: 'ready' | 'serving' | 'terminating', dflt: boolean): boolean => {
        const v = c[k];
        if (v === undefined || v === null) return dflt;
        if (typeof v === 'boolean') return v;
        problems.push(`endpoints[${i}].conditions.${k} must be true or false, not ${describeValue(v)}`);
        return dflt;
      };
      const hints = objectField(ep.hints, `endpoints[${i}].hints`, problems);
      endpoints.push({
        ip: parsed.ip,
        ready: condition('ready', true),
        serving: condition('serving', true),
        terminating: condition('terminating', false),
        nodeName: typeof ep.nodeName === 'string' && ep.nodeName !== '' ? ep.nodeName : null,
        zone: typeof ep.zone === 'string' && ep.zone !== '' ? ep.zone : null,
        zoneHints: names(hints.forZones, `endpoints[${i}].hints.forZones`, problems),
        nodeHints: names(hints.forNodes, `endpoints[${i}].hints.forNodes`, problems),
      });
    });
  }
  if (problems.length > 0) throw new InvalidEndpointSliceError(namespace, sliceName, problems);
  ports.sort((a, b) => a.port - b.port || cmp(a.name, b.name) || cmp(a.protocol, b.protocol));
  endpoints.sort((a, b) => cmp(a.ip, b.ip));
  const trigger = slice.metadata?.annotations?.[ANNOTATION_LAST_CHANGE_TRIGGER_TIME];
  return {
    namespace,
    sliceName,
    serviceKey: namespacedName(namespace, serviceName as string),
    family,
    ports,
    endpoints,
    lastChangeTriggerTime: typeof trigger === 'string' ? trigger : null,
    fingerprint: JSON.stringify([ports, endpoints]),
  };
}

function cmp(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
