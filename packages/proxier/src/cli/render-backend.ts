/**
 * The CLI's bridge to the backend libraries: builds each library's options from the command
 * line and calls its renderer. Nothing here writes rules itself.
 *
 * @module
 */

import { cidrValueContains, definedFields, parseCIDRValue, parseIPValue } from '@nodeagent/core';
import {
  type IptablesRenderOptions,
  type IptablesRuleset,
  renderIptablesSnapshot,
  restoreText,
} from '@nodeagent/iptables';
import {
  type IpvsPlan,
  type IpvsPlanOptions,
  planIpvs,
  renderIpsetRestore,
  renderIpvsadmRestore,
  renderResidualIptables,
  SpawnIpvsExecutor,
} from '@nodeagent/ipvs';
import {
  type NftRenderOptions,
  type NftRuleset,
  NftSyncPlanner,
  renderNftablesRuleset,
} from '@nodeagent/nftables';
import type { BackendArgs } from './args.js';
import { oneLine } from './errors.js';
import { resolveNodePortIPs } from './kube-proxy-flags.js';
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

/** `--nodeport-addresses` resolved against the input's node IPs of its family. */
export function resolveInputNodePortIPs(b: BackendArgs, input: LoadedInput): string[] | undefined {
  return resolveNodePortIPs(b.nodePortAddresses, input.nodeIPs, input.family);
}

/** True when `--nodeport-addresses` leaves 127.0.0.1 out (kube-proxy's iptables mode then has no localhost node ports). */
function excludesLoopback(b: BackendArgs): boolean {
  if (b.nodePortAddresses.length === 0) return false;
  if (b.nodePortAddresses[0] === 'primary') return true;
  const lo = parseIPValue('127.0.0.1')!;
  const v4 = b.nodePortAddresses.flatMap((c) => {
    const v = parseCIDRValue(c);
    return v && v.family === 4 ? [v] : [];
  });
  // No IPv4 CIDR means every IPv4 address, loopback included.
  return v4.length > 0 && !v4.some((v) => cidrValueContains(v, lo));
}

/** The ipvs sections, each under a `# --- <what> ---` header. */
async function ipvsText(plan: IpvsPlan): Promise<string> {
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

/** Renders the input's snapshot with the chosen backend's library renderer. */
export async function renderBackend(b: BackendArgs, input: LoadedInput): Promise<BackendRules> {
  const common = commonOptions(b, input);
  const nodePortIPs = resolveInputNodePortIPs(b, input);
  const snapshot = input.snapshot;
  switch (b.backend) {
    case 'iptables': {
      const options: IptablesRenderOptions = {
        ...common,
        localhostNodePorts: b.localhostNodePorts && !excludesLoopback(b),
        ...definedFields({ nodePortIPs }),
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
      const options: NftRenderOptions = {
        ...common,
        layout: b.nftablesLayout,
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
      const options: IpvsPlanOptions = {
        ...common,
        ...definedFields({ nodePortIPs, scheduler: b.ipvs.scheduler || undefined }),
      };
      const plan = planIpvs(snapshot, options);
      return {
        backend: 'ipvs',
        options,
        plan,
        text: await ipvsText(plan),
        problems: plan.errors.map((e) => oneLine(e.message)),
        programmedPorts: new Set(plan.virtualServers.map((v) => v.servicePort)).size,
      };
    }
  }
}
