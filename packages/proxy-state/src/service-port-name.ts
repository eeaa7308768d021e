/**
 * Printing service port names and endpoints the way kube-proxy prints them in rule comments
 * and hashes into chain names.
 *
 * @module
 */
import { joinHostPort } from '@nodeagent/core';
import type { ServicePortName } from './types.js';

/**
 * kube-proxy's `ServicePortName.String()`: `ns/svc:port`, or `ns/svc` when the port is unnamed.
 * The protocol is not part of the string.
 *
 * @example
 * ```ts
 * servicePortNameString({ namespace: 'ns1', name: 'svc1', port: 'p80', protocol: 'TCP' }); // 'ns1/svc1:p80'
 * ```
 */
export function servicePortNameString(spn: ServicePortName): string {
  return spn.port === '' ? `${spn.namespace}/${spn.name}` : `${spn.namespace}/${spn.name}:${spn.port}`;
}

/** The namespaced name `ns/svc` of a service. */
export function namespacedName(namespace: string, name: string): string {
  return `${namespace}/${name}`;
}

/**
 * `ip:port` as Go's `net.JoinHostPort` writes it: IPv6 addresses are bracketed (`[fd00::1]:80`).
 */
export function endpointString(ip: string, port: number): string {
  return joinHostPort(ip, port);
}
