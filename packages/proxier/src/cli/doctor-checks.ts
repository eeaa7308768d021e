/**
 * `doctor`'s findings: which proxy rules the node holds, mixed modes, rules another
 * kube-proxy left, stale chains, drift against rendered objects, prerequisites, and a trace
 * of one Service on the live rules. Pure functions over {@link NodeReadings}.
 *
 * @module
 */
import { joinHostPort } from '@nodeagent/core';
import { type ParsedRule, parseRestoreText, tracePacket as traceIptables } from '@nodeagent/iptables';
import {
  type NftFamily,
  type NftTableState,
  NftTracer,
  renderNftables,
  tableFromText,
} from '@nodeagent/nftables';
import { buildProxySnapshots, type ProxySnapshot } from '@nodeagent/proxy-state';
import { normalizeKernelRule, tableFromListing } from './doctor-nft-listing.js';
import type { NodeReadings } from './doctor-read.js';
import { oneLine } from './errors.js';
import type { BackendRules } from './render-backend.js';

/** How bad a finding is: `error` and `warning` are problems (exit code 1); `info` is not. */
export type Severity = 'error' | 'warning' | 'info';

/** One thing doctor found. */
export interface Finding {
  /** Stable identifier of the check (e.g. `mixed-modes`, `stale-chain`, `ip-forward`). */
  readonly id: string;
  /** How bad it is. */
  readonly severity: Severity;
  /** What was found, one line. */
  readonly message: string;
  /** What to do about it (absent for plain information). */
  readonly remedy?: string;
  /** The object concerned: a chain, table, sysctl or Service, when there is one. */
  readonly subject?: string;
}

/** The proxy modes whose rules can be on a node. */
export type DetectedMode = 'iptables' | 'nftables' | 'ipvs';

/** One Service destination traced through the live rules. */
export interface ServiceTrace {
  /** Which mode's live rules were traced. */
  readonly mode: DetectedMode;
  /** `ClusterIP`, `NodePort`, `ExternalIP/LoadBalancer` (as the rules show it). */
  readonly kind: string;
  /** The port as the rules name it (`ns/name:port`). */
  readonly servicePort: string;
  /** Protocol (`TCP`, `UDP`, `SCTP`). */
  readonly protocol: string;
  /** Source address of the traced packet. */
  readonly sourceIP: string;
  /** Destination address. */
  readonly destIP: string;
  /** Destination port. */
  readonly destPort: number;
  /** `endpoints`, `REJECT`, `DROP`, `ACCEPT` or `untouched`. */
  readonly outcome: string;
  /** Endpoints the packet may reach (`ip:port`), sorted. */
  readonly endpoints: readonly string[];
  /** Whether the packet is masqueraded. */
  readonly masquerade: boolean;
}

const KUBE_SERVICE_CHAIN = /^KUBE-(SVC|SVL|SEP|EXT|FW)-/;

/** Chains and rules of one table of an iptables-save text. */
interface IptTable {
  readonly chains: Map<string, ParsedRule[]>;
}

function iptTables(text: string | undefined): Map<string, IptTable> {
  const out = new Map<string, IptTable>();
  if (text === undefined || text.trim() === '') return out;
  for (const t of parseRestoreText(text)) {
    const chains = new Map<string, ParsedRule[]>();
    for (const name of t.chains.keys()) chains.set(name, []);
    for (const r of t.rules) {
      const list = chains.get(r.chain) ?? [];
      chains.set(r.chain, list);
      list.push(r);
    }
    out.set(t.name, { chains });
  }
  return out;
}

/** What one iptables backend (legacy or nft) holds of kube-proxy's. */
interface IptablesView {
  readonly backend: 'legacy' | 'nft';
  readonly family: 4 | 6;
  readonly tables: Map<string, IptTable>;
  /** iptables-mode service chains (KUBE-SVC-..., KUBE-SEP-..., ...). */
  readonly serviceChains: string[];
  /** KUBE-SERVICES exists in nat. */
  readonly hasKubeServices: boolean;
  /** KUBE-SERVICES matches kube-proxy's IPVS ipsets (IPVS mode's residual rules). */
  readonly ipvsResidual: boolean;
}

function iptablesView(backend: 'legacy' | 'nft', family: 4 | 6, text: string | undefined): IptablesView {
  const tables = iptTables(text);
  const nat = tables.get('nat');
  const serviceChains = [...(nat?.chains.keys() ?? [])].filter((c) => KUBE_SERVICE_CHAIN.test(c));
  const kubeServices = nat?.chains.get('KUBE-SERVICES');
  return {
    backend,
    family,
    tables,
    serviceChains,
    hasKubeServices: kubeServices !== undefined,
    ipvsResidual: (kubeServices ?? []).some((r) => r.setMatches.some((m) => m.set.startsWith('KUBE-'))),
  };
}

/** iptables-mode rules: service chains, or a KUBE-SERVICES that is not IPVS mode's. */
function iptablesModeRules(v: IptablesView): boolean {
  return v.serviceChains.length > 0 || (v.hasKubeServices && !v.ipvsResidual && hasServiceRules(v));
}

