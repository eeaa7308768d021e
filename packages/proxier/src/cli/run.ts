/**
 * `nodeagent-proxy run`: a long-running kube-proxy. It resolves kube-proxy's configuration,
 * connects to the API server (kubeconfig, `--master`, or the in-cluster configuration), reads
 * this node's IPs from its Node object as kube-proxy does at start-up, and runs the
 * {@link Proxier} with the chosen mode's real executors, the healthz server and the metrics
 * server (`/metrics`, `/healthz`, `/proxyMode`, `/configz`) until SIGTERM/SIGINT (rules are
 * left in place, as kube-proxy leaves them). `--cleanup` removes every mode's rules and exits.
 *
 * @module
 */
import { existsSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { hostname } from 'node:os';
import { CoreV1Api, KubeConfig, type V1Node } from '@kubernetes/client-node';
import {
  consoleLogger,
  joinHostPort,
  type Logger,
  type MetricsRegistry,
  type PromClientModule,
  parseCIDR,
  parseIP,
} from '@nodeagent/core';
import { restClientRateLimiter } from '@nodeagent/informer';
// Types only: the backend packages are optional installs, loaded by mode (loadBackendModule).
import type { NfacctAvailability, NfacctClient } from '@nodeagent/iptables';
import type { DataPlaneBackend, IPFamily, LocalTrafficDetector } from '@nodeagent/proxy-state';
import {
  BackendNotInstalledError,
  loadBackendModule,
  type ModuleLoader,
  type ProxyMode,
} from '../backend-loader.js';
import {
  listInterfaceAddresses,
  NodeWaitTimeoutError,
  nodePodCIDRs,
  podCIDRsChanged,
  waitForNodePodCIDRs,
} from '../node-manager.js';
import { Proxier } from '../proxier.js';
import { CliFailure, oneLine } from './errors.js';
import { nodePortAddressesContainIPv4Loopback, resolveNodePortIPs } from './kube-proxy-flags.js';
import type { RunCommand, RunConfig } from './run-config.js';

/** What `run` needs from its process (injectable for tests). */
export interface RunIo {
  /** Log lines (JSON, one per line). */
  readonly stderr: { write(text: string): unknown };
  /** The environment (in-cluster configuration). */
  readonly env: NodeJS.ProcessEnv;
  /** Resolves when the process should stop (SIGTERM/SIGINT). */
  readonly stopSignal: Promise<string>;
  /**
   * Builds the data plane for the resolved configuration (tests: a backend over fake executors).
   * @default the mode's backend with the real executors (`iptables-restore`, `nft`, `ipvsadm`)
   */
  readonly makeBackend?: (
    config: RunConfig,
    family: IPFamily,
    nodeIPs: readonly string[],
    log: Logger,
    local: LocalNodeInfo,
  ) => Promise<DataPlaneBackend>;
  /**
   * The local interface addresses `--nodeport-addresses` CIDRs select from (kube-proxy's
   * `GetNodeIPs` over `net.InterfaceAddrs()`).
   * @default {@link listInterfaceAddresses} of this process's network namespace
   */
  readonly interfaceAddresses?: () => Promise<readonly string[]>;
  /** `detectLocalMode: NodeCIDR`: the wait for the Node's PodCIDRs, ms. @default 300000 (kube-proxy's) */
  readonly nodeWaitTimeoutMs?: number;
  /** `detectLocalMode: NodeCIDR`: the poll interval of that wait, ms. @default 1000 (kube-proxy's) */
  readonly nodePollIntervalMs?: number;
  /**
   * Which IP families this host supports (kube-proxy's `platformCheckSupported`; tests: a
   * host without ip6tables).
   * @default {@link platformCheckSupported}: iptables/ipvs need `iptables`/`ip6tables` to work, nftables assumes both; no `/proc/net/if_inet6` disables IPv6
   */
  readonly platform?: (config: RunConfig, log: Logger) => Promise<PlatformSupport>;
  /**
   * iptables mode: the nfacct counters the `kubeproxy_iptables_*_packets_total` metrics read.
   * @default the `nfacct` tool
   */
  readonly nfacct?: NfacctClient;
  /**
   * Imports the mode's backend package (tests: a loader that fails as a missing install does).
   * @default (specifier) => import(specifier)
   */
  readonly load?: ModuleLoader;
}

const LEVEL_BY_VERBOSITY = (v: number) => (v >= 4 ? 'debug' : 'info') as 'debug' | 'info';

/** The KubeConfig kube-proxy would use: `--kubeconfig` (+ `--master`), `--master` alone, or in-cluster. */
export function loadRunKubeConfig(config: RunConfig, env: NodeJS.ProcessEnv, log: Logger): KubeConfig {
  const kc = new KubeConfig();
  if (config.kubeconfig !== '') {
    try {
      kc.loadFromFile(config.kubeconfig);
    } catch (e) {
      throw new CliFailure(
        `invalid configuration: cannot read kubeconfig ${config.kubeconfig}: ${oneLine((e as Error).message)}`,
      );
    }
  } else if (config.master !== '') {
    kc.loadFromClusterAndUser(
      { name: 'master', server: config.master, skipTLSVerify: false },
      { name: 'anonymous' },
    );
  } else {
    log.warn(
      {},
      'Neither --kubeconfig nor --master was specified. Using the inClusterConfig. This might not work.',
    );
    if (!env.KUBERNETES_SERVICE_HOST || !env.KUBERNETES_SERVICE_PORT) {
      throw new CliFailure(
        'unable to load in-cluster configuration, KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT must be defined',
      );
    }
    kc.loadFromCluster();
  }
  if (config.master !== '' && config.kubeconfig !== '') {
    const cluster = kc.getCurrentCluster();
    if (cluster) {
      kc.clusters = kc.clusters.map((c) => (c.name === cluster.name ? { ...c, server: config.master } : c));
    }
  }
  return kc;
}

/** kube-proxy's node IPs: the Node's InternalIPs, else ExternalIPs (one per family, primary first). */
export function nodeIPsOf(node: V1Node): string[] {
  const addrs = node.status?.addresses ?? [];
  for (const type of ['InternalIP', 'ExternalIP']) {
    const ips: string[] = [];
    const fams = new Set<IPFamily>();
    for (const a of addrs) {
      if (a.type !== type) continue;
      const p = parseIP(a.address);
      if (!p || fams.has(p.family)) continue;
      fams.add(p.family);
      ips.push(p.ip);
    }
    if (ips.length > 0) return ips;
  }
  return [];
}

/** The IP families a host supports for a mode (kube-proxy's `platformCheckSupported`). */
export interface PlatformSupport {
  /** IPv4 can be programmed. */
  readonly ipv4: boolean;
  /** IPv6 can be programmed. */
  readonly ipv6: boolean;
}

/**
 * kube-proxy's `platformCheckSupported` (`cmd/kube-proxy/app/server_linux.go`): iptables and
 * ipvs modes support a family when its `iptables`/`ip6tables` works (`-t nat -L POSTROUTING`,
 * what `utiliptables.Present` asks), nftables supports both; a kernel without
 * `/proc/net/if_inet6` has no IPv6. Dual-stack when both are supported.
 * @throws CliFailure "iptables is not available on this host" when neither iptables works
 */
export async function platformCheckSupported(
  config: RunConfig,
  log: Logger,
  load?: ModuleLoader,
): Promise<PlatformSupport> {
  let ipv4 = true;
  let ipv6 = true;
  if (config.mode === 'iptables' || config.mode === 'ipvs') {
    const ipt = await loadFor('iptables', config.mode, load);
    const present = async (family: 'IPv4' | 'IPv6'): Promise<string | undefined> => {
      try {
        const ok = await new ipt.SpawnIptablesExecutor({ family }).chainExists('nat', 'POSTROUTING');
        return ok ? undefined : `${family === 'IPv6' ? 'ip6tables' : 'iptables'} cannot list the nat table`;
      } catch (e) {
        return oneLine((e as Error).message);
      }
    };
    const [errv4, errv6] = await Promise.all([present('IPv4'), present('IPv6')]);
    ipv4 = errv4 === undefined;
    ipv6 = errv6 === undefined;
    if (!ipv4 && !ipv6) throw new CliFailure(`iptables is not available on this host : ${errv4}`);
    if (!ipv4) log.info({ ipFamily: 'IPv4', error: errv4 }, 'No iptables support for family');
    else if (!ipv6) log.info({ ipFamily: 'IPv6', error: errv6 }, 'No iptables support for family');
  }
  if (!existsSync('/proc/net/if_inet6')) {
    log.info({ ipFamily: 'IPv6' }, 'No kernel support for family');
    ipv6 = false;
  }
  return { ipv4, ipv6 };
}

/**
 * kube-proxy's `detectNodeIPs`: the primary family is the first node IP's (or `--bind-address`'s
 * when it is a specific IP, which then replaces that family's IP); a family without a known IP
 * gets the loopback address.
 */
export function detectNodeIPs(
  rawNodeIPs: readonly string[],
  bindAddress: string,
): { primary: IPFamily; nodeIPs: Record<IPFamily, string> } {
  let primary: IPFamily = 4;
  const nodeIPs: Record<IPFamily, string> = { 4: '127.0.0.1', 6: '::1' };
  const parsed = rawNodeIPs.map((ip) => parseIP(ip)).filter((p) => p !== null);
  if (parsed.length > 0) {
    primary = parsed[0]!.family;
    nodeIPs[primary] = parsed[0]!.ip;
    const second = parsed[1];
    if (second && second.family !== primary) nodeIPs[second.family] = second.ip;
  }
  const bind = parseIP(bindAddress);
  if (bind && bind.ip !== '0.0.0.0' && bind.ip !== '::') {
    primary = bind.family;
    nodeIPs[primary] = bind.ip;
  }
  return { primary, nodeIPs };
}

/**
 * kube-proxy's NodeManager wait with NodeCIDR: polls the Node (1 s) until it has PodCIDRs.
 * @returns the Node, or 'stopped' when the stop signal came first
 * @throws CliFailure after 5 minutes with kube-proxy's last reason (`node "<name>" does not have any PodCIDR allocated`)
 */
async function waitForPodCIDRs(
  kc: KubeConfig,
  nodeName: string,
  first: V1Node | undefined,
  io: RunIo,
  log: Logger,
): Promise<V1Node | 'stopped'> {
  const core = kc.makeApiClient(CoreV1Api);
  const ac = new AbortController();
  void io.stopSignal.then(() => ac.abort());
  let initial = first;
  try {
    return await waitForNodePodCIDRs({
      nodeName,
      getNode: () => {
        const n = initial;
        initial = undefined;
        return n ?? core.readNode({ name: nodeName });
      },
      ...(io.nodeWaitTimeoutMs !== undefined ? { timeoutMs: io.nodeWaitTimeoutMs } : {}),
      ...(io.nodePollIntervalMs !== undefined ? { pollIntervalMs: io.nodePollIntervalMs } : {}),
      signal: ac.signal,
      logger: log,
    });
  } catch (e) {
    if (e instanceof NodeWaitTimeoutError) throw new CliFailure(e.message);
    if (ac.signal.aborted) {
      log.info({}, 'stopping while waiting for the PodCIDRs of the node');
      return 'stopped';
    }
    throw e;
  }
}

/** Reads this node's Node object, retrying as kube-proxy does while it does not exist yet. */
async function fetchNode(
  kc: KubeConfig,
  name: string,
  log: Logger,
  stop: Promise<string>,
): Promise<V1Node | undefined> {
  if (!kc.getCurrentCluster())
    throw new CliFailure('invalid configuration: no current cluster in the kubeconfig');
  // client-node's own API client applies the kubeconfig's credentials the same way in 1.x and 2.x.
  const core = kc.makeApiClient(CoreV1Api);
  let stopped = false;
  void stop.then(() => {
    stopped = true;
  });
  for (let attempt = 0; attempt < 30 && !stopped; attempt++) {
    try {
      return await core.readNode({ name });
    } catch (e) {
      log.info(
        { node: name, err: oneLine((e as Error).message).slice(0, 300) },
        'cannot read this node yet; retrying',
      );
    }
    await new Promise((r) => setTimeout(r, 1000));
  }
  return undefined;
}

/** What `run` learnt about this node besides its IPs, for building a family's backend. */
export interface LocalNodeInfo {
  /** The Node's `spec.podCIDRs` (read with `detectLocalMode: NodeCIDR`). */
  readonly podCIDRs: readonly string[];
  /** The local interface addresses (`--nodeport-addresses` selects among them). */
  readonly interfaceAddresses: readonly string[];
}

/**
 * The local-traffic detector of kube-proxy's `detectLocalMode` for one family (`getLocalDetectors`):
 * NodeCIDR takes the family's CIDR of the Node's PodCIDRs, none means no detection (logged).
 */
export function detectorFor(
  config: Pick<RunConfig, 'clusterCIDRs' | 'detectLocalMode' | 'bridgeInterface' | 'interfaceNamePrefix'>,
  family: IPFamily,
  podCIDRs: readonly string[] = [],
  log?: Logger,
): LocalTrafficDetector {
  const cidr = config.clusterCIDRs.find((c) => parseCIDR(c)?.family === family);
  switch (config.detectLocalMode) {
    case 'NodeCIDR': {
      const podCIDR = podCIDRs.find((c) => parseCIDR(c)?.family === family);
      if (podCIDR !== undefined) return { mode: 'NodeCIDR', cidr: podCIDR };
      log?.info(
        { ipFamily: `IPv${family}` },
        'Detect-local-mode set to NodeCIDR, but no PodCIDR defined at node for family',
      );
      return { mode: 'None' };
    }
    case 'BridgeInterface':
      return { mode: 'BridgeInterface', interfaceName: config.bridgeInterface };
    case 'InterfaceNamePrefix':
      return { mode: 'InterfaceNamePrefix', interfacePrefix: config.interfaceNamePrefix };
    default:
      return cidr !== undefined ? { mode: 'ClusterCIDR', cidr } : { mode: 'None' };
  }
}

/** Loads a backend package for `mode`; a missing install becomes a CliFailure naming the package. */
async function loadFor<M extends ProxyMode>(
  pkg: M,
  mode: ProxyMode,
  load: ModuleLoader | undefined,
): ReturnType<typeof loadBackendModule<M>> {
  try {
    return await loadBackendModule(pkg, { ...(load ? { load } : {}), forMode: mode });
  } catch (e) {
    if (e instanceof BackendNotInstalledError) throw new CliFailure(e.message);
    throw e;
  }
}

/**
 * Builds the chosen mode's backend with the real executors for one IP family (`run` builds one
 * per family it runs, as kube-proxy builds one proxier per family). Only the mode's package is imported (`@nodeagent/iptables`, `@nodeagent/nftables`, or
 * `@nodeagent/ipvs` with `@nodeagent/iptables`).
 * @throws CliFailure when the mode's package is not installed ("--proxy-mode nftables needs @nodeagent/nftables: …")
 */
export async function buildBackend(
  config: RunConfig,
  family: IPFamily,
  nodeIPs: readonly string[],
  log: Logger,
  load?: ModuleLoader,
  local: LocalNodeInfo = { podCIDRs: [], interfaceAddresses: nodeIPs },
): Promise<DataPlaneBackend> {
  const localDetector = detectorFor(config, family, local.podCIDRs, log);
  const localhostNodePorts =
    config.mode === 'iptables' &&
    config.localhostNodePorts &&
    family === 4 &&
    nodePortAddressesContainIPv4Loopback(config.nodePortAddresses, nodeIPs);
  const nodePortIPs = resolveNodePortIPs(config.nodePortAddresses, nodeIPs, family, {
    defaultPrimary: config.mode === 'nftables',
    loopback: localhostNodePorts,
    localAddresses: local.interfaceAddresses,
  });
  if (nodePortIPs !== undefined) log.info({ addresses: nodePortIPs }, 'NodePort addresses');
  const common = {
    masqueradeAll: config.masqueradeAll,
    masqueradeBit: config.masqueradeBit,
    localDetector,
    ...(nodePortIPs !== undefined ? { nodePortIPs } : {}),
  };
  const fam = family === 6 ? 'ipv6' : 'ipv4';
  switch (config.mode) {
    case 'iptables': {
      const ipt = await loadFor('iptables', config.mode, load);
      const executor = new ipt.SpawnIptablesExecutor({ family: family === 6 ? 'IPv6' : 'IPv4' });
      // kube-proxy's start-up: ensure each nfacct counter; the rules use those that exist.
      const nfacct: NfacctAvailability = await ipt.ensureNfacctCounters(new ipt.SpawnNfacctClient());
      if (!nfacct.ctStateInvalid || !nfacct.localhostNodePorts)
        log.info(
          { nfacct },
          'nfacct counters unavailable (no nfacct tool or kernel support): rules without them',
        );
      return new ipt.IptablesBackend({
        [fam]: { executor, render: { ...common, localhostNodePorts, nfacct } },
        logger: log,
      });
    }
    case 'nftables': {
      const nft = await loadFor('nftables', config.mode, load);
      return new nft.NftablesBackend({
        [fam]: { executor: new nft.SpawnNftExecutor() },
        render: common,
        logger: log,
      });
    }
    case 'ipvs': {
      const ipvs = await loadFor('ipvs', config.mode, load);
      const ipt = await loadFor('iptables', config.mode, load);
      const executor = new ipvs.SpawnIpvsExecutor();
      try {
        await ipvs.prepareIpvsNode({
          executor,
          sysctl: new ipvs.ProcSysctl(),
          scheduler: config.ipvs.scheduler,
          strictARP: config.ipvs.strictARP,
          timeouts: {
            tcpMs: config.ipvs.tcpTimeoutMs,
            tcpFinMs: config.ipvs.tcpFinTimeoutMs,
            udpMs: config.ipvs.udpTimeoutMs,
          },
        });
      } catch (e) {
        if (e instanceof ipvs.IpvsUnavailableError) {
          throw new CliFailure(`can't use the IPVS proxier: ${oneLine(e.message)}`);
        }
        throw e;
      }
      return new ipvs.IpvsBackend({
        [fam]: {
          executor,
          iptables: new ipt.SpawnIptablesExecutor({ family: family === 6 ? 'IPv6' : 'IPv4' }),
          stats: executor,
        },
        plan: { ...common, ...(config.ipvs.scheduler !== '' ? { scheduler: config.ipvs.scheduler } : {}) },
        excludeCIDRs: config.ipvs.excludeCIDRs,
        logger: log,
      });
    }
  }
}

/**
 * kube-proxy's `checkBadIPConfig` for `--cluster-cidr`: CIDRs of the other family only are an
 * error, fatal when the local-traffic detector needs them (`ClusterCIDR` mode) on a single-stack
 * node, logged otherwise.
 */
function badClusterCIDRs(
  config: RunConfig,
  primary: IPFamily,
  dualStack: boolean,
): { message: string; fatal: boolean } | undefined {
  const bad: IPFamily = primary === 4 ? 6 : 4;
  const cidrs = config.clusterCIDRs;
  if (cidrs.length === 0 || !cidrs.every((c) => parseCIDR(c)?.family === bad)) return undefined;
  const clusterType = dualStack ? `IPv${primary}-primary` : `IPv${primary}-only`;
  return {
    message: `cluster is ${clusterType} but clusterCIDRs contains only IPv${bad} addresses`,
    fatal: (config.detectLocalMode === 'ClusterCIDR' || config.detectLocalMode === '') && !dualStack,
  };
}

/** Splits `host:port` (IPv6 in brackets). */
function splitHostPort(address: string): { host: string; port: number } {
  const m = /^(?:\[([^\]]*)\]|([^:]*)):([0-9]+)$/.exec(address);
  if (!m) throw new CliFailure(`bad bind address ${address}`);
  return { host: m[1] ?? m[2] ?? '', port: Number(m[3]) };
}

