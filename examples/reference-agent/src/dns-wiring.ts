/**
 * The kubelet's pod DNS settings as flags: `--cluster-dns`, `--cluster-domain` and
 * `--resolv-conf` (also `clusterDNS`, `clusterDomain`, `resolvConf` in `--config`), handed to
 * `@nodeagent/kuberuntime`, which writes each sandbox's resolver config from them
 * (`ClusterFirst` pods get the cluster DNS servers and `<ns>.svc.<domain>` searches).
 *
 * @module
 */
import type { Logger } from '@nodeagent/core';
import { parseIP } from '@nodeagent/core';
import type { DnsOptions } from '@nodeagent/kuberuntime';

/** The DNS flags as given. */
export interface DnsSettings {
  /** `--cluster-dns IP,...` (repeatable), as given; invalid entries are dropped with a warning at start. */
  readonly clusterDns: readonly string[];
  /** `--cluster-domain`. @default "cluster.local" */
  readonly clusterDomain: string | undefined;
  /** `--resolv-conf` (`''`: none). @default "/etc/resolv.conf" */
  readonly resolvConf: string | undefined;
}

/** `node:util` parseArgs specs of the flags. */
export const DNS_FLAG_OPTIONS = {
  'cluster-dns': { type: 'string', multiple: true },
  'cluster-domain': { type: 'string' },
  'resolv-conf': { type: 'string' },
} as const;

/** Usage lines of the flags. */
export const DNS_USAGE = `  --cluster-dns IP,...           DNS servers of ClusterFirst pods (repeatable; default none: they use --resolv-conf)
  --cluster-domain DOMAIN        cluster domain, searched by ClusterFirst pods (default cluster.local)
  --resolv-conf FILE             resolver file of Default pods and the base of others ('' for none; default /etc/resolv.conf)
`;

/** Reads the flags from `parseArgs` values. */
export function parseDnsFlags(values: Readonly<Record<string, unknown>>): DnsSettings {
  const lists = (values['cluster-dns'] as string[] | undefined) ?? [];
  return {
    clusterDns: lists
      .flatMap((v) => v.split(','))
      .map((v) => v.trim())
      .filter((v) => v !== ''),
    clusterDomain: values['cluster-domain'] as string | undefined,
    resolvConf: values['resolv-conf'] as string | undefined,
  };
}

/**
 * The runtime manager's DNS options. As the kubelet (`NewMainKubelet`), a `--cluster-dns`
 * entry that is not an IP is logged ("Invalid clusterDNS IP") and skipped, not fatal.
 */
export function dnsOptions(
  settings: DnsSettings | undefined,
  nodeIps: readonly string[],
  logger: Logger,
): DnsOptions {
  const clusterDns: string[] = [];
  for (const entry of settings?.clusterDns ?? []) {
    if (parseIP(entry) === null) logger.warn({ IP: entry }, 'Invalid clusterDNS IP');
    else clusterDns.push(entry);
  }
  return {
    clusterDns,
    ...(settings?.clusterDomain === undefined ? {} : { clusterDomain: settings.clusterDomain }),
    ...(settings?.resolvConf === undefined ? {} : { resolvConf: settings.resolvConf }),
    nodeIps,
  };
}