function hasServiceRules(v: IptablesView): boolean {
  return (v.tables.get('nat')?.chains.get('KUBE-SERVICES') ?? []).length > 0;
}

/** Virtual servers listed by `ipvsadm -Ln`. */
export function ipvsVirtualServers(text: string | undefined): string[] {
  if (text === undefined) return [];
  return text
    .split('\n')
    .map((l) => /^(TCP|UDP|SCTP)\s+(\S+)/.exec(l.trim()))
    .filter((m): m is RegExpExecArray => m !== null)
    .map((m) => `${m[1]} ${m[2]}`);
}

/** Everything the checks derive from the readings (shared with drift and trace). */
export interface NodeView {
  /** The iptables views that hold anything of kube-proxy's. */
  readonly iptables: readonly IptablesView[];
  /** The live nft tables (`ip`, `ip6`) read into the nftables library's state. */
  readonly nft: ReadonlyMap<NftFamily, NftTableState>;
  /** IPVS virtual servers. */
  readonly ipvs: readonly string[];
  /** Modes whose rules are present. */
  readonly modes: readonly DetectedMode[];
  /** Findings made while reading (unreadable tables). */
  readonly readFindings: readonly Finding[];
}

/** Reads the readings into views. */
export function viewNode(r: NodeReadings): NodeView {
  const readFindings: Finding[] = [];
  const iptables = [
    iptablesView('legacy', 4, r.iptablesLegacy.v4),
    iptablesView('legacy', 6, r.iptablesLegacy.v6),
    iptablesView('nft', 4, r.iptablesNft.v4),
    iptablesView('nft', 6, r.iptablesNft.v6),
  ].filter((v) => v.hasKubeServices || v.serviceChains.length > 0);
  const nft = new Map<NftFamily, NftTableState>();
  for (const [family, text] of [
    ['ip', r.nftIp],
    ['ip6', r.nftIp6],
  ] as const) {
    if (text === undefined || text.trim() === '') continue;
    try {
      nft.set(family, tableFromListing(text, family));
    } catch (e) {
      readFindings.push({
        id: 'nft-unreadable',
        severity: 'warning',
        subject: `table ${family} kube-proxy`,
        message: `table ${family} kube-proxy is present but cannot be read: ${oneLine((e as Error).message)}`,
        remedy: `inspect it with: nft list table ${family} kube-proxy`,
      });
      nft.set(family, { family, name: 'kube-proxy', chains: new Map(), sets: new Map() });
    }
  }
  const ipvs = ipvsVirtualServers(r.ipvs);
  const modes: DetectedMode[] = [];
  if (iptables.some(iptablesModeRules)) modes.push('iptables');
  if (nft.size > 0) modes.push('nftables');
  if (ipvs.length > 0 || iptables.some((v) => v.ipvsResidual)) modes.push('ipvs');
  return { iptables, nft, ipvs, modes, readFindings };
}

const CLEANUP_REMEDY =
  "stop every proxy but one, then remove the others' rules: nodeagent-proxy run --cleanup (or kube-proxy --cleanup) removes every mode's rules; restart the proxy you keep so it reprograms its own";

function label(v: IptablesView): string {
  return `${v.family === 6 ? 'ip6tables' : 'iptables'} (${v.backend} backend)`;
}