interface MetricsServer {
  readonly server: Server;
  readonly address: string;
}

/** kube-proxy's metrics server: `/metrics`, `/healthz`, `/proxyMode`, `/configz`. */
async function startMetricsServer(
  config: RunConfig,
  registry: { metrics(): Promise<string>; contentType: string } | undefined,
  log: Logger,
): Promise<MetricsServer> {
  const { host, port } = splitHostPort(config.metricsBindAddress);
  const handler = (req: IncomingMessage, res: ServerResponse) => {
    const path = (req.url ?? '/').split('?')[0];
    const send = (code: number, type: string, body: string) => {
      res.writeHead(code, { 'Content-Type': type, 'X-Content-Type-Options': 'nosniff' });
      res.end(body);
    };
    if (path === '/healthz') return send(200, 'text/plain; charset=utf-8', 'ok');
    if (path === '/proxyMode') return send(200, 'text/plain; charset=utf-8', config.mode);
    if (path === '/configz')
      return send(200, 'application/json', JSON.stringify({ kubeproxy: config.configz }));
    if (path === '/metrics') {
      if (!registry)
        return send(500, 'text/plain; charset=utf-8', 'metrics are unavailable: install prom-client\n');
      registry.metrics().then(
        (text) => send(200, registry.contentType, text),
        (e: Error) => send(500, 'text/plain; charset=utf-8', `${e.message}\n`),
      );
      return;
    }
    send(404, 'text/plain; charset=utf-8', '404 page not found\n');
  };
  const server = createServer(handler);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const a = server.address();
  const address = typeof a === 'object' && a ? joinHostPort(a.address, a.port) : config.metricsBindAddress;
  log.info({ address }, 'metrics server listening');
  return { server, address };
}

