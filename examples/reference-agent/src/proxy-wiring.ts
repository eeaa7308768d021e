/**
 * kube-proxy inside the agent: `@nodeagent/proxier` on the agent's own
 * {@link SharedInformerFactory} (one watch per resource for the kubelet half and the proxy
 * half), its healthz server (kube-proxy's `--healthz-bind-address`, here
 * `--proxy-healthz-bind-address`, default `0.0.0.0:10256`), its `kubeproxy_*` metrics on the
 * agent's `/metrics` registry, and a small metrics server as kube-proxy's
 * (`--proxy-metrics-bind-address`, default `127.0.0.1:10249`: `/metrics`, `/healthz`,
 * `/proxyMode`, plus our own `/proxyRules`).
 *
 * Modes (`--proxy-mode`): `iptables`, `nftables`, `ipvs` or `none`. The backend package of a
 * mode is loaded on demand (`loadBackendModule`). With `renderOnly` (the default on the
 * embedded fake runtime) the rules are rendered into an in-memory table set — the backends'
 * in-memory kernels from their `/testing` entry points, which apply iptables-restore and
 * nft transactions with the tools' semantics — and never reach the kernel; the current
 * rules are served on `/proxyRules`, written to `<rootDir>/proxy-rules.txt` when the agent
 * has a root dir, and logged at debug after each sync. Otherwise the real tools run, inside
 * `netns` when given (`ip netns exec` / `nsenter`).
 *
 * Dual-stack as kube-proxy (`cmd/kube-proxy/app/server_linux.go`): one backend per IP family,
 * primary first (the primary family is the first node IP's), whenever the platform supports
 * both — always when rendering only (the in-memory tools have both families); with the real
 * tools, iptables and ipvs modes need a working `ip6tables`, and a kernel without
 * `/proc/net/if_inet6` has no IPv6 — each with its own sync loop in the proxier.
 *
 * Not implemented: `ipvs` inside a netns.
 *
 * @module
 */
import { existsSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import type { V1Node } from '@kubernetes/client-node';
import {
  type Clock,
  isLoopbackIP,
  joinHostPort,
  type Logger,
  type MetricsOptions,
  parseCIDR,
  parseIP,
} from '@nodeagent/core';
import type { SharedInformerFactory } from '@nodeagent/informer';
import {
  listInterfaceAddresses,
  loadBackendModule,
  newNodePortAddresses,
  nodePodCIDRs,
  nodePortAddressIPs,
  Proxier,
  podCIDRsChanged,
  SpawnConntrackCleaner,
  waitForNodePodCIDRs,
} from '@nodeagent/proxier';
import type { DataPlaneBackend, IPFamily, LocalTrafficDetector } from '@nodeagent/proxy-state';

/** `--proxy-mode` values. */
export const PROXY_MODES = ['iptables', 'nftables', 'ipvs', 'none'] as const;
/** A `--proxy-mode` value. */
export type AgentProxyMode = (typeof PROXY_MODES)[number];

/** The proxy settings from the command line. */
export interface ProxySettings {
  /** `--proxy-mode`. */
  readonly mode: AgentProxyMode;
  /**
   * `--proxy-render-only` (ours): render the rules in memory instead of applying them.
   * @default true on the embedded fake runtime, false on a real one
   */
  readonly renderOnly?: boolean | undefined;
  /** `--proxy-netns` (ours): program the rules inside this named network namespace. @default the agent's */
  readonly netns?: string | undefined;
  /** kube-proxy's `--cluster-cidr` (comma-separated in the flag): local traffic detection. @default none */
  readonly clusterCIDRs?: readonly string[] | undefined;
  /**
   * kube-proxy's `--detect-local-mode`: how traffic from this node's pods is told apart.
   * `ClusterCIDR` (any pod of the cluster, `--cluster-cidr`), `NodeCIDR` (this node's pod CIDR:
   * the Node's `spec.podCIDRs`, waited for up to 5 minutes as kube-proxy waits), `BridgeInterface` (`--pod-bridge-interface`),
   * `InterfaceNamePrefix` (`--pod-interface-name-prefix`).
   * @default ClusterCIDR when a cluster CIDR is given, else no detection
   */
  readonly detectLocalMode?: DetectLocalMode | undefined;
  /** kube-proxy's `--pod-bridge-interface` (with `--detect-local-mode BridgeInterface`). */
  readonly podBridgeInterface?: string | undefined;
  /** kube-proxy's `--pod-interface-name-prefix` (with `--detect-local-mode InterfaceNamePrefix`). */
  readonly podInterfaceNamePrefix?: string | undefined;
  /**
   * kube-proxy's `--nodeport-addresses`: CIDRs or `primary` (the node IP of each family). Per
   * family, the local interface addresses inside its CIDRs; a family with no CIDR of its own
   * accepts NodePorts on every local address.
   * @default every local address (nftables: `primary`, as kube-proxy)
   */
  readonly nodePortAddresses?: readonly string[] | undefined;
  /** kube-proxy's `--masquerade-all`. @default false */
  readonly masqueradeAll?: boolean | undefined;
  /** kube-proxy's `--healthz-bind-address` (`--proxy-healthz-bind-address`); `''` disables. @default '0.0.0.0:10256' */
  readonly healthzBindAddress?: string | undefined;
  /** kube-proxy's `--metrics-bind-address` (`--proxy-metrics-bind-address`); `''` disables. @default '127.0.0.1:10249' */
  readonly metricsBindAddress?: string | undefined;
  /** kube-proxy's `--iptables-min-sync-period`, ms. @default 1000 */
  readonly minSyncPeriodMs?: number | undefined;
  /** kube-proxy's `--iptables-sync-period`, ms. @default 30000 */
  readonly syncPeriodMs?: number | undefined;
}

/** kube-proxy's `--detect-local-mode` values. */
export const DETECT_LOCAL_MODES = [
  'ClusterCIDR',
  'NodeCIDR',
  'BridgeInterface',
  'InterfaceNamePrefix',
] as const;
/** A `--detect-local-mode` value. */
export type DetectLocalMode = (typeof DETECT_LOCAL_MODES)[number];

/** kube-proxy's `--healthz-bind-address` default. */
export const DEFAULT_PROXY_HEALTHZ_BIND_ADDRESS = '0.0.0.0:10256';
/** kube-proxy's `--metrics-bind-address` default. */
export const DEFAULT_PROXY_METRICS_BIND_ADDRESS = '127.0.0.1:10249';

/** A proxy setting the agent cannot run with; the message names the flag. */
export class ProxyConfigError extends Error {
  override readonly name = 'ProxyConfigError';
}

/** `node:util` parseArgs specs of the flags. */
export const PROXY_FLAG_OPTIONS = {
  'proxy-mode': { type: 'string' },
  'proxy-render-only': { type: 'string' },
  'proxy-netns': { type: 'string' },
  'cluster-cidr': { type: 'string' },
  'detect-local-mode': { type: 'string' },
  'pod-bridge-interface': { type: 'string' },
  'pod-interface-name-prefix': { type: 'string' },
  'nodeport-addresses': { type: 'string' },
  'masquerade-all': { type: 'string' },
  'proxy-healthz-bind-address': { type: 'string' },
  'proxy-metrics-bind-address': { type: 'string' },
} as const;

/** Go bool flags that may be given bare (`--masquerade-all` means `--masquerade-all=true`). */
export const PROXY_BOOL_FLAGS: readonly string[] = ['--masquerade-all'];

/** Usage lines of the flags. */
export const PROXY_USAGE = `  --proxy-mode iptables|nftables|ipvs|none   kube-proxy in the agent (default: iptables, rendered only, on the
                                        embedded runtime; none on a real runtime)
  --proxy-render-only true|false        render the rules in memory, never apply them (default true on the embedded runtime)
  --proxy-netns NAME                    program the rules inside network namespace NAME
  --cluster-cidr CIDR[,CIDR]            kube-proxy's: pod traffic from these is local (default none)
  --detect-local-mode MODE              kube-proxy's: ClusterCIDR|NodeCIDR|BridgeInterface|InterfaceNamePrefix
                                        (default ClusterCIDR with --cluster-cidr; NodeCIDR: this node's pod CIDR)
  --pod-bridge-interface NAME           kube-proxy's: the pods' bridge, for BridgeInterface
  --pod-interface-name-prefix PREFIX    kube-proxy's: the pods' interface prefix, for InterfaceNamePrefix
  --nodeport-addresses CIDR|primary,... kube-proxy's: the local addresses inside these CIDRs answer NodePorts, per family
                                        (a family without a CIDR: all; default all, nftables: primary)
  --masquerade-all[=BOOL]               kube-proxy's: SNAT all service traffic
  --proxy-healthz-bind-address ADDR     kube-proxy's --healthz-bind-address (default 0.0.0.0:10256; '' off)
  --proxy-metrics-bind-address ADDR     kube-proxy's --metrics-bind-address (default 127.0.0.1:10249; '' off)
`;

/**
 * Reads the flags from `parseArgs` values.
 * @returns undefined when no proxy flag was given (the agent picks its default)
 * @throws ProxyConfigError naming the flag
 */
export function parseProxyFlags(values: Readonly<Record<string, unknown>>): ProxySettings | undefined {
  const str = (k: string) => values[k] as string | undefined;
  if (Object.keys(PROXY_FLAG_OPTIONS).every((k) => values[k] === undefined)) return undefined;
  const mode = str('proxy-mode') ?? 'iptables';
  if (!(PROXY_MODES as readonly string[]).includes(mode)) {
    throw new ProxyConfigError(`--proxy-mode: expected iptables|nftables|ipvs|none, got "${mode}"`);
  }
  const renderText = str('proxy-render-only');
  if (renderText !== undefined && renderText !== 'true' && renderText !== 'false') {
    throw new ProxyConfigError(`--proxy-render-only: expected true|false, got "${renderText}"`);
  }
  const list = (k: string) =>
    (str(k) ?? '')
      .split(',')
      .map((x) => x.trim())
      .filter((x) => x !== '');
  const clusterCIDRs = list('cluster-cidr');
  for (const c of clusterCIDRs) {
    if (parseCIDR(c) === null) throw new ProxyConfigError(`--cluster-cidr: "${c}" is not a CIDR`);
  }
  const detectLocalMode = str('detect-local-mode');
  if (detectLocalMode !== undefined && !(DETECT_LOCAL_MODES as readonly string[]).includes(detectLocalMode)) {
    throw new ProxyConfigError(
      `--detect-local-mode: Unsupported value: "${detectLocalMode}": supported values: ${DETECT_LOCAL_MODES.map((m) => `"${m}"`).join(', ')}`,
    );
  }
  const podBridgeInterface = str('pod-bridge-interface');
  const podInterfaceNamePrefix = str('pod-interface-name-prefix');
  if (detectLocalMode === 'BridgeInterface' && !podBridgeInterface) {
    throw new ProxyConfigError(
      '--pod-bridge-interface: Required value: must not be empty with --detect-local-mode BridgeInterface',
    );
  }
  if (detectLocalMode === 'InterfaceNamePrefix' && !podInterfaceNamePrefix) {
    throw new ProxyConfigError(
      '--pod-interface-name-prefix: Required value: must not be empty with --detect-local-mode InterfaceNamePrefix',
    );
  }
  const nodePortAddresses = list('nodeport-addresses');
  for (const c of nodePortAddresses) {
    if (c !== 'primary' && parseCIDR(c) === null)
      throw new ProxyConfigError(`--nodeport-addresses: "${c}" is neither a CIDR nor "primary"`);
  }
  const masq = str('masquerade-all');
  if (masq !== undefined && masq !== 'true' && masq !== 'false') {
    throw new ProxyConfigError(`--masquerade-all: expected true|false, got "${masq}"`);
  }
  const netns = str('proxy-netns');
  if (netns !== undefined && !/^[A-Za-z0-9_.-]{1,64}$/.test(netns)) {
    throw new ProxyConfigError(`--proxy-netns: "${netns}" is not a network namespace name`);
  }
  for (const k of ['proxy-healthz-bind-address', 'proxy-metrics-bind-address']) {
    const a = str(k);
    if (a !== undefined && a !== '' && splitHostPort(a) === undefined)
      throw new ProxyConfigError(`--${k}: "${a}" is not host:port`);
  }
  return {
    mode: mode as AgentProxyMode,
    renderOnly: renderText === undefined ? undefined : renderText === 'true',
    netns,
    clusterCIDRs,
    detectLocalMode: detectLocalMode as DetectLocalMode | undefined,
    podBridgeInterface,
    podInterfaceNamePrefix,
    nodePortAddresses,
    masqueradeAll: masq === 'true',
    healthzBindAddress: str('proxy-healthz-bind-address'),
    metricsBindAddress: str('proxy-metrics-bind-address'),
  };
}

function splitHostPort(address: string): { host: string; port: number } | undefined {
  const m = /^(?:\[([^\]]*)\]|([^:]*)):([0-9]{1,5})$/.exec(address);
  if (!m || Number(m[3]) > 65535) return undefined;
  return { host: m[1] ?? m[2] ?? '', port: Number(m[3]) };
}