/** Which rules are present, mixed modes and the rules of another kube-proxy. */
export function presenceFindings(view: NodeView): Finding[] {
  const f: Finding[] = [...view.readFindings];
  for (const v of view.iptables) {
    f.push({
      id: 'rules-present',
      severity: 'info',
      subject: label(v),
      message: `${label(v)}: KUBE-SERVICES ${v.hasKubeServices ? 'present' : 'absent'}, ${v.serviceChains.length} service/endpoint chain(s)${v.ipvsResidual ? ', IPVS ipset matches (IPVS mode)' : ''}`,
    });
  }
  for (const [family, t] of view.nft) {
    const maps = [...t.sets.entries()].filter(([, s]) => s.kind === 'map');
    const elements = maps.reduce((n, [, s]) => n + s.elements.size, 0);
    f.push({
      id: 'rules-present',
      severity: 'info',
      subject: `table ${family} kube-proxy`,
      message: `nftables: table ${family} kube-proxy with ${t.chains.size} chain(s) and ${elements} map element(s)`,
    });
  }
  if (view.ipvs.length > 0) {
    f.push({
      id: 'rules-present',
      severity: 'info',
      subject: 'ipvs',
      message: `IPVS: ${view.ipvs.length} virtual server(s)`,
    });
  }
  if (view.modes.length === 0) {
    f.push({
      id: 'no-proxy-rules',
      severity: 'warning',
      message:
        'no kube-proxy rules found (no KUBE-SERVICES in iptables, no table ip/ip6 kube-proxy, no IPVS virtual servers)',
      remedy: 'check that kube-proxy (or nodeagent-proxy run) is running on this node and look at its log',
    });
  }
  if (view.modes.length > 1) {
    const ipvsAndIpt = view.modes.includes('ipvs') && view.modes.includes('iptables');
    f.push({
      id: 'mixed-modes',
      severity: 'error',
      subject: view.modes.join('+'),
      message: `rules of more than one proxy mode are present: ${view.modes.join(', ')}${ipvsAndIpt ? ' - are you mixing IPVS and iptables?' : ''}; packets are handled by whichever hook runs first`,
      remedy: CLEANUP_REMEDY,
    });
  }
  // Both iptables backends hold kube-proxy rules: one of them was left by another kube-proxy.
  for (const family of [4, 6] as const) {
    const legacy = view.iptables.find((v) => v.backend === 'legacy' && v.family === family);
    const nftb = view.iptables.find((v) => v.backend === 'nft' && v.family === family);
    if (legacy && nftb) {
      const cmd = family === 6 ? 'ip6tables' : 'iptables';
      f.push({
        id: 'iptables-both-backends',
        severity: 'error',
        subject: `${cmd}-legacy`,
        message: `kube-proxy chains exist in BOTH ${cmd}-legacy and ${cmd}-nft: one set was left by a kube-proxy using the other iptables backend`,
        remedy: `find which backend the running proxy uses (${cmd} --version), then remove the other set, e.g. ${cmd}-legacy-save | grep KUBE; ${cmd}-legacy -t nat -F KUBE-SERVICES, or kube-proxy --cleanup run with the other backend's binaries`,
      });
    }
  }
  // iptables-mode chains in the legacy backend while the nftables mode runs.
  if (view.modes.includes('nftables')) {
    for (const v of view.iptables.filter((x) => iptablesModeRules(x))) {
      f.push({
        id: 'leftover-iptables-rules',
        severity: 'warning',
        subject: label(v),
        message: `${label(v)} still holds iptables-mode service chains (${v.serviceChains.length}) next to the nftables mode's table: left by an earlier kube-proxy`,
        remedy: `remove them: nodeagent-proxy run --cleanup removes every mode's rules (restart the nftables proxy afterwards)`,
      });
    }
  }
  f.push(...oldNftLayout(view));
  return f;
}

function emptySnapshot(family: NftFamily): ProxySnapshot {
  const built = buildProxySnapshots({
    nodeName: 'doctor',
    nodeIPs: ['10.0.0.1', 'fd00::1'],
    services: [],
    endpointSlices: [],
  });
  return family === 'ip6' ? built.v6 : built.v4;
}

/** Base chains (name → hook) of the current layouts, from the renderer itself. */
function currentBaseChains(family: NftFamily): Map<string, string> {
  const snap = emptySnapshot(family);
  const out = new Map<string, string>();
  for (const layout of ['kube-proxy', 'optimized'] as const) {
    const t = tableFromText(renderNftables(snap, { layout }), family);
    for (const [name, c] of t.chains) if (c.hook) out.set(name, hookText(c.hook));
  }
  return out;
}

function hookText(
  h: NonNullable<NftTableState['chains'] extends Map<string, infer C> ? C : never>['hook'],
): string {
  return h === undefined ? '' : `type ${h.type} hook ${h.hook} priority ${h.priority}`;
}

function oldNftLayout(view: NodeView): Finding[] {
  const f: Finding[] = [];
  for (const [family, t] of view.nft) {
    const current = currentBaseChains(family);
    for (const [name, c] of t.chains) {
      if (!c.hook) continue;
      const want = current.get(name);
      const have = hookText(c.hook);
      if (want === undefined || want !== have) {
        f.push({
          id: 'old-nft-layout',
          severity: 'warning',
          subject: `table ${family} kube-proxy chain ${name}`,
          message:
            want === undefined
              ? `base chain ${name} (${have}) is not part of the current kube-proxy layout: left by an older kube-proxy`
              : `base chain ${name} is ${have}, the current layout has ${want}`,
          remedy: `delete the table and let the proxy recreate it: nft delete table ${family} kube-proxy (the next full sync rebuilds it), or restart the proxy`,
        });
      }
    }
  }
  return f;
}

/** Service chains that no dispatch rule or map element refers to. */
export function staleChainFindings(view: NodeView): Finding[] {
  const f: Finding[] = [];
  for (const v of view.iptables) {
    for (const [tableName, table] of v.tables) {
      const referenced = new Set<string>();
      for (const rules of table.chains.values()) {
        for (const r of rules) {
          const j = r.params.get('-j')?.value ?? r.params.get('-g')?.value;
          if (j) referenced.add(j);
        }
      }
      for (const name of table.chains.keys()) {
        if (KUBE_SERVICE_CHAIN.test(name) && !referenced.has(name)) {
          f.push({
            id: 'stale-chain',
            severity: 'warning',
            subject: `${label(v)} ${tableName} ${name}`,
            message: `${label(v)} table ${tableName}: chain ${name} is not referenced by any rule (a service whose dispatch rule is gone, or a chain left behind)`,
            remedy:
              'a full resync reprograms the dispatch rules and deletes stale chains: restart the proxy (or wait for its periodic full sync)',
          });
        }
      }
    }
  }
  for (const [family, t] of view.nft) {
    const fixed = new Set(currentFixedChains(family));
    const referenced = new Set<string>();
    const refs = (text: string) => {
      for (const m of text.matchAll(/\b(?:jump|goto) ([^\s,{}]+)/g)) referenced.add(m[1]!);
    };
    for (const c of t.chains.values()) for (const r of c.rules) refs(r);
    for (const s of t.sets.values()) for (const e of s.elements.values()) if (e.value) refs(e.value);
    for (const [name, c] of t.chains) {
      if (c.hook || fixed.has(name) || referenced.has(name)) continue;
      f.push({
        id: 'stale-chain',
        severity: 'warning',
        subject: `table ${family} kube-proxy chain ${name}`,
        message: `table ${family} kube-proxy: chain ${name} is not referenced by any rule or map element`,
        remedy:
          'kube-proxy deletes unreferenced chains some seconds after a sync; if it stays, restart the proxy (a full sync deletes it)',
      });
    }
  }
  return f;
}