/** prom-client, when installed (an optional peer dependency). */
async function loadPromClient(): Promise<
  | {
      module: PromClientModule;
      registry: MetricsRegistry & { metrics(): Promise<string>; contentType: string };
    }
  | undefined
> {
  try {
    const name = 'prom-client';
    const mod = (await import(name)) as {
      default?: unknown;
      Registry: new () => MetricsRegistry & { metrics(): Promise<string>; contentType: string };
      collectDefaultMetrics(o: { register: unknown }): void;
    } & PromClientModule;
    const registry = new mod.Registry();
    mod.collectDefaultMetrics({ register: registry });
    return { module: mod, registry };
  } catch {
    return undefined;
  }
}

/**
 * Removes the rules of every mode (kube-proxy's `CleanupLeftovers`). Returns problems per mode.
 * A mode whose package is not installed is skipped (logged): it cannot have written rules here
 * through this CLI.
 */
export async function cleanupAllModes(log: Logger, load?: ModuleLoader): Promise<string[]> {
  const problems: string[] = [];
  const opts = load ? { load } : {};
  const backends: [ProxyMode, () => Promise<DataPlaneBackend>][] = [
    [
      'iptables',
      async () => {
        const ipt = await loadBackendModule('iptables', opts);
        return new ipt.IptablesBackend({
          ipv4: { executor: new ipt.SpawnIptablesExecutor({ family: 'IPv4' }) },
          ipv6: { executor: new ipt.SpawnIptablesExecutor({ family: 'IPv6' }) },
          canary: false,
        });
      },
    ],
    [
      'nftables',
      async () => {
        const nft = await loadBackendModule('nftables', opts);
        return new nft.NftablesBackend({
          ipv4: { executor: new nft.SpawnNftExecutor() },
          ipv6: { executor: new nft.SpawnNftExecutor() },
        });
      },
    ],
    [
      'ipvs',
      async () => {
        const ipvs = await loadBackendModule('ipvs', opts);
        const ipt = await loadBackendModule('iptables', { ...opts, forMode: 'ipvs' });
        // Both families: IPv6 virtual servers and the ip6tables residual rules too.
        return new ipvs.IpvsBackend({
          ipv4: {
            executor: new ipvs.SpawnIpvsExecutor(),
            iptables: new ipt.SpawnIptablesExecutor({ family: 'IPv4' }),
          },
          ipv6: {
            executor: new ipvs.SpawnIpvsExecutor(),
            iptables: new ipt.SpawnIptablesExecutor({ family: 'IPv6' }),
          },
        });
      },
    ],
  ];
  for (const [name, make] of backends) {
    let backend: DataPlaneBackend;
    try {
      backend = await make();
    } catch (e) {
      if (!(e instanceof BackendNotInstalledError)) throw e;
      log.info({ mode: name, package: e.packageName }, 'not installed: nothing to clean for this mode');
      continue;
    }
    try {
      await backend.cleanup();
      log.info({ mode: name }, 'removed the rules of this mode');
    } catch (e) {
      const msg = oneLine((e as Error).message);
      // A mode whose tools or kernel support are missing has nothing to clean.
      if (
        /ENOENT|not found|Protocol not available|Can't initialize ipvs|Operation not supported/i.test(msg)
      ) {
        log.info({ mode: name, reason: msg }, 'nothing to clean for this mode');
      } else {
        problems.push(`${name}: ${msg}`);
      }
    } finally {
      backend.close?.();
    }
  }
  return problems;
}