/** The proxy half of a running agent. */
export interface AgentProxy {
  /** The mode in use. */
  readonly mode: Exclude<AgentProxyMode, 'none'>;
  /** True when the rules are rendered in memory only. */
  readonly renderOnly: boolean;
  /** The proxier. */
  readonly proxier: Proxier;
  /** kube-proxy's healthz URL (`…/healthz`), when enabled. */
  readonly healthzUrl: string | undefined;
  /** The metrics server's base URL (`/metrics`, `/proxyMode`, `/proxyRules`), when enabled. */
  readonly metricsUrl: string | undefined;
  /** The file the rendered rules are written to after each sync, when the agent has a root dir. */
  readonly rulesFile: string | undefined;
  /** The rules as they are now: iptables-save text, or (nftables) the table as JSON. */
  rules(): Promise<string>;
  /** Stops the proxier (the rules stay, as kube-proxy leaves them) and the metrics server. */
  stop(): Promise<void>;
}

/** What {@link startAgentProxy} needs from the agent. */
export interface AgentProxyOptions {
  /** The settings. */
  readonly settings: ProxySettings;
  /** This node. */
  readonly nodeName: string;
  /** This node's IPs, primary first (else taken from the Node object). */
  readonly nodeIPs: readonly string[];
  /**
   * This node's Node object as the agent's informer has it. With `--detect-local-mode NodeCIDR`
   * the proxy waits for it to have `spec.podCIDRs` before it builds its backends, as
   * kube-proxy's `NodeManager` waits (1 s polls, 5 minutes, then `NodeWaitTimeoutError` with kube-proxy's last reason).
   */
  readonly node?: (() => V1Node | undefined) | undefined;
  /**
   * Static pod CIDRs for `--detect-local-mode NodeCIDR` when no {@link node} getter is given
   * (no wait then: a family without a CIDR gets no local-traffic detection). @default none
   */
  readonly podCIDRs?: readonly string[] | undefined;
  /** The NodeCIDR wait's timeout, ms. @default 300000 (kube-proxy's 5 minutes) */
  readonly nodeWaitTimeoutMs?: number | undefined;
  /** The NodeCIDR wait's poll interval, ms. @default 1000 (kube-proxy's) */
  readonly nodePollIntervalMs?: number | undefined;
  /**
   * The local interface addresses `--nodeport-addresses` CIDRs select from (kube-proxy's
   * `GetNodeIPs` over `net.InterfaceAddrs()`).
   * @default the interfaces of the proxy's network namespace (`--proxy-netns`, else the agent's)
   */
  readonly interfaceAddresses?: (() => Promise<readonly string[]>) | undefined;
  /** The agent's informer factory (started by the agent). */
  readonly informers: SharedInformerFactory;
  /** The agent's `/metrics` registry. */
  readonly metrics: MetricsOptions;
  /** The agent's `/metrics` text, served again on the proxy metrics server. */
  readonly metricsText: MetricsText;
  /** The agent's `--root-dir`, if any. */
  readonly rootDir: string | undefined;
  /** Whether the agent runs the embedded fake runtime (render-only default). */
  readonly embeddedRuntime: boolean;
  /**
   * When a defaulted bind address (healthz 10256, metrics 10249) is taken, listen on a free
   * port instead, with a warning (the embedded demo, as the kubelet server's ports). @default false
   */
  readonly fallbackToFreePort?: boolean | undefined;
  /** Signal bounding the wait for the informers. */
  readonly signal?: AbortSignal | undefined;
  /**
   * Which IP families the real tools can program (kube-proxy's `platformCheckSupported`); not
   * asked when rendering only. @default {@link platformCheckSupported}
   */
  readonly platform?:
    | ((
        mode: Exclude<AgentProxyMode, 'none'>,
        netns: string | undefined,
        log: Logger,
      ) => Promise<{ readonly ipv4: boolean; readonly ipv6: boolean }>)
    | undefined;
  /** @default realClock */
  readonly clock?: Clock | undefined;
  /** @default noopLogger */
  readonly logger: Logger;
}