function currentFixedChains(family: NftFamily): string[] {
  const snap = emptySnapshot(family);
  return ['kube-proxy', 'optimized'].flatMap((layout) => [
    ...tableFromText(renderNftables(snap, { layout: layout as 'kube-proxy' }), family).chains.keys(),
  ]);
}

/** Sysctls, modules, tools and versions. */
export function prerequisiteFindings(r: NodeReadings, view: NodeView): Finding[] {
  const f: Finding[] = [];
  const s = r.sysctls;
  if (s['net.ipv4.ip_forward'] !== undefined && s['net.ipv4.ip_forward'] !== '1') {
    f.push({
      id: 'ip-forward',
      severity: 'error',
      subject: 'net.ipv4.ip_forward',
      message: `net.ipv4.ip_forward is ${s['net.ipv4.ip_forward']}: packets DNAT-ed to an endpoint on another node or in a pod are not forwarded`,
      remedy: 'sysctl -w net.ipv4.ip_forward=1 (and persist it in /etc/sysctl.d/)',
    });
  }
  if (
    view.nft.has('ip6') &&
    s['net.ipv6.conf.all.forwarding'] !== undefined &&
    s['net.ipv6.conf.all.forwarding'] !== '1'
  ) {
    f.push({
      id: 'ipv6-forwarding',
      severity: 'error',
      subject: 'net.ipv6.conf.all.forwarding',
      message: 'net.ipv6.conf.all.forwarding is 0 while IPv6 service rules are programmed',
      remedy: 'sysctl -w net.ipv6.conf.all.forwarding=1',
    });
  }
  const bridge = s['net.bridge.bridge-nf-call-iptables'];
  if (bridge === undefined) {
    f.push({
      id: 'br-netfilter',
      severity: 'warning',
      subject: 'br_netfilter',
      message:
        'br_netfilter is not loaded (no net.bridge.bridge-nf-call-iptables): with a bridge CNI, pod-to-service traffic between pods on the same bridge bypasses the service rules',
      remedy:
        'modprobe br_netfilter && sysctl -w net.bridge.bridge-nf-call-iptables=1 (persist in /etc/modules-load.d/)',
    });
  } else if (bridge !== '1') {
    f.push({
      id: 'br-netfilter',
      severity: 'warning',
      subject: 'net.bridge.bridge-nf-call-iptables',
      message:
        'net.bridge.bridge-nf-call-iptables is 0: bridged pod traffic is not seen by the service rules',
      remedy: 'sysctl -w net.bridge.bridge-nf-call-iptables=1',
    });
  }
  const localhostNodePorts = view.iptables.some((v) =>
    (v.tables.get('nat')?.chains.get('KUBE-SERVICES') ?? []).some(
      // kube-proxy's catch-all NodePort rule; `! -d 127.0.0.0/8` or per-address `-d IP` rules
      // (--iptables-localhost-nodeports=false, --nodeport-addresses) leave 127.0.0.1 out.
      (rule) =>
        rule.params.get('-j')?.value === 'KUBE-NODEPORTS' &&
        (rule.params.get('-d') === undefined || rule.params.get('-d')!.value.startsWith('127.')),
    ),
  );
  if (
    view.modes.includes('iptables') &&
    localhostNodePorts &&
    s['net.ipv4.conf.all.route_localnet'] !== undefined &&
    s['net.ipv4.conf.all.route_localnet'] !== '1'
  ) {
    f.push({
      id: 'route-localnet',
      severity: 'warning',
      subject: 'net.ipv4.conf.all.route_localnet',
      message:
        'net.ipv4.conf.all.route_localnet is 0 while the iptables rules accept NodePorts on 127.0.0.1: connections to 127.0.0.1:<nodePort> fail',
      remedy:
        'sysctl -w net.ipv4.conf.all.route_localnet=1 (kube-proxy sets it itself), or run with --iptables-localhost-nodeports=false',
    });
  }
  const v = r.versions;
  if (v.conntrack === undefined) {
    f.push({
      id: 'conntrack-missing',
      severity: 'warning',
      subject: 'conntrack',
      message:
        'the conntrack binary is not installed: stale UDP conntrack entries cannot be cleared when endpoints change, so UDP clients keep reaching removed endpoints',
      remedy: 'install conntrack (conntrack-tools)',
    });
  }
  f.push({
    id: 'versions',
    severity: 'info',
    message: `versions: kernel ${v.kernel ?? '?'}, nft ${v.nft ?? 'not installed'}, iptables ${v.iptables ?? 'not installed'}, conntrack ${v.conntrack ?? 'not installed'}, ipvsadm ${v.ipvsadm ?? 'not installed'}`,
  });
  if (view.modes.includes('nftables') && v.nft !== undefined && versionLess(v.nft, '1.0.1')) {
    f.push({
      id: 'nft-version',
      severity: 'error',
      subject: 'nft',
      message: `nft ${v.nft} is older than 1.0.1, which kube-proxy's nftables mode needs`,
      remedy: 'install nftables 1.0.1 or newer',
    });
  }
  if (view.modes.includes('nftables') && v.kernel !== undefined && versionLess(v.kernel, '5.13')) {
    f.push({
      id: 'kernel-version',
      severity: 'error',
      subject: 'kernel',
      message: `kernel ${v.kernel} is older than 5.13, which kube-proxy's nftables mode needs`,
      remedy: 'use the iptables mode on this node, or a newer kernel',
    });
  }
  return f;
}