/**
 * Runs `nodeagent-proxy run` until `io.stopSignal` resolves, and returns the exit code.
 * @throws CliFailure when it cannot start (bad kubeconfig, IPVS unavailable, a port in use).
 */
export async function runProxy(cmd: RunCommand, io: RunIo): Promise<number> {
  const config = cmd.config;
  const log = consoleLogger({ level: LEVEL_BY_VERBOSITY(config.verbosity), stream: io.stderr }).child({
    component: 'nodeagent-proxy',
  });
  for (const w of cmd.warnings) log.warn({}, w);
  if (cmd.cleanup) {
    const problems = await cleanupAllModes(log, io.load);
    for (const p of problems) log.error({}, `cleanup failed: ${p}`);
    return problems.length > 0 ? 1 : 0;
  }
  const nodeName = config.hostnameOverride !== '' ? config.hostnameOverride : hostname().toLowerCase();
  const kc = loadRunKubeConfig(config, io.env, log);
  let node = await fetchNode(kc, nodeName, log, io.stopSignal);
  // kube-proxy's NodeManager with NodeCIDR: no proxier before the Node has its PodCIDRs.
  let podCIDRs: readonly string[] = [];
  if (config.detectLocalMode === 'NodeCIDR') {
    const waited = await waitForPodCIDRs(kc, nodeName, node, io, log);
    if (waited === 'stopped') return 0;
    node = waited;
    podCIDRs = nodePodCIDRs(node);
    log.info({ node: nodeName, podCIDRs }, 'Successfully retrieved the PodCIDRs of the node');
  }
  // kube-proxy's detectNodeIPs: the Node's addresses, --bind-address overriding the primary one.
  const { primary, nodeIPs: ipByFamily } = detectNodeIPs(node ? nodeIPsOf(node) : [], config.bindAddress);
  if (ipByFamily[primary] === '127.0.0.1' || ipByFamily[primary] === '::1') {
    log.info(
      { node: nodeName },
      "Can't determine this node's IP, assuming loopback; if this is incorrect, please set the --bind-address flag",
    );
  }
  const secondary: IPFamily = primary === 4 ? 6 : 4;
  const support = await (io.platform ?? ((c, l) => platformCheckSupported(c, l, io.load)))(config, log);
  const supported = (f: IPFamily) => (f === 4 ? support.ipv4 : support.ipv6);
  if (!supported(primary)) throw new CliFailure(`no support for primary IP family "IPv${primary}"`);
  const dualStack = supported(secondary);
  const families: IPFamily[] = dualStack ? [primary, secondary] : [primary];
  const nodeIPs = families.map((f) => ipByFamily[f]);
  if (dualStack) log.info({ primaryIpFamily: `IPv${primary}` }, 'kube-proxy running in dual-stack mode');
  else log.info({ ipFamily: `IPv${primary}` }, 'kube-proxy running in single-stack mode');
  const badCIDRs = badClusterCIDRs(config, primary, dualStack);
  if (badCIDRs?.fatal) throw new CliFailure(`kube-proxy configuration is incorrect: ${badCIDRs.message}`);
  if (badCIDRs)
    log.error({ err: badCIDRs.message }, 'Kube-proxy configuration may be incomplete or incorrect');
  log.info({ node: nodeName, nodeIPs, mode: config.mode }, 'using this node');
  const make = io.makeBackend ?? ((c, f, ips, l, local) => buildBackend(c, f, ips, l, io.load, local));
  // kube-proxy's GetNodeIPs reads the interfaces only when --nodeport-addresses does not match all.
  const interfaceAddresses =
    config.nodePortAddresses.length > 0 || config.mode === 'nftables'
      ? [...(await (io.interfaceAddresses ?? (() => listInterfaceAddresses()))())]
      : [];
  const local: LocalNodeInfo = { podCIDRs, interfaceAddresses };
  // One backend per family, primary first: each gets its own sync loop and runner in the Proxier.
  const backends: DataPlaneBackend[] = [];
  for (const f of families)
    backends.push(await make(config, f, nodeIPs, log.child({ ipFamily: `IPv${f}` }), local));
  // iptables mode: the nfacct metrics read the counters on scrape (only when this node has them).
  let nfacct: NfacctClient | undefined;
  if (config.mode === 'iptables') {
    const ipt = await loadFor('iptables', config.mode, io.load);
    const client = io.nfacct ?? new ipt.SpawnNfacctClient();
    if (await ipt.detectNfacct(client)) nfacct = client;
  }
  const prom = await loadPromClient();
  if (!prom) log.warn({}, 'prom-client is not installed: /metrics answers 500');
  // kube-proxy's clientConnection.qps / burst (--kube-api-qps / --kube-api-burst): one
  // client-side limiter for its client config, as client-go's RESTClientFor builds it.
  const rateLimiter = restClientRateLimiter({ qps: config.kubeApiQps, burst: config.kubeApiBurst });
  const proxier = new Proxier({
    kubeConfig: kc,
    ...(rateLimiter ? { rateLimiter } : {}),
    nodeName,
    nodeIPs,
    backend: backends,
    syncPeriodMs: config.syncPeriodMs,
    minSyncPeriodMs: config.minSyncPeriodMs,
    healthz: config.healthzBindAddress === '' ? false : { bindAddress: config.healthzBindAddress },
    ...(prom ? { metrics: { registry: prom.registry, promClient: prom.module } } : {}),
    ...(nfacct ? { nfacct } : {}),
    logger: log,
  });
  proxier.on('objectError', (e) => log.warn({ err: oneLine(e.message) }, 'skipped an invalid object'));
  proxier.on('syncError', (e, fam) =>
    log.error({ ipFamily: fam, err: oneLine(String((e as Error)?.message ?? e)) }, 'sync failed; retrying'),
  );
  proxier.on('informerError', (e, resource) =>
    log.warn({ resource, err: oneLine(e.message) }, 'list/watch failed; retrying'),
  );
  proxier.on('synced', (r) => log.debug({ full: r.full, failed: r.failed, ms: r.durationMs }, 'synced'));
  // kube-proxy's NodeManager.OnNodeChange with NodeCIDR: a change of the PodCIDRs exits (code 1).
  let podCIDRsChange: (() => void) | undefined;
  const podCIDRsChanged$ = new Promise<'podCIDRsChanged'>((resolve) => {
    podCIDRsChange = () => resolve('podCIDRsChanged');
  });
  if (config.detectLocalMode === 'NodeCIDR') {
    proxier.on('nodeChanged', (n) => {
      const now = nodePodCIDRs(n);
      if (!podCIDRsChanged(podCIDRs, now)) return;
      log.info({ node: nodeName, newPodCIDRs: now, oldPodCIDRs: podCIDRs }, 'PodCIDRs changed for the node');
      podCIDRsChange?.();
    });
  }
  let metrics: MetricsServer | undefined;
  try {
    metrics = await startMetricsServer(config, prom?.registry, log);
    const started = proxier.start();
    const first = await Promise.race([started.then(() => 'started' as const), io.stopSignal]);
    if (first !== 'started') {
      log.info({ signal: first }, 'stopping before the informers synced');
      await proxier.stop();
      return 0;
    }
    log.info({}, 'running; rules follow Services and EndpointSlices');
    const signal = await Promise.race([io.stopSignal, podCIDRsChanged$]);
    if (signal === 'podCIDRsChanged') return 1;
    log.info({ signal }, 'stopping; rules are left in place');
    return 0;
  } finally {
    await proxier.stop();
    if (metrics) await new Promise<void>((r) => metrics!.server.close(() => r()));
  }
}
