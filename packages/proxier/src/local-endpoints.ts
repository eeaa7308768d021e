/**
 * What the health-check node ports serve, from the snapshots: which services have a
 * `healthCheckNodePort`, and how many ready local endpoints each has (kube-proxy's
 * `HealthCheckNodePorts()` and `LocalReadyEndpoints()`: unique IPs, so a pod serving two
 * ports counts once).
 *
 * @module
 */
import type { ProxySnapshot } from '@nodeagent/proxy-state';

/** Services with a health-check node port (`ns/name` → port), over all given snapshots. */
export function healthCheckNodePorts(snapshots: readonly ProxySnapshot[]): Map<string, number> {
  const out = new Map<string, number>();
  for (const snap of snapshots) {
    for (const info of snap.services.values()) {
      if (info.healthCheckNodePort > 0 && !out.has(info.serviceKey))
        out.set(info.serviceKey, info.healthCheckNodePort);
    }
  }
  return out;
}

/** Ready local endpoint IPs per service, counted once per IP, for the services in `only`. */
export function localReadyEndpoints(
  snapshots: readonly ProxySnapshot[],
  only: ReadonlySet<string> | ReadonlyMap<string, unknown>,
): Map<string, number> {
  const ips = new Map<string, Set<string>>();
  for (const snap of snapshots) {
    for (const [key, info] of snap.services) {
      if (!only.has(info.serviceKey)) continue;
      for (const ep of snap.endpoints.get(key) ?? []) {
        if (!ep.ready || !ep.isLocal) continue;
        let set = ips.get(info.serviceKey);
        if (!set) {
          set = new Set();
          ips.set(info.serviceKey, set);
        }
        set.add(ep.ip);
      }
    }
  }
  return new Map([...ips].map(([k, s]) => [k, s.size]));
}