interface BuiltBackend {
  readonly backend: DataPlaneBackend;
  readonly rules: () => Promise<string>;
}

/** The mode's backend with in-memory executors: rendered, never applied. */
async function renderOnlyBackend(
  mode: Exclude<AgentProxyMode, 'none'>,
  render: RenderCommon,
  family: IPFamily,
  log: Logger,
): Promise<BuiltBackend> {
  const fam = family === 6 ? 'ipv6' : 'ipv4';
  switch (mode) {
    case 'iptables': {
      const ipt = await loadBackendModule('iptables');
      const { FakeIptablesExecutor } = await import('@nodeagent/iptables/testing');
      const executor = new FakeIptablesExecutor({ family: family === 6 ? 'IPv6' : 'IPv4' });
      const backend = new ipt.IptablesBackend({
        [fam]: { executor, render: { ...render, localhostNodePorts: false } },
        canary: false,
        logger: log,
      });
      return { backend, rules: () => executor.save() };
    }
    case 'nftables': {
      const nft = await loadBackendModule('nftables');
      const { FakeNftExecutor, dumpTable } = await import('@nodeagent/nftables/testing');
      const executor = new FakeNftExecutor();
      const backend = new nft.NftablesBackend({ [fam]: { executor }, render, logger: log });
      const table = family === 6 ? 'ip6' : 'ip';
      return {
        backend,
        rules: async () =>
          `${JSON.stringify(dumpTable(executor.state.table(table, 'kube-proxy')), null, 2)}\n`,
      };
    }
    case 'ipvs': {
      // IPVS's in-memory kernel (virtual servers, ipsets, kube-ipvs0 addresses) and iptables'
      // for the residual rules: the IPVS plan, ipsets and iptables text, never applied.
      const ipvs = await loadBackendModule('ipvs');
      await loadBackendModule('iptables', { forMode: 'ipvs' });
      const { FakeIpvsExecutor } = await import('@nodeagent/ipvs/testing');
      const { FakeIptablesExecutor } = await import('@nodeagent/iptables/testing');
      const executor = new FakeIpvsExecutor();
      const iptables = new FakeIptablesExecutor({ family: family === 6 ? 'IPv6' : 'IPv4' });
      const backend = new ipvs.IpvsBackend({
        [fam]: { executor, iptables, stats: executor },
        plan: render,
        logger: log,
      });
      return {
        backend,
        rules: async () => {
          const state = await executor.read();
          return (
            '# --- ipvsadm-restore: IPVS virtual and real servers ---\n' +
            ipvs.renderIpvsadmRestore(state) +
            '# --- ipset restore: kube-proxy ipsets ---\n' +
            ipvs.renderIpsetRestore(state.ipsets) +
            '# --- addresses on kube-ipvs0 ---\n' +
            state.boundAddresses.map((a) => `${a}\n`).join('') +
            '# --- iptables-save: residual iptables rules ---\n' +
            (await iptables.save())
          );
        },
      };
    }
  }
}