/** `a < b` for dotted versions. */
export function versionLess(a: string, b: string): boolean {
  const x = a.split('.').map(Number);
  const y = b.split('.').map(Number);
  for (let i = 0; i < Math.max(x.length, y.length); i++) {
    const d = (x[i] ?? 0) - (y[i] ?? 0);
    if (d !== 0) return d < 0;
  }
  return false;
}

const MAX_DRIFT_LINES = 20;

/** The differences between the rules `rendered` implies and what the kernel holds. */
export function driftFindings(view: NodeView, rendered: BackendRules, readings: NodeReadings): Finding[] {
  const diffs: string[] = [];
  let where = '';
  if (rendered.backend === 'iptables') {
    const family = rendered.options.ipFamily === 'IPv6' ? 6 : 4;
    const live =
      view.iptables.find((v) => v.backend === 'nft' && v.family === family && iptablesModeRules(v)) ??
      view.iptables.find((v) => v.family === family && iptablesModeRules(v));
    where = live ? label(live) : `${family === 6 ? 'ip6tables' : 'iptables'}`;
    const want = iptTables(rendered.text);
    const have = live?.tables ?? new Map<string, IptTable>();
    for (const [tableName, t] of want) {
      const k = have.get(tableName);
      const names = new Set([
        ...t.chains.keys(),
        ...[...(k?.chains.keys() ?? [])].filter((c) => KUBE_SERVICE_CHAIN.test(c)),
      ]);
      for (const chain of names) {
        if (!chain.startsWith('KUBE-')) continue;
        const w = (t.chains.get(chain) ?? []).map(canonicalIptablesRule);
        const h = k?.chains.get(chain)?.map(canonicalIptablesRule);
        if (h === undefined) {
          diffs.push(`${tableName} ${chain}: missing in the kernel`);
          continue;
        }
        if (!t.chains.has(chain)) {
          diffs.push(`${tableName} ${chain}: in the kernel, not implied by the objects`);
          continue;
        }
        diffs.push(...ruleDiff(`${tableName} ${chain}`, w, h));
      }
    }
  } else if (rendered.backend === 'nftables') {
    const family = rendered.ruleset.family;
    where = `table ${family} kube-proxy`;
    const want = tableFromText(rendered.text, family);
    const have = view.nft.get(family);
    if (have === undefined) diffs.push(`table ${family} kube-proxy: missing in the kernel`);
    else {
      for (const [name, c] of want.chains) {
        const k = have.chains.get(name);
        if (!k) diffs.push(`chain ${name}: missing in the kernel`);
        else
          diffs.push(
            ...ruleDiff(`chain ${name}`, c.rules.map(normalizeKernelRule), k.rules.map(normalizeKernelRule)),
          );
      }
      for (const name of have.chains.keys()) {
        if (!want.chains.has(name)) diffs.push(`chain ${name}: in the kernel, not implied by the objects`);
      }
      for (const [name, s] of want.sets) {
        const k = have.sets.get(name);
        if (!k) {
          diffs.push(`${s.kind} ${name}: missing in the kernel`);
          continue;
        }
        for (const [key, e] of s.elements) {
          const ke = k.elements.get(key);
          if (!ke)
            diffs.push(
              `${s.kind} ${name}: element ${key}${e.value ? ` : ${e.value}` : ''} missing in the kernel`,
            );
          else if ((ke.value ?? '') !== (e.value ?? '')) {
            diffs.push(`${s.kind} ${name}: element ${key} is ${ke.value} in the kernel, ${e.value} implied`);
          }
        }
        for (const [key, e] of k.elements) {
          // Affinity sets are written by packets (elements with timeouts), not by syncs.
          if (!s.elements.has(key) && s.timeoutSeconds === undefined) {
            diffs.push(
              `${s.kind} ${name}: element ${key}${e.value ? ` : ${e.value}` : ''} in the kernel, not implied`,
            );
          }
        }
      }
    }
  } else {
    where = 'IPVS';
    const want = new Set(
      rendered.plan.virtualServers.map((v) => `${v.protocol} ${joinHostPort(v.address, v.port)}`),
    );
    const have = new Set(ipvsVirtualServers(readings.ipvs));
    for (const w of want) if (!have.has(w)) diffs.push(`virtual server ${w}: missing in the kernel`);
    for (const h of have)
      if (!want.has(h)) diffs.push(`virtual server ${h}: in the kernel, not implied by the objects`);
  }
  if (diffs.length === 0) {
    return [
      {
        id: 'drift',
        severity: 'info',
        subject: where,
        message: `${where}: the kernel's ${rendered.backend} rules match what the objects imply (${rendered.programmedPorts} service port(s))`,
      },
    ];
  }
  const shown = diffs.slice(0, MAX_DRIFT_LINES);
  if (diffs.length > shown.length) shown.push(`... and ${diffs.length - shown.length} more`);
  return shown.map((d) => ({
    id: 'drift',
    severity: 'error' as const,
    subject: where,
    message: `drift in ${where}: ${d}`,
    remedy:
      'the proxy has not synced these objects (is it running and watching this API server? see its log and kubeproxy_sync_proxy_rules_last_timestamp_seconds); a restart forces a full sync',
  }));
}

