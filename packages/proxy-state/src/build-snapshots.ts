/**
 * One-shot snapshots from a complete set of objects (a CLI reading manifests, a renderer's
 * tests): a fresh {@link ProxyState} fed everything, then checked out once.
 *
 * @module
 */
import type { V1EndpointSlice, V1Node, V1Service } from '@kubernetes/client-node';
import type { ProxyStateError } from './errors.js';
import { ProxyState, type ProxyStateOptions } from './proxy-state.js';
import type { ProxyCheckout } from './types.js';

/** Input of {@link buildProxySnapshots}. */
export interface BuildProxySnapshotsInput extends Omit<ProxyStateOptions, 'onError'> {
  /** Every Service. */
  readonly services: readonly V1Service[];
  /** Every EndpointSlice. */
  readonly endpointSlices: readonly V1EndpointSlice[];
  /** This node's Node object, if known (labels, and addresses when `nodeIPs` is empty). */
  readonly node?: V1Node;
}

/** Snapshots plus the objects that were skipped. */
export interface BuiltProxySnapshots extends ProxyCheckout {
  /** One error per skipped object, in input order (Services first). */
  readonly errors: readonly ProxyStateError[];
}

/**
 * Builds both snapshots from complete object lists; invalid objects are skipped and listed
 * in `errors`.
 *
 * @example
 * ```ts
 * const { v4, errors } = buildProxySnapshots({ nodeName: 'n1', nodeIPs: ['10.0.0.5'], services, endpointSlices });
 * ```
 */
export function buildProxySnapshots(input: BuildProxySnapshotsInput): BuiltProxySnapshots {
  const errors: ProxyStateError[] = [];
  const { services, endpointSlices, node, ...options } = input;
  const state = new ProxyState({ ...options, onError: (e) => errors.push(e) });
  if (node !== undefined) state.onNodeUpdate(node);
  for (const svc of services) state.onServiceAdd(svc);
  for (const slice of endpointSlices) state.onEndpointSliceAdd(slice);
  return { ...state.checkout(), errors };
}