/** The mode's backend with the real tools (inside `netns` when given). */
async function realBackend(
  mode: Exclude<AgentProxyMode, 'none'>,
  render: RenderCommon,
  family: IPFamily,
  netns: string | undefined,
  log: Logger,
): Promise<BuiltBackend> {
  const fam = family === 6 ? 'ipv6' : 'ipv4';
  switch (mode) {
    case 'iptables': {
      const ipt = await loadBackendModule('iptables');
      const executor = new ipt.SpawnIptablesExecutor({
        family: family === 6 ? 'IPv6' : 'IPv4',
        ...(netns !== undefined ? { netns } : {}),
      });
      const backend = new ipt.IptablesBackend({
        [fam]: { executor, render: { ...render, localhostNodePorts: false } },
        logger: log,
      });
      return { backend, rules: () => executor.save() };
    }
    case 'nftables': {
      const nft = await loadBackendModule('nftables');
      const executor = new nft.SpawnNftExecutor(netns !== undefined ? { netns } : {});
      const backend = new nft.NftablesBackend({ [fam]: { executor }, render, logger: log });
      return {
        backend,
        rules: async () => `see: nft list table ${family === 6 ? 'ip6' : 'ip'} kube-proxy\n`,
      };
    }
    case 'ipvs': {
      if (netns !== undefined)
        throw new ProxyConfigError('--proxy-netns: not implemented for --proxy-mode ipvs');
      const ipvs = await loadBackendModule('ipvs');
      const ipt = await loadBackendModule('iptables', { forMode: 'ipvs' });
      const executor = new ipvs.SpawnIpvsExecutor();
      await ipvs.prepareIpvsNode({ executor, sysctl: new ipvs.ProcSysctl() });
      const iptables = new ipt.SpawnIptablesExecutor({ family: family === 6 ? 'IPv6' : 'IPv4' });
      const backend = new ipvs.IpvsBackend({
        [fam]: { executor, iptables, stats: executor },
        plan: render,
        logger: log,
      });
      return { backend, rules: () => iptables.save() };
    }
  }
}

interface RenderCommon {
  readonly masqueradeAll: boolean;
  readonly localDetector: LocalTrafficDetector;
  readonly nodePortIPs?: readonly string[];
}

/**
 * The local-traffic detector of `--detect-local-mode` for `family`, as kube-proxy's
 * `getLocalDetectors`: `ClusterCIDR` (the default) from `--cluster-cidr`, `NodeCIDR` from this
 * node's pod CIDR of that family; no CIDR of the family means no detection for it (logged for
 * `NodeCIDR`, as kube-proxy does).
 */
export function localTrafficDetector(
  settings: Pick<
    ProxySettings,
    'detectLocalMode' | 'clusterCIDRs' | 'podBridgeInterface' | 'podInterfaceNamePrefix'
  >,
  family: IPFamily,
  podCIDRs: readonly string[],
  log?: Logger,
): LocalTrafficDetector {
  const ofFamily = (cidrs: readonly string[]) => cidrs.find((c) => parseCIDR(c)?.family === family);
  switch (settings.detectLocalMode ?? 'ClusterCIDR') {
    case 'NodeCIDR': {
      const cidr = ofFamily(podCIDRs);
      if (cidr !== undefined) return { mode: 'NodeCIDR', cidr };
      log?.info(
        { ipFamily: `IPv${family}` },
        'Detect-local-mode set to NodeCIDR, but no PodCIDR defined at node for family',
      );
      return { mode: 'None' };
    }
    case 'BridgeInterface':
      return { mode: 'BridgeInterface', interfaceName: settings.podBridgeInterface ?? '' };
    case 'InterfaceNamePrefix':
      return { mode: 'InterfaceNamePrefix', interfacePrefix: settings.podInterfaceNamePrefix ?? '' };
    default: {
      const cidr = ofFamily(settings.clusterCIDRs ?? []);
      return cidr !== undefined ? { mode: 'ClusterCIDR', cidr } : { mode: 'None' };
    }
  }
}

/**
 * `--nodeport-addresses` for one family as kube-proxy resolves it: `primary` expanded to the
 * node IP of each family (not loopback) as a /32 or /128 (`newProxyServer`), the result
 * through `NewNodePortAddresses` (no CIDR of this family: the zero CIDR, every local address)
 * and, unless it matches everything, `GetNodeIPs`: the local interface addresses inside the
 * CIDRs. Loopback addresses are left out with kube-proxy's error line (the agent has no
 * localhost NodePorts). nftables mode defaults to `primary` (kube-proxy's `platformApplyDefaults`).
 * @returns undefined for "every local address" (the backends' `addrtype LOCAL` /
 *   `fib daddr type local` form), else the addresses (possibly none)
 */
export async function nodePortIPs(
  addresses: readonly string[],
  mode: Exclude<AgentProxyMode, 'none'>,
  nodeIPs: readonly string[],
  family: IPFamily,
  interfaceAddresses: () => Promise<readonly string[]>,
  log?: Logger,
): Promise<readonly string[] | undefined> {
  const list = addresses.length === 0 && mode === 'nftables' ? ['primary'] : addresses;
  const cidrs: string[] = [];
  for (const a of list) {
    if (a !== 'primary') {
      cidrs.push(a);
      continue;
    }
    for (const f of [4, 6] as const) {
      const ip = nodeIPs.map((t) => parseIP(t)).find((p) => p?.family === f);
      if (ip && !isLoopbackIP(ip.ip)) cidrs.push(`${ip.ip}/${f === 4 ? 32 : 128}`);
    }
  }
  const npa = newNodePortAddresses(family, cidrs);
  if (npa.matchAll) return undefined;
  const out: string[] = [];
  for (const ip of nodePortAddressIPs(npa, await interfaceAddresses())) {
    if (!isLoopbackIP(ip)) out.push(ip);
    else if (family === 6)
      log?.error(
        { address: ip },
        '--nodeport-addresses includes localhost but localhost NodePorts are not supported on IPv6',
      );
    else
      log?.error(
        { address: ip },
        mode === 'iptables'
          ? '--nodeport-addresses includes localhost but --iptables-localhost-nodeports=false was passed'
          : '--nodeport-addresses includes localhost but localhost NodePorts are not supported',
      );
  }
  return out;
}