const MARK_TARGETS: Readonly<Record<string, (v: string) => string>> = {
  '--or-mark': (v) => `${v}/${v}`,
  '--xor-mark': (v) => `${v}/0x0`,
  '--set-mark': (v) => (v.includes('/') ? v : `${v}/0xffffffff`),
};

function hex(v: string): string {
  return v
    .split('/')
    .map((x) => (/^(0x[0-9a-f]+|\d+)$/i.test(x) ? `0x${Number(x).toString(16)}` : x))
    .join('/');
}

/**
 * A rule in a form where the restore text the renderer writes and the text iptables-save
 * prints for the same rule are equal: options sorted, `/32` and `/128` host masks dropped,
 * MARK's `--or-mark`/`--xor-mark`/`--set-mark` as the `--set-xmark` iptables-save prints,
 * probabilities and marks as numbers, the default `--reject-with` dropped, `-m` modules
 * implied by their options.
 */
export function canonicalIptablesRule(r: ParsedRule): string {
  const parts: string[] = [];
  for (const [name, v] of r.params) {
    let value = v.value;
    let key = name;
    if (name === '-s' || name === '-d') value = value.replace(/\/(32|128)$/, '');
    if (name === '--probability') value = String(Number(value));
    if (MARK_TARGETS[name] !== undefined) {
      key = '--set-xmark';
      value = MARK_TARGETS[name]!(value);
    }
    if (key === '--set-xmark' || name === '--mark') value = hex(value);
    if (name === '--reject-with' && /^icmp6?-port-unreachable$/.test(value)) continue;
    if (name === '--match-set') continue;
    parts.push(`${v.negated ? '! ' : ''}${key} ${value}`);
  }
  for (const m of r.setMatches) parts.push(`${m.negated ? '! ' : ''}--match-set ${m.set} ${m.flags}`);
  return `-A ${r.chain} ${parts.sort().join(' ')}`;
}

function ruleDiff(where: string, want: readonly string[], have: readonly string[]): string[] {
  const out: string[] = [];
  const h = new Set(have);
  const w = new Set(want);
  for (const r of want) if (!h.has(r)) out.push(`${where}: rule missing in the kernel: ${oneLine(r)}`);
  for (const r of have) if (!w.has(r)) out.push(`${where}: rule in the kernel, not implied: ${oneLine(r)}`);
  if (out.length === 0 && want.join('\n') !== have.join('\n')) out.push(`${where}: rules in another order`);
  return out;
}

/** A service destination found in the live rules. */
interface Destination {
  readonly kind: string;
  readonly servicePort: string;
  readonly protocol: string;
  readonly ip: string | undefined;
  readonly port: number;
}

/** `ns/name` and the optional port (name or number) a trace is about. */
export interface ServiceQuery {
  /** Namespace. */
  readonly namespace: string;
  /** Name. */
  readonly name: string;
  /** Port name or number; undefined = every port. */
  readonly port: string | undefined;
}

function portMatches(q: ServiceQuery, portName: string, port: number): boolean {
  return q.port === undefined || q.port === portName || q.port === String(port);
}

