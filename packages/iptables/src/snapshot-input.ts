/**
 * Adapting `@nodeagent/proxy-state` snapshots to the renderer's input.
 *
 * @module
 */
import type {
  CategorizedEndpoints,
  IPFamilyName,
  ProxySnapshot,
  ServicePortInfo,
} from '@nodeagent/proxy-state';
import type { IptablesServicePort } from './service-port.js';

/** The renderer's family name for a snapshot family. */
export function snapshotFamily(snapshot: Pick<ProxySnapshot, 'ipFamily'>): IPFamilyName {
  return snapshot.ipFamily === 6 ? 'IPv6' : 'IPv4';
}

/** One service port of a snapshot as renderer input. */
export function servicePortFromSnapshot(
  info: ServicePortInfo,
  cat: CategorizedEndpoints,
  totalEndpoints: number,
): IptablesServicePort {
  return {
    namespace: info.name.namespace,
    name: info.name.name,
    portName: info.name.port,
    protocol: info.protocol,
    clusterIP: info.clusterIP,
    port: info.port,
    nodePort: info.nodePort,
    externalIPs: info.externalIPs,
    loadBalancerVIPs: info.loadBalancerVIPs,
    loadBalancerSourceRanges: info.loadBalancerSourceRanges,
    healthCheckNodePort: info.healthCheckNodePort,
    ...(info.sessionAffinityClientIP ? { sessionAffinityTimeoutSeconds: info.stickyMaxAgeSeconds } : {}),
    externalPolicyLocal: info.externalPolicyLocal,
    internalPolicyLocal: info.internalPolicyLocal,
    clusterEndpoints: cat.clusterEndpoints,
    localEndpoints: cat.localEndpoints,
    hasEndpoints: cat.hasAnyEndpoints,
    totalEndpoints,
  };
}

/**
 * Converts snapshots to renderer input, returning the same object for a service port whose
 * info and categorisation are unchanged (snapshots reuse both), so the renderer's
 * per-object caches hit on partial syncs.
 */
export class SnapshotAdapter {
  readonly #cache = new WeakMap<
    ServicePortInfo,
    { cat: CategorizedEndpoints; total: number; out: IptablesServicePort }
  >();

  /** The snapshot's service ports, in snapshot order. */
  servicePorts(snapshot: ProxySnapshot): IptablesServicePort[] {
    const out: IptablesServicePort[] = [];
    for (const [key, info] of snapshot.services) {
      const cat = snapshot.categorize(key);
      const total = snapshot.endpoints.get(key)?.length ?? 0;
      const hit = this.#cache.get(info);
      if (hit && hit.cat === cat && hit.total === total) {
        out.push(hit.out);
        continue;
      }
      const sp = servicePortFromSnapshot(info, cat, total);
      this.#cache.set(info, { cat, total, out: sp });
      out.push(sp);
    }
    return out;
  }
}