/**
 * kube-proxy's `platformCheckSupported` (`server_linux.go`) for the real tools: iptables and
 * ipvs modes support a family when its `iptables`/`ip6tables` lists the nat table (in `netns`
 * when given); nftables supports both; no `/proc/net/if_inet6` means no IPv6.
 * @throws ProxyConfigError "iptables is not available on this host" when neither works
 */
export async function platformCheckSupported(
  mode: Exclude<AgentProxyMode, 'none'>,
  netns: string | undefined,
  log: Logger,
): Promise<{ ipv4: boolean; ipv6: boolean }> {
  let ipv4 = true;
  let ipv6 = true;
  if (mode === 'iptables' || mode === 'ipvs') {
    const ipt = await loadBackendModule('iptables', { forMode: mode });
    const present = async (family: 'IPv4' | 'IPv6') => {
      try {
        const ex = new ipt.SpawnIptablesExecutor({ family, ...(netns !== undefined ? { netns } : {}) });
        return await ex.chainExists('nat', 'POSTROUTING');
      } catch {
        return false;
      }
    };
    [ipv4, ipv6] = await Promise.all([present('IPv4'), present('IPv6')]);
    if (!ipv4 && !ipv6) throw new ProxyConfigError('iptables is not available on this host');
    if (!ipv4) log.info({ ipFamily: 'IPv4' }, 'No iptables support for family');
    else if (!ipv6) log.info({ ipFamily: 'IPv6' }, 'No iptables support for family');
  }
  if (!existsSync('/proc/net/if_inet6')) {
    log.info({ ipFamily: 'IPv6' }, 'No kernel support for family');
    ipv6 = false;
  }
  return { ipv4, ipv6 };
}

/**
 * Starts the proxier on the agent's informer factory. Resolves once its informers synced and
 * the first sync was requested (the factory must be started by the agent meanwhile).
 * @throws ProxyConfigError for settings the agent cannot run; BackendNotInstalledError for a missing backend package
 */
