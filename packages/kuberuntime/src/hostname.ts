/**
 * A pod's hostname and domain (upstream `GeneratePodHostNameAndDomain`, `GetNodenameForKernel`).
 *
 * @module
 */
import type { V1Pod } from '@kubernetes/client-node';

/** A hostname that cannot be used (empty after truncation, FQDN too long). */
export class InvalidHostnameError extends Error {
  override readonly name = 'InvalidHostnameError';
}

/** Longest hostname label. */
const MAX_HOSTNAME = 63;
/** Longest FQDN the kernel accepts as hostname. */
const MAX_FQDN = 64;

/** Truncates to 63 characters, then strips trailing `-` and `.` (upstream `truncatePodHostnameIfNeeded`). */
export function truncateHostname(podName: string, hostname: string): string {
  if (hostname.length <= MAX_HOSTNAME) return hostname;
  const truncated = hostname.slice(0, MAX_HOSTNAME).replace(/[-.]+$/, '');
  if (truncated === '')
    throw new InvalidHostnameError(
      `hostname for pod ${JSON.stringify(podName)} was invalid: ${JSON.stringify(hostname)}`,
    );
  return truncated;
}

/** The pod's hostname and domain (domain `''` without a subdomain). */
export function podHostnameAndDomain(
  pod: V1Pod,
  clusterDomain = 'cluster.local',
): { hostname: string; domain: string } {
  const name = pod.metadata?.name ?? '';
  const hostname = truncateHostname(name, pod.spec?.hostname || name);
  const sub = pod.spec?.subdomain;
  const domain = sub ? `${sub}.${pod.metadata?.namespace ?? ''}.svc.${clusterDomain}` : '';
  return { hostname, domain };
}

/** The hostname given to the kernel: the FQDN with `setHostnameAsFQDN`, else the short name. */
export function sandboxHostname(pod: V1Pod, clusterDomain = 'cluster.local'): string {
  const { hostname, domain } = podHostnameAndDomain(pod, clusterDomain);
  if (pod.spec?.setHostnameAsFQDN !== true || domain === '') return hostname;
  const fqdn = `${hostname}.${domain}`;
  if (fqdn.length > MAX_FQDN) {
    throw new InvalidHostnameError(
      `failed to construct FQDN from pod hostname and cluster domain, FQDN ${fqdn} is too long (${MAX_FQDN} characters is the max, ${fqdn.length} characters requested)`,
    );
  }
  return fqdn;
}
