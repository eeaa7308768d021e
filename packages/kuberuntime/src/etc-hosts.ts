/**
 * The `/etc/hosts` the kubelet manages for each pod (upstream kubelet_pods.go
 * `makeHostsMount`, `ensureHostsFile`, `managedHostsFileContent`, `nodeHostsFileContent`,
 * `hostsEntriesFromHostAliases`): written to `<pods>/<uid>/etc-hosts` and bind-mounted into
 * every container that does not mount `/etc/hosts` itself, once the pod has an IP.
 *
 * @module
 */
import { chmodSync, mkdirSync, writeFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { V1Container, V1HostAlias, V1Pod } from '@kubernetes/client-node';
import { type Mount, MountPropagation } from '@nodeagent/cri';
import { podHostnameAndDomain } from './hostname.js';
import { podDirectory } from './paths.js';

/** Where containers see the file. */
export const ETC_HOSTS_PATH = '/etc/hosts';
/** First line of a pod's own hosts file. */
export const MANAGED_HOSTS_HEADER = '# Kubernetes-managed hosts file.\n';
/** First line of a host-network pod's hosts file (the node's file follows). */
export const MANAGED_HOSTS_HEADER_WITH_HOST_NETWORK = '# Kubernetes-managed hosts file (host network).\n';

/** The `hostAliases` block: an empty line, a comment, then one line per IP. */
export function hostsEntriesFromHostAliases(hostAliases: readonly V1HostAlias[] | undefined): string {
  if (hostAliases === undefined || hostAliases.length === 0) return '';
  let out = '\n# Entries added by HostAliases.\n';
  for (const a of hostAliases) out += `${a.ip}\t${(a.hostnames ?? []).join('\t')}\n`;
  return out;
}

/**
 * The hosts file of a pod with its own network: localhost entries, one line per pod IP with
 * the pod's hostname (and FQDN when it has a subdomain), then the host aliases.
 */
export function managedHostsFileContent(
  podIps: readonly string[],
  hostname: string,
  domain: string,
  hostAliases: readonly V1HostAlias[] | undefined,
): string {
  let out = MANAGED_HOSTS_HEADER;
  out += '127.0.0.1\tlocalhost\n';
  out += '::1\tlocalhost ip6-localhost ip6-loopback\n';
  out += 'fe00::0\tip6-localnet\n';
  out += 'fe00::0\tip6-mcastprefix\n';
  out += 'fe00::1\tip6-allnodes\n';
  out += 'fe00::2\tip6-allrouters\n';
  for (const ip of podIps)
    out += domain !== '' ? `${ip}\t${hostname}.${domain}\t${hostname}\n` : `${ip}\t${hostname}\n`;
  return out + hostsEntriesFromHostAliases(hostAliases);
}

/** The hosts file of a host-network pod: the header, the node's file as it is, the host aliases. */
export async function nodeHostsFileContent(
  nodeHostsFile: string,
  hostAliases: readonly V1HostAlias[] | undefined,
): Promise<Buffer> {
  const node = await readFile(nodeHostsFile);
  return Buffer.concat([
    Buffer.from(MANAGED_HOSTS_HEADER_WITH_HOST_NETWORK),
    node,
    Buffer.from(hostsEntriesFromHostAliases(hostAliases)),
  ]);
}

/** Whether the kubelet mounts its hosts file into `container`: the pod has an IP and the container does not mount /etc/hosts. */
export function shouldMountHostsFile(container: V1Container, podIps: readonly string[]): boolean {
  return podIps.length > 0 && !(container.volumeMounts ?? []).some((m) => m.mountPath === ETC_HOSTS_PATH);
}

/** Options of {@link makeHostsMount}. */
export interface HostsFileOptions {
  /** Cluster domain of pod FQDNs. @default "cluster.local" */
  readonly clusterDomain?: string | undefined;
  /** The node's hosts file, copied for host-network pods. @default "/etc/hosts" */
  readonly nodeHostsFile?: string | undefined;
}

/**
 * Writes the pod's hosts file (mode 0644, rewritten on every container start as upstream) and
 * returns its mount, or `undefined` when the container gets none (see {@link shouldMountHostsFile}).
 */
export async function makeHostsMount(
  pod: V1Pod,
  container: V1Container,
  podsRoot: string,
  podIps: readonly string[],
  options: HostsFileOptions = {},
): Promise<Mount | undefined> {
  if (!shouldMountHostsFile(container, podIps)) return undefined;
  const dir = podDirectory(podsRoot, pod.metadata?.uid ?? '');
  const file = join(dir, 'etc-hosts');
  const aliases = pod.spec?.hostAliases;
  let content: string | Buffer;
  if (pod.spec?.hostNetwork === true) {
    content = await nodeHostsFileContent(options.nodeHostsFile ?? ETC_HOSTS_PATH, aliases);
  } else {
    const { hostname, domain } = podHostnameAndDomain(pod, options.clusterDomain);
    content = managedHostsFileContent(podIps, hostname, domain, aliases);
  }
  // Synchronous, as the kubelet writes it: a few microseconds on the node's disk, where each
  // asynchronous step would wait for a thread-pool round trip right before CreateContainer.
  mkdirSync(dir, { recursive: true, mode: 0o750 });
  writeFileSync(file, content, { mode: 0o644 });
  chmodSync(file, 0o644);
  return {
    containerPath: ETC_HOSTS_PATH,
    hostPath: file,
    readonly: false,
    selinuxRelabel: true,
    propagation: MountPropagation.PROPAGATION_PRIVATE,
    uidMappings: [],
    gidMappings: [],
    recursiveReadOnly: false,
    image: undefined,
    imageSubPath: '',
  };
}
