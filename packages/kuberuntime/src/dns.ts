/**
 * A sandbox's resolver settings (upstream `pkg/kubelet/network/dns`): `ClusterFirst` (cluster
 * DNS servers, `<ns>.svc.<domain>` searches, `ndots:5`), `Default` (the node's resolv.conf),
 * `None` (only `dnsConfig`), `ClusterFirstWithHostNet`, plus the pod's `dnsConfig`.
 *
 * @module
 */
import { readFileSync } from 'node:fs';
import type { V1Pod } from '@kubernetes/client-node';
import type { DNSConfig } from '@nodeagent/cri';

/** Node-level DNS settings (kubelet `clusterDNS`, `clusterDomain`, `resolvConf`). */
export interface DnsOptions {
  /** Cluster DNS server IPs (kubelet `clusterDNS`). Without them `ClusterFirst` falls back to `Default`. @default [] */
  readonly clusterDns?: readonly string[];
  /** Cluster domain (kubelet `clusterDomain`). @default "cluster.local" */
  readonly clusterDomain?: string;
  /**
   * The node's resolver file (kubelet `resolvConf`); `''` means none: `Default` pods then get
   * `127.0.0.1` (or `::1` for IPv6 nodes) and search `.`. @default "/etc/resolv.conf"
   */
  readonly resolvConf?: string;
  /** Node IPs, for the localhost fallback when `resolvConf` is `''`. @default [] */
  readonly nodeIps?: readonly string[];
}

/** Search domains kept (upstream `MaxDNSSearchPaths`). */
export const MAX_DNS_SEARCH_PATHS = 32;
/** Characters of the search line kept (upstream `MaxDNSSearchListChars`). */
export const MAX_DNS_SEARCH_LIST_CHARS = 2048;
/** Name servers kept (upstream `MaxDNSNameservers`). */
export const MAX_DNS_NAMESERVERS = 3;

/** Parses resolv.conf text into servers, searches and options (last `search` line wins, as libc). */
export function parseResolvConf(text: string): DNSConfig {
  const servers: string[] = [];
  let searches: string[] = [];
  let options: string[] = [];
  for (const raw of text.split('\n')) {
    const line = raw.replace(/[#;].*$/, '').trim();
    const fields = line.split(/\s+/).filter((f) => f !== '');
    const [key, ...rest] = fields;
    if (key === 'nameserver' && rest[0] !== undefined) servers.push(rest[0]);
    else if (key === 'search')
      searches = rest.map((s) => (s.endsWith('.') && s !== '.' ? s.slice(0, -1) : s));
    else if (key === 'options') options = [...options, ...rest];
  }
  return { servers, searches, options };
}

function omitDuplicates(values: readonly string[]): string[] {
  return [...new Set(values)];
}

function mergeOptions(
  existing: readonly string[],
  extra: readonly { name?: string; value?: string }[],
): string[] {
  const map = new Map<string, string>();
  for (const op of existing) {
    const i = op.indexOf(':');
    if (i === -1) map.set(op, '');
    else map.set(op.slice(0, i), op.slice(i + 1));
  }
  for (const op of extra) map.set(op.name ?? '', op.value ?? '');
  return [...map].map(([k, v]) => (v === '' ? k : `${k}:${v}`));
}

function fitLimits(config: DNSConfig): DNSConfig {
  let searches = config.searches.slice(0, MAX_DNS_SEARCH_PATHS);
  while (searches.length > 0 && searches.join(' ').length > MAX_DNS_SEARCH_LIST_CHARS) {
    searches = searches.slice(0, -1);
  }
  return { ...config, servers: config.servers.slice(0, MAX_DNS_NAMESERVERS), searches };
}

type DnsType = 'None' | 'Cluster' | 'Host';

function podDnsType(pod: V1Pod): DnsType {
  const policy = pod.spec?.dnsPolicy ?? 'ClusterFirst';
  if (policy === 'None') return 'None';
  if (policy === 'ClusterFirstWithHostNet') return 'Cluster';
  if (policy === 'ClusterFirst' && pod.spec?.hostNetwork !== true) return 'Cluster';
  return 'Host';
}

function hostDnsConfig(options: DnsOptions): DNSConfig {
  const path = options.resolvConf ?? '/etc/resolv.conf';
  if (path === '') return { servers: [], searches: [], options: [] };
  return parseResolvConf(readFileSync(path, 'utf8'));
}

/** The sandbox `DNSConfig` for a pod (upstream `Configurer.GetPodDNS`). @throws when resolvConf cannot be read */
export function podDnsConfig(pod: V1Pod, options: DnsOptions = {}): DNSConfig {
  let config = hostDnsConfig(options);
  let type = podDnsType(pod);
  const clusterDns = options.clusterDns ?? [];
  if (type === 'None') config = { servers: [], searches: [], options: [] };
  if (type === 'Cluster') {
    if (clusterDns.length > 0) {
      const domain = options.clusterDomain ?? 'cluster.local';
      const ns = pod.metadata?.namespace ?? '';
      const searches =
        domain === ''
          ? config.searches
          : omitDuplicates([`${ns}.svc.${domain}`, `svc.${domain}`, domain, ...config.searches]);
      config = { servers: [...clusterDns], searches, options: ['ndots:5'] };
    } else {
      type = 'Host'; // no cluster DNS known: upstream falls back to Default
    }
  }
  if (type === 'Host' && (options.resolvConf ?? '/etc/resolv.conf') === '') {
    const servers = (options.nodeIps ?? []).map((ip) => (ip.includes(':') ? '::1' : '127.0.0.1'));
    config = { ...config, servers: servers.length > 0 ? servers : ['127.0.0.1'], searches: ['.'] };
  }
  const extra = pod.spec?.dnsConfig;
  if (extra != null) {
    config = {
      servers: omitDuplicates([...config.servers, ...(extra.nameservers ?? [])]),
      searches: omitDuplicates([...config.searches, ...(extra.searches ?? [])]),
      options: mergeOptions(config.options, extra.options ?? []),
    };
  }
  return fitLimits(config);
}