export async function startAgentProxy(options: AgentProxyOptions): Promise<AgentProxy> {
  const { settings, logger } = options;
  const log = logger.child({ component: 'kube-proxy' });
  if (settings.mode === 'none') throw new ProxyConfigError('--proxy-mode none: no proxy to start');
  const mode = settings.mode;
  const renderOnly = settings.renderOnly ?? options.embeddedRuntime;
  const primaryIP = options.nodeIPs.map((ip) => parseIP(ip)).find((p) => p !== null);
  const primary: IPFamily = primaryIP?.family ?? 4;
  const secondary: IPFamily = primary === 4 ? 6 : 4;
  const support = renderOnly
    ? { ipv4: true, ipv6: true }
    : await (options.platform ?? platformCheckSupported)(mode, settings.netns, log);
  const supported = (f: IPFamily) => (f === 4 ? support.ipv4 : support.ipv6);
  if (!supported(primary)) throw new ProxyConfigError(`no support for primary IP family "IPv${primary}"`);
  const families: IPFamily[] = supported(secondary) ? [primary, secondary] : [primary];
  if (families.length === 2)
    log.info({ primaryIpFamily: `IPv${primary}` }, 'kube-proxy running in dual-stack mode');
  else log.info({ ipFamily: `IPv${primary}` }, 'kube-proxy running in single-stack mode');
  // kube-proxy's NodeManager: with NodeCIDR, no proxier before the Node has its PodCIDRs.
  let podCIDRs = options.podCIDRs ?? [];
  const nodeGetter = options.node;
  if (settings.detectLocalMode === 'NodeCIDR' && nodeGetter !== undefined) {
    const node = await waitForNodePodCIDRs({
      nodeName: options.nodeName,
      getNode: nodeGetter,
      ...(options.nodeWaitTimeoutMs !== undefined ? { timeoutMs: options.nodeWaitTimeoutMs } : {}),
      ...(options.nodePollIntervalMs !== undefined ? { pollIntervalMs: options.nodePollIntervalMs } : {}),
      signal: options.signal,
      ...(options.clock ? { clock: options.clock } : {}),
      logger: log,
    });
    podCIDRs = nodePodCIDRs(node);
    log.info({ node: options.nodeName, podCIDRs }, 'Successfully retrieved the PodCIDRs of the node');
  }
  let addressCache: Promise<readonly string[]> | undefined;
  const interfaceAddresses = () => {
    addressCache ??=
      options.interfaceAddresses?.() ??
      listInterfaceAddresses(renderOnly || settings.netns === undefined ? {} : { netns: settings.netns });
    return addressCache;
  };
  const perFamily: BuiltBackend[] = [];
  for (const family of families) {
    const ports = await nodePortIPs(
      settings.nodePortAddresses ?? [],
      mode,
      options.nodeIPs,
      family,
      interfaceAddresses,
      log,
    );
    if (ports !== undefined) log.info({ ipFamily: `IPv${family}`, addresses: ports }, 'NodePort addresses');
    const render: RenderCommon = {
      masqueradeAll: settings.masqueradeAll ?? false,
      localDetector: localTrafficDetector(settings, family, podCIDRs, log),
      ...(ports !== undefined ? { nodePortIPs: ports } : {}),
    };
    const flog = log.child({ ipFamily: `IPv${family}` });
    perFamily.push(
      renderOnly
        ? await renderOnlyBackend(mode, render, family, flog)
        : await realBackend(mode, render, family, settings.netns, flog),
    );
  }
  const built = {
    backends: perFamily.map((b) => b.backend),
    // The primary family's rules first, then the other's.
    rules: async () => (await Promise.all(perFamily.map((b) => b.rules()))).join(''),
  };
  const fallback = options.fallbackToFreePort === true;
  const healthzAddress =
    settings.healthzBindAddress ?? (await freeOr(DEFAULT_PROXY_HEALTHZ_BIND_ADDRESS, fallback, log));
  const metricsAddress =
    settings.metricsBindAddress ?? (await freeOr(DEFAULT_PROXY_METRICS_BIND_ADDRESS, fallback, log));
  const proxier = new Proxier({
    nodeName: options.nodeName,
    backend: built.backends,
    informerFactory: options.informers,
    ...(options.nodeIPs.length > 0 ? { nodeIPs: options.nodeIPs } : {}),
    healthz: healthzAddress === '' ? false : { bindAddress: healthzAddress },
    // Render-only and inside a netns: nothing of ours would route to a host port or conntrack entry.
    ...(renderOnly || settings.netns !== undefined ? { healthCheckNodePorts: false as const } : {}),
    ...(renderOnly
      ? { conntrack: false as const }
      : settings.netns !== undefined
        ? { conntrack: new SpawnConntrackCleaner({ netns: settings.netns }) }
        : {}),
    ...(settings.minSyncPeriodMs !== undefined ? { minSyncPeriodMs: settings.minSyncPeriodMs } : {}),
    ...(settings.syncPeriodMs !== undefined ? { syncPeriodMs: settings.syncPeriodMs } : {}),
    metrics: options.metrics,
    ...(options.clock ? { clock: options.clock } : {}),
    logger: log,
  });
  proxier.on('objectError', (err) => log.warn({ err: err.message }, 'invalid object skipped'));
  proxier.on('renderError', (err) => log.warn({ err: String(err) }, 'service port skipped'));
  proxier.on('syncError', (err) => log.warn({ err: String(err) }, 'proxy sync failed'));
  if (settings.detectLocalMode === 'NodeCIDR' && nodeGetter !== undefined) {
    // kube-proxy's NodeManager exits when the PodCIDRs change; the agent (the kubelet half runs
    // in the same process) logs it and keeps the CIDRs it started with until it is restarted.
    let current = podCIDRs;
    proxier.on('nodeChanged', (node) => {
      const now = nodePodCIDRs(node);
      if (!podCIDRsChanged(current, now)) return;
      log.error(
        { node: options.nodeName, newPodCIDRs: now, oldPodCIDRs: current, keeping: current },
        'PodCIDRs changed for the node',
      );
      current = now;
    });
  }
  const rulesFile =
    renderOnly && options.rootDir !== undefined ? join(options.rootDir, 'proxy-rules.txt') : undefined;
  let writing = Promise.resolve();
  proxier.on('synced', (r) => {
    if (!renderOnly) return;
    writing = writing
      .then(async () => {
        const text = await built.rules();
        log.debug({ full: r.full, failed: r.failed, rules: text }, 'proxy rules rendered (not applied)');
        if (rulesFile !== undefined) await writeFile(rulesFile, text);
      })
      .catch((err: Error) =>
        log.warn({ err: err.message, file: rulesFile }, 'cannot write the rendered proxy rules'),
      );
  });
  const metricsServer = await startProxyMetricsServer(metricsAddress, mode, options.metricsText, built.rules);
  try {
    await proxier.start(options.signal);
  } catch (err) {
    await closeServer(metricsServer);
    throw err;
  }
  const healthPort = proxier.healthz?.port;
  const hzHost = healthzAddress === '' ? '' : (splitHostPort(healthzAddress)?.host ?? '');
  const urlHost = (host: string) =>
    host === '' || host === '0.0.0.0' ? '127.0.0.1' : host === '::' ? '::1' : host;
  log.info({ mode, renderOnly, netns: settings.netns }, 'kube-proxy running in the agent');
  return {
    mode,
    renderOnly,
    proxier,
    healthzUrl:
      healthPort !== undefined ? `http://${joinHostPort(urlHost(hzHost), healthPort)}/healthz` : undefined,
    metricsUrl: metricsServer?.url,
    rulesFile,
    rules: built.rules,
    stop: async () => {
      await proxier.stop();
      await writing;
      await closeServer(metricsServer);
    },
  };
}

