/**
 * Which UDP conntrack entries a sync made stale, computed from the previous and the new
 * snapshot of one family (kube-proxy's `detectStaleConntrackEntries` plus deleted UDP service
 * IPs): endpoints that were ready and are gone (or no longer ready), UDP service ports that
 * went from no ready endpoint to some (their "no endpoint" REJECT may be cached in conntrack),
 * and deleted UDP service ports.
 *
 * @module
 */
import type { Endpoint, ProxySnapshot, ServicePortInfo } from '@nodeagent/proxy-state';
import type { ConntrackFilter } from './conntrack.js';

const EMPTY: readonly Endpoint[] = [];

/**
 * The filters to clear after `next` was programmed, `previous` being the snapshot programmed
 * before (undefined before the first sync). Only services in `changedServices` (default
 * `next.changedServices`; pass a union when syncs in between failed) are looked at.
 * Deterministic order, no duplicates.
 */
export function staleConntrackFilters(
  previous: ProxySnapshot | undefined,
  next: ProxySnapshot,
  changedServices: ReadonlySet<string> = next.changedServices,
): ConntrackFilter[] {
  const family = next.ipFamily;
  const out = new Map<string, ConntrackFilter>();
  const add = (f: ConntrackFilter) => out.set(JSON.stringify(f), f);
  const keys = new Set<string>();
  const collect = (snap: ProxySnapshot | undefined) => {
    if (!snap) return;
    for (const [key, info] of snap.services) {
      if (info.protocol === 'UDP' && changedServices.has(info.serviceKey)) keys.add(key);
    }
  };
  collect(previous);
  collect(next);
  for (const key of [...keys].sort()) {
    const before = previous?.services.get(key);
    const info = next.services.get(key);
    if (!info) {
      // A deleted UDP service port: every flow to its cluster IP is stale.
      if (before) add({ kind: 'ip', family, ip: before.clusterIP });
      continue;
    }
    const oldEps = previous?.endpoints.get(key) ?? EMPTY;
    const newEps = next.endpoints.get(key) ?? EMPTY;
    const readyNow = new Set(newEps.filter((e) => e.ready).map((e) => e.endpoint));
    for (const ep of oldEps) {
      // An endpoint that never was ready received no traffic, so it has no entries.
      if (!ep.ready || readyNow.has(ep.endpoint)) continue;
      for (const ip of serviceIPs(info)) add({ kind: 'nat', family, origDst: ip, dstNat: ep.ip });
      if (info.nodePort !== 0) add({ kind: 'port-nat', family, port: info.nodePort, dstNat: ep.ip });
    }
    if (readyNow.size > 0 && !oldEps.some((e) => e.ready)) {
      for (const ip of serviceIPs(info)) add({ kind: 'ip', family, ip });
      if (info.nodePort !== 0) add({ kind: 'port', family, port: info.nodePort });
    }
  }
  return [...out.values()];
}

function serviceIPs(info: ServicePortInfo): string[] {
  return [info.clusterIP, ...info.externalIPs, ...info.loadBalancerVIPs];
}