function iptablesDestinations(v: IptablesView, q: ServiceQuery): Destination[] {
  const out: Destination[] = [];
  const nat = v.tables.get('nat');
  const filter = v.tables.get('filter');
  const prefix = `${q.namespace}/${q.name}:`;
  const rules = [
    ...(nat?.chains.get('KUBE-SERVICES') ?? []),
    ...(nat?.chains.get('KUBE-NODEPORTS') ?? []),
    ...(filter?.chains.get('KUBE-SERVICES') ?? []),
    ...(filter?.chains.get('KUBE-EXTERNAL-SERVICES') ?? []),
    ...(filter?.chains.get('KUBE-NODEPORTS') ?? []),
  ];
  const seen = new Set<string>();
  for (const r of rules) {
    const comment = r.params.get('--comment')?.value ?? '';
    if (!comment.startsWith(prefix)) continue;
    const rest = comment.slice(prefix.length);
    const portName = rest.split(' ')[0]!;
    const dport = Number(r.params.get('--dport')?.value);
    if (!Number.isInteger(dport)) continue;
    const d = r.params.get('-d')?.value.replace(/\/(32|128)$/, '');
    const kind =
      r.chain === 'KUBE-NODEPORTS' || (r.chain === 'KUBE-EXTERNAL-SERVICES' && d === undefined)
        ? 'NodePort'
        : rest.includes('cluster IP') || rest.includes('has no endpoints')
          ? 'ClusterIP'
          : 'ExternalIP/LoadBalancer';
    if (!portMatches(q, portName, dport)) continue;
    const key = `${kind} ${d} ${dport}`;
    if (seen.has(key)) continue;
    seen.add(key);
    out.push({
      kind,
      servicePort: `${q.namespace}/${q.name}:${portName}`,
      protocol: (r.params.get('-p')?.value ?? 'tcp').toUpperCase(),
      ip: kind === 'NodePort' ? undefined : d,
      port: dport,
    });
  }
  return out;
}

const NFT_CHAIN_SERVICE = /^[a-z]+-[A-Z0-9]{8}-([^/]+)\/([^/]+)\/([a-z]+)\/(.+)$/;

function nftDestinations(t: NftTableState, q: ServiceQuery): Destination[] {
  const out: Destination[] = [];
  const matches = (value: string | undefined, comment: string | undefined) => {
    const target = /goto (\S+)/.exec(value ?? '')?.[1];
    const m = target ? NFT_CHAIN_SERVICE.exec(target) : null;
    if (m && m[1] === q.namespace && m[2] === q.name) return m[4]!;
    const c = comment ? /^([^/]+)\/([^:]+):(.*)$/.exec(comment) : null;
    if (c && c[1] === q.namespace && c[2] === q.name) return c[3]!;
    return undefined;
  };
  for (const [name, s] of t.sets) {
    if (s.kind !== 'map') continue;
    for (const [key, e] of s.elements) {
      const portName = matches(e.value, e.comment);
      if (portName === undefined) continue;
      const parts = key.split(' . ').map((p) => p.trim());
      const nodePort = parts.length === 2;
      const ip = nodePort ? undefined : parts[0];
      const proto = nodePort ? parts[0]! : parts[1]!;
      const port = Number(nodePort ? parts[1] : parts[2]);
      if (!Number.isInteger(port) || !portMatches(q, portName, port)) continue;
      const kind = nodePort
        ? 'NodePort'
        : name.includes('nodeport')
          ? 'NodePort'
          : e.value?.includes('external-') || name === 'firewall-ips'
            ? 'ExternalIP/LoadBalancer'
            : 'ClusterIP';
      out.push({
        kind,
        servicePort: `${q.namespace}/${q.name}:${portName}`,
        protocol: proto.toUpperCase(),
        ip,
        port,
      });
    }
  }
  const seen = new Set<string>();
  return out.filter((d) => {
    const k = `${d.kind} ${d.ip} ${d.port} ${d.protocol}`;
    if (seen.has(k)) return false;
    seen.add(k);
    return true;
  });
}