/** A metrics text source (the agent's `/metrics` registry). */
export interface MetricsText {
  /** The exposition content type. @default Prometheus text 0.0.4 */
  readonly contentType?: string | undefined;
  /** The exposition text. */
  metrics(): Promise<string>;
}

/** `address`, or the same host with port 0 when `fallback` and the port is taken. */
async function freeOr(address: string, fallback: boolean, log: Logger): Promise<string> {
  if (!fallback) return address;
  const hp = splitHostPort(address);
  if (!hp) return address;
  const free = await new Promise<boolean>((resolve) => {
    const probe = createServer();
    probe.once('error', () => resolve(false));
    probe.listen(hp.port, hp.host === '' ? undefined : hp.host, () => probe.close(() => resolve(true)));
  });
  if (free) return address;
  log.warn({ address }, 'kube-proxy port in use: the embedded demo listens on a free port instead');
  return joinHostPort(hp.host, 0);
}

interface ProxyMetricsServer {
  readonly server: Server;
  readonly url: string;
}

async function closeServer(s: ProxyMetricsServer | undefined): Promise<void> {
  if (!s) return;
  s.server.closeAllConnections();
  await new Promise<void>((resolve) => s.server.close(() => resolve()));
}

/** kube-proxy's metrics server (`/metrics`, `/healthz`, `/proxyMode`) plus our `/proxyRules`. */
async function startProxyMetricsServer(
  address: string,
  mode: string,
  registry: MetricsText,
  rules: () => Promise<string>,
): Promise<ProxyMetricsServer | undefined> {
  if (address === '') return undefined;
  const hp = splitHostPort(address);
  if (!hp) throw new ProxyConfigError(`--proxy-metrics-bind-address: "${address}" is not host:port`);
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const path = (req.url ?? '/').split('?')[0];
    const send = (code: number, type: string, body: string) => {
      res.writeHead(code, { 'Content-Type': type, 'X-Content-Type-Options': 'nosniff' });
      res.end(body);
    };
    const text = 'text/plain; charset=utf-8';
    if (path === '/healthz') return send(200, text, 'ok');
    if (path === '/proxyMode') return send(200, text, mode);
    if (path === '/proxyRules') {
      rules().then(
        (t) => send(200, text, t),
        (e: Error) => send(500, text, e.message),
      );
      return;
    }
    if (path === '/metrics') {
      registry.metrics().then(
        (t) => send(200, registry.contentType ?? 'text/plain; version=0.0.4; charset=utf-8', t),
        (e: Error) => send(500, text, e.message),
      );
      return;
    }
    send(404, text, '404 page not found\n');
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', (e) =>
      reject(new ProxyConfigError(`--proxy-metrics-bind-address ${address}: ${(e as Error).message}`)),
    );
    server.listen(hp.port, hp.host === '' ? undefined : hp.host, () => resolve());
  });
  const port = (server.address() as AddressInfo).port;
  const host = hp.host === '' || hp.host === '0.0.0.0' ? '127.0.0.1' : hp.host === '::' ? '::1' : hp.host;
  return { server, url: `http://${joinHostPort(host, port)}` };
}

/**
 * One line per service port of rendered iptables rules: its endpoints (the DNAT targets of its
 * KUBE-SEP chains) or `no endpoints (REJECT)` (kube-proxy's "has no endpoints" rule).
 * @param text iptables-save text
 */
export function summarizeIptablesRules(text: string): string[] {
  const eps = new Map<string, string[]>();
  for (const m of text.matchAll(
    /^-A KUBE-SEP-[A-Z2-7]{16} -m comment --comment "?([^"\s]+)"? .*-j DNAT --to-destination (\S+)$/gm,
  )) {
    const name = m[1] ?? '';
    eps.set(name, [...(eps.get(name) ?? []), m[2] ?? '']);
  }
  for (const m of text.matchAll(/--comment "([^"]+) has no endpoints"/g)) {
    const name = m[1] ?? '';
    if (!eps.has(name)) eps.set(name, []);
  }
  return [...eps.entries()]
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([name, list]) =>
      list.length > 0 ? `${name} → ${[...list].sort().join(', ')}` : `${name} → no endpoints (REJECT)`,
    );
}

/**
 * The demo's view of the proxy: after each sync of a render-only iptables proxy, prints
 * `proxy rules: <service port> → <endpoints>` for every service port whose rendered rules
 * changed.
 */
export function watchProxyRules(proxy: AgentProxy, write: (line: string) => void): void {
  if (!proxy.renderOnly || proxy.mode !== 'iptables') return;
  let last = new Map<string, string>();
  let chain = Promise.resolve();
  proxy.proxier.on('synced', () => {
    chain = chain.then(
      async () => {
        const now = new Map(
          summarizeIptablesRules(await proxy.rules()).map((l) => [l.split(' → ')[0] ?? l, l] as const),
        );
        for (const [k, line] of now) if (last.get(k) !== line) write(`proxy rules: ${line}`);
        for (const k of last.keys()) if (!now.has(k)) write(`proxy rules: ${k} → removed`);
        last = now;
      },
      () => {},
    );
  });
}
