/**
 * The CLI's bridge to the backend libraries: builds each library's options from the command
 * line and calls its renderer. Nothing here writes rules itself.
 *
 * @module
 */

import { definedFields } from '@nodeagent/core';
// Types only: each backend package is loaded on use, for the backend chosen (-b).
import type {
  IptablesRenderOptions,
  IptablesRuleset,
  NfacctAvailability,
  NfacctClient,
} from '@nodeagent/iptables';
import type { IpvsPlan, IpvsPlanOptions } from '@nodeagent/ipvs';
import type { NftRenderOptions, NftRuleset } from '@nodeagent/nftables';
import type { BackendModules, ModuleLoader } from '../backend-loader.js';
import type { BackendArgs } from './args.js';
import { offlineBackendModule } from './backend-modules.js';
import { CliFailure, oneLine } from './errors.js';
import { nodePortAddressesContainIPv4Loopback, resolveNodePortIPs } from './kube-proxy-flags.js';
import type { LoadedInput } from './load-input.js';

/** The options every backend shares, from the command line. */
interface CommonRenderOptions {
  readonly masqueradeAll: boolean;
  readonly localDetector: { readonly mode: 'ClusterCIDR'; readonly cidr: string } | { readonly mode: 'None' };
}

/** A rendered ruleset of one backend, with what the renderer skipped. */
export type BackendRules =
  | {
      readonly backend: 'iptables';
      readonly options: IptablesRenderOptions;
      readonly ruleset: IptablesRuleset;
      /** The iptables-restore payload (what `render` prints). */
      readonly text: string;
      readonly problems: readonly string[];
      readonly programmedPorts: number;
    }
  | {
      readonly backend: 'nftables';
      readonly options: NftRenderOptions;
      readonly ruleset: NftRuleset;
      /** The `nft -f` transaction a first sync writes (what `render` prints). */
      readonly text: string;
      readonly problems: readonly string[];
      readonly programmedPorts: number;
    }
  | {
      readonly backend: 'ipvs';
      readonly options: IpvsPlanOptions;
      readonly plan: IpvsPlan;
      /** The four sections under `# ---` headers (what `render` prints). */
      readonly text: string;
      readonly problems: readonly string[];
      readonly programmedPorts: number;
    };

function commonOptions(b: BackendArgs, input: LoadedInput): CommonRenderOptions {
  return {
    masqueradeAll: b.masqueradeAll,
    localDetector:
      input.clusterCIDR !== undefined ? { mode: 'ClusterCIDR', cidr: input.clusterCIDR } : { mode: 'None' },
  };
}

/**
 * `--nodeport-addresses` resolved against the input's node IPs of its family, with the
 * backend's defaults: nftables' unset list is `primary`; only iptables (IPv4, with localhost
 * node ports) serves NodePorts on 127.0.0.1.
 */
export function resolveInputNodePortIPs(b: BackendArgs, input: LoadedInput): string[] | undefined {
  return resolveNodePortIPs(b.nodePortAddresses, input.nodeIPs, input.family, {
    defaultPrimary: b.backend === 'nftables',
    loopback: b.backend === 'iptables' && iptablesLocalhostNodePorts(b, input),
  });
}

/** kube-proxy's iptables localhost node ports: the flag, and `--nodeport-addresses` covering 127.0.0.0/8. */
function iptablesLocalhostNodePorts(b: BackendArgs, input: LoadedInput): boolean {
  return b.localhostNodePorts && nodePortAddressesContainIPv4Loopback(b.nodePortAddresses, input.nodeIPs);
}

/** The ipvs sections, each under a `# --- <what> ---` header. */
async function ipvsText(plan: IpvsPlan, ipvs: BackendModules['ipvs']): Promise<string> {
  const { renderIpsetRestore, renderIpvsadmRestore, renderResidualIptables, SpawnIpvsExecutor } = ipvs;
  const binds = plan.boundAddresses.map((address) => ({ kind: 'bind-address' as const, address }));
  // The executor's own rendering of `ip -batch` input; planning address changes runs nothing.
  const calls = binds.length > 0 ? await new SpawnIpvsExecutor().plan(binds) : [];
  return (
    '# --- ipvsadm-restore: IPVS virtual and real servers ---\n' +
    renderIpvsadmRestore(plan) +
    '# --- ipset restore: kube-proxy ipsets ---\n' +
    renderIpsetRestore(plan.ipsets) +
    '# --- ip -batch: service addresses on kube-ipvs0 ---\n' +
    calls.map((c) => c.input).join('') +
    '# --- iptables-restore --noflush: residual iptables rules ---\n' +
    renderResidualIptables(plan.iptables)
  );
}