/** Traces the Service's destinations (found in the live rules) from `sourceIP`. */
export function traceService(
  view: NodeView,
  readings: NodeReadings,
  q: ServiceQuery,
  sourceIP: string,
  nodeIPs: readonly string[],
): { traces: ServiceTrace[]; findings: Finding[] } {
  const traces: ServiceTrace[] = [];
  const findings: Finding[] = [];
  const family = sourceIP.includes(':') ? 6 : 4;
  const localIPs = nodeIPs.length > 0 ? nodeIPs : readings.addresses;
  const nodeIP = localIPs.find((ip) => ip.includes(':') === (family === 6));
  const subject = `Service ${q.namespace}/${q.name}${q.port === undefined ? '' : ` port ${q.port}`}`;
  const dest = (d: Destination) => d.ip ?? nodeIP;
  for (const mode of view.modes) {
    if (mode === 'iptables') {
      const v =
        view.iptables.find((x) => x.backend === 'nft' && x.family === family && iptablesModeRules(x)) ??
        view.iptables.find((x) => x.family === family && iptablesModeRules(x));
      if (!v) continue;
      const text =
        family === 6
          ? v.backend === 'nft'
            ? readings.iptablesNft.v6
            : readings.iptablesLegacy.v6
          : v.backend === 'nft'
            ? readings.iptablesNft.v4
            : readings.iptablesLegacy.v4;
      for (const d of iptablesDestinations(v, q)) {
        const ip = dest(d);
        if (ip === undefined) continue;
        try {
          const r = traceIptables(kubeRulesOnly(text ?? ''), {
            sourceIP,
            destIP: ip,
            destPort: d.port,
            protocol: d.protocol as 'TCP',
            nodeIPs: localIPs,
          });
          traces.push(toTrace('iptables', d, sourceIP, ip, r));
        } catch (e) {
          findings.push(traceFailed(subject, 'iptables', ip, d.port, e));
        }
      }
    } else if (mode === 'nftables') {
      const t = view.nft.get(family === 6 ? 'ip6' : 'ip');
      if (!t) continue;
      const tracer = new NftTracer(t, localIPs);
      for (const d of nftDestinations(t, q)) {
        const ip = dest(d);
        if (ip === undefined) continue;
        try {
          const r = tracer.trace({ sourceIP, destIP: ip, destPort: d.port, protocol: d.protocol as 'TCP' });
          traces.push(toTrace('nftables', d, sourceIP, ip, r));
        } catch (e) {
          findings.push(traceFailed(subject, 'nftables', ip, d.port, e));
        }
      }
    }
  }
  if (traces.length === 0 && findings.length === 0) {
    findings.push({
      id: 'service-not-programmed',
      severity: 'error',
      subject,
      message: `${subject}: no dispatch rule or map element in the kernel leads to this service (${view.modes.length === 0 ? 'no proxy rules at all' : `looked in ${view.modes.filter((m) => m !== 'ipvs').join(', ') || 'no traceable mode'}`}); clients get no load balancing for it`,
      remedy:
        'check the Service exists with a ClusterIP and this port (kubectl get svc), that it is not headless, and that the proxy synced since it was created',
    });
  }
  for (const t of traces) {
    const where = `${t.protocol.toLowerCase()} ${t.sourceIP} -> ${joinHostPort(t.destIP, t.destPort)} (${t.kind} of ${t.servicePort}, ${t.mode})`;
    const bad = t.outcome === 'REJECT' || t.outcome === 'DROP' || t.outcome === 'untouched';
    findings.push({
      id: 'service-trace',
      severity: bad ? 'warning' : 'info',
      subject,
      message: `${where}: ${describeOutcome(t)}`,
      ...(bad ? { remedy: remedyFor(t) } : {}),
    });
  }
  return { traces, findings };
}

/**
 * The part of an iptables-save text the tracer follows: kube-proxy's `KUBE-*` chains and the
 * built-in chains' jumps into them (other programs' rules, e.g. a CNI's, are left out, as
 * are the default `--reject-with icmp-port-unreachable` the tracer does not need).
 */
export function kubeRulesOnly(save: string): string {
  return save
    .split('\n')
    .filter((l) => {
      if (!l.startsWith('-A ')) return true;
      const chain = l.split(' ')[1] ?? '';
      return chain.startsWith('KUBE-') || / -j KUBE-/.test(l);
    })
    .filter((l) => !l.startsWith(':') || l.startsWith(':KUBE-') || / (ACCEPT|DROP) \[/.test(l))
    .map((l) => l.replace(/ --reject-with icmp6?-port-unreachable$/, ''))
    .join('\n');
}

function traceFailed(subject: string, mode: DetectedMode, ip: string, port: number, e: unknown): Finding {
  return {
    id: 'trace-failed',
    severity: 'warning',
    subject,
    message: `${subject}: the ${mode} tracer cannot follow the live rules for ${ip}:${port}: ${oneLine(e instanceof Error ? e.message : String(e))}`,
    remedy: `read the rules by hand: ${mode === 'iptables' ? 'iptables-save -t nat | grep KUBE' : 'nft list table ip kube-proxy'}`,
  };
}

function toTrace(
  mode: DetectedMode,
  d: Destination,
  sourceIP: string,
  destIP: string,
  r: { outcome: string; endpoints: readonly string[]; masquerade: boolean },
): ServiceTrace {
  return {
    mode,
    kind: d.kind,
    servicePort: d.servicePort,
    protocol: d.protocol,
    sourceIP,
    destIP,
    destPort: d.port,
    outcome: r.outcome,
    endpoints: [...r.endpoints].sort(),
    masquerade: r.masquerade,
  };
}

function describeOutcome(t: ServiceTrace): string {
  switch (t.outcome) {
    case 'endpoints':
      return `DNAT to ${t.endpoints.join(', ')}${t.masquerade ? ' (masqueraded)' : ''}`;
    case 'REJECT':
      return 'rejected: the service port has no ready endpoints';
    case 'DROP':
      return 'dropped: no local endpoint under externalTrafficPolicy/internalTrafficPolicy Local, or the source is outside loadBalancerSourceRanges';
    case 'ACCEPT':
      return 'accepted without DNAT';
    default:
      return 'no service rule matched this packet';
  }
}

function remedyFor(t: ServiceTrace): string {
  if (t.outcome === 'REJECT') {
    return 'check the EndpointSlices of the service (kubectl get endpointslices -l kubernetes.io/service-name=NAME): are the pods Ready and does the port name match?';
  }
  if (t.outcome === 'DROP') {
    return "with a Local traffic policy only nodes with a ready endpoint answer; check the policy, the endpoints' nodeName and loadBalancerSourceRanges";
  }
  return 'the rules name the service but this destination does not reach it: a full resync of the proxy rebuilds the dispatch';
}