/**
 * `--nfacct` resolved to the counters the iptables rules use. `on` uses both (upstream's test
 * proxier); `off` none; `auto` asks the node: without a namespace (render, trace) whether the
 * kernel answers `nfacct list`, nothing created; with one (apply) kube-proxy's start-up step,
 * ensuring each counter there and using those that exist. `apply --nfacct on` also ensures
 * them and fails when it cannot (the rules would not load).
 * @throws CliFailure for `apply --nfacct on` when a counter cannot be created.
 */
export async function resolveNfacct(
  b: BackendArgs,
  netns: string | undefined,
  client: (netns: string | undefined, iptables: BackendModules['iptables']) => NfacctClient,
  load?: ModuleLoader,
): Promise<NfacctAvailability | undefined> {
  if (b.backend !== 'iptables' || b.nfacct === 'off') return undefined;
  const ipt = await offlineBackendModule('iptables', b.backend, load);
  const { detectNfacct, ensureNfacctCounters, KUBE_PROXY_NFACCT_COUNTERS } = ipt;
  if (netns === undefined) {
    if (b.nfacct === 'on' || (await detectNfacct(client(undefined, ipt))))
      return { ctStateInvalid: true, localhostNodePorts: true };
    return undefined;
  }
  const got = await ensureNfacctCounters(client(netns, ipt));
  if (b.nfacct === 'on' && !(got.ctStateInvalid && got.localhostNodePorts)) {
    throw new CliFailure(
      `--nfacct on: cannot create the nfacct counters ${KUBE_PROXY_NFACCT_COUNTERS.join(', ')} in netns ${netns} (is the nfacct tool installed and nfnetlink_acct in the kernel?)`,
    );
  }
  return got;
}

/**
 * Renders the input's snapshot with the chosen backend's library renderer, loading only that
 * backend's package.
 * @throws CliFailure when the backend's package is not installed
 */
export async function renderBackend(
  b: BackendArgs,
  input: LoadedInput,
  nfacct?: NfacctAvailability,
  load?: ModuleLoader,
): Promise<BackendRules> {
  const common = commonOptions(b, input);
  const nodePortIPs = resolveInputNodePortIPs(b, input);
  const snapshot = input.snapshot;
  switch (b.backend) {
    case 'iptables': {
      const { renderIptablesSnapshot, restoreText } = await offlineBackendModule('iptables', b.backend, load);
      const options: IptablesRenderOptions = {
        ...common,
        localhostNodePorts: iptablesLocalhostNodePorts(b, input),
        ...definedFields({ nodePortIPs, nfacct }),
      };
      const ruleset = renderIptablesSnapshot(snapshot, options);
      return {
        backend: 'iptables',
        options,
        ruleset,
        text: restoreText(ruleset),
        problems: ruleset.errors.map((e) => oneLine(e.message)),
        programmedPorts: ruleset.servicePorts.length,
      };
    }
    case 'nftables': {
      const { renderNftablesRuleset, NftSyncPlanner } = await offlineBackendModule(
        'nftables',
        b.backend,
        load,
      );
      const options: NftRenderOptions = {
        ...common,
        layout: b.nftablesLayout,
        serviceCIDRs: input.serviceCIDRs,
        ...definedFields({ nodePortIPs }),
      };
      const { ruleset, errors } = renderNftablesRuleset(snapshot, options);
      return {
        backend: 'nftables',
        options,
        ruleset,
        // What renderNftables writes, without rendering twice.
        text: new NftSyncPlanner().planFull(ruleset, 0).text,
        problems: errors.map((e) => oneLine(e.message)),
        programmedPorts: ruleset.ports.size,
      };
    }
    case 'ipvs': {
      const ipvs = await offlineBackendModule('ipvs', b.backend, load);
      const options: IpvsPlanOptions = {
        ...common,
        ...definedFields({ nodePortIPs, scheduler: b.ipvs.scheduler || undefined }),
      };
      const plan = ipvs.planIpvs(snapshot, options);
      return {
        backend: 'ipvs',
        options,
        plan,
        text: await ipvsText(plan, ipvs),
        problems: plan.errors.map((e) => oneLine(e.message)),
        programmedPorts: new Set(plan.virtualServers.map((v) => v.servicePort)).size,
      };
    }
  }
}
