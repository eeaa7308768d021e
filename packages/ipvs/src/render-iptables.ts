/**
 * The residual iptables rules as `iptables-restore` text (filter table, then nat, each chain
 * declared `:CHAIN - [0:0]` and so flushed and rewritten), and the jump rules from the
 * built-in chains that kube-proxy ensures separately with `iptables -I`.
 *
 * @module
 */
import { parseCIDR, parseIP } from '@nodeagent/core';
import { quoteIptablesComment } from '@nodeagent/proxy-state';
import type { ResidualIptables, ResidualRule, RuleMatch, RuleTarget } from './residual-iptables.js';
import {
  KUBE_FORWARD,
  KUBE_IPVS_FILTER,
  KUBE_IPVS_OUT_FILTER,
  KUBE_NODE_PORT,
  KUBE_POSTROUTING,
  KUBE_PROXY_FIREWALL,
  KUBE_SERVICES,
} from './residual-iptables.js';

/** A rule that cannot be written as iptables-restore text (never produced by the planner). */
export class IptablesRenderError extends Error {
  override readonly name = 'IptablesRenderError';
}

const NAME_RE = /^[A-Za-z0-9_.:+-]{1,31}$/;
const MARK_RE = /^0x[0-9a-f]{1,8}(\/0x[0-9a-f]{1,8})?$/;
const STATES = new Set(['NEW', 'ESTABLISHED', 'RELATED', 'INVALID', 'UNTRACKED', 'SNAT', 'DNAT']);

function word(what: string, s: string, re = NAME_RE): string {
  if (!re.test(s)) throw new IptablesRenderError(`${what} ${JSON.stringify(s)} cannot be written`);
  return s;
}

function address(s: string): string {
  const v = s.includes('/') ? parseCIDR(s)?.cidr : parseIP(s)?.ip;
  if (v === undefined) throw new IptablesRenderError(`${JSON.stringify(s)} is not an address or CIDR`);
  return s;
}

function matchArgs(m: RuleMatch): string[] {
  const not = (neg: boolean) => (neg ? ['!'] : []);
  switch (m.kind) {
    case 'source':
      return [...not(m.negated), '-s', address(m.cidr)];
    case 'in-interface':
      return [...not(m.negated), '-i', word('interface', m.name, /^[A-Za-z0-9_.@:-]{1,15}\+?$/)];
    case 'protocol':
      return ['-p', word('protocol', m.protocol, /^(tcp|udp|sctp)$/)];
    case 'comment':
      return ['-m', 'comment', '--comment', quoteIptablesComment(m.text)];
    case 'set':
      if (m.flags.length < 1 || m.flags.length > 6 || m.flags.some((f) => f !== 'src' && f !== 'dst')) {
        throw new IptablesRenderError(`set flags ${JSON.stringify(m.flags)} are invalid`);
      }
      return ['-m', 'set', '--match-set', word('set', m.set), m.flags.join(',')];
    case 'addrtype':
      return [
        '-m',
        'addrtype',
        ...not(m.negated),
        m.direction === 'src' ? '--src-type' : '--dst-type',
        'LOCAL',
      ];
    case 'physdev-is-in':
      return ['-m', 'physdev', ...not(m.negated), '--physdev-is-in'];
    case 'mark':
      return ['-m', 'mark', ...not(m.negated), '--mark', word('mark', m.mark, MARK_RE)];
    case 'ctstate':
      if (m.states.length === 0 || m.states.some((s) => !STATES.has(s))) {
        throw new IptablesRenderError(`conntrack states ${JSON.stringify(m.states)} are invalid`);
      }
      return ['-m', 'conntrack', '--ctstate', m.states.join(',')];
    case 'ipvs':
      if (!Number.isInteger(m.vport) || m.vport < 0 || m.vport > 65535) {
        throw new IptablesRenderError(`vport ${JSON.stringify(m.vport)} is invalid`);
      }
      return [
        '-m',
        'ipvs',
        '--vaddr',
        address(m.vaddr),
        '--vproto',
        word('protocol', m.vproto, /^(tcp|udp|sctp)$/),
        '--vport',
        String(m.vport),
      ];
  }
}

function targetArgs(t: RuleTarget): string[] {
  switch (t.kind) {
    case 'verdict':
      return ['-j', word('verdict', t.verdict, /^(ACCEPT|DROP|REJECT|RETURN)$/)];
    case 'jump':
      return ['-j', word('chain', t.chain)];
    case 'masquerade':
      return ['-j', 'MASQUERADE', ...(t.randomFully ? ['--random-fully'] : [])];
    case 'mark':
      return ['-j', 'MARK', t.op === 'or' ? '--or-mark' : '--xor-mark', word('mark', t.mark, MARK_RE)];
  }
}

/** One rule as an `-A CHAIN …` line. */
export function ruleLine(rule: ResidualRule): string {
  return [
    '-A',
    word('chain', rule.chain),
    ...rule.matches.flatMap(matchArgs),
    ...targetArgs(rule.target),
  ].join(' ');
}

/**
 * The residual rules as one `iptables-restore` payload (for `--noflush`: only the declared
 * chains are flushed and rewritten; the built-in chains are never touched).
 */
export function renderResidualIptables(iptables: ResidualIptables): string {
  const out: string[] = [];
  for (const [table, chains] of [
    ['filter', iptables.filterChains],
    ['nat', iptables.natChains],
  ] as const) {
    out.push(`*${table}`);
    for (const c of chains) out.push(`:${word('chain', c)} - [0:0]`);
    for (const r of iptables.rules) if (r.table === table) out.push(ruleLine(r));
    out.push('COMMIT');
  }
  return `${out.join('\n')}\n`;
}

/**
 * A jump from a built-in chain into one of ours (the same shape as `@nodeagent/iptables`'s
 * `JumpRule`, so its executor can ensure these).
 */
export interface IpvsJumpRule {
  /** Table (`filter`, `nat`). */
  readonly table: string;
  /** Built-in chain the rule is prepended to. */
  readonly sourceChain: string;
  /** Our chain it jumps to. */
  readonly targetChain: string;
  /** The rule's comment. */
  readonly comment: string;
  /** Extra match arguments before the comment (none for IPVS mode). */
  readonly extraArgs: readonly string[];
}

/** The jump rules kube-proxy's IPVS mode ensures (prepended with `iptables -I`), in its order. */
export function ipvsJumpRules(): IpvsJumpRule[] {
  const j = (table: string, sourceChain: string, targetChain: string, comment: string): IpvsJumpRule => ({
    table,
    sourceChain,
    targetChain,
    comment,
    extraArgs: [],
  });
  return [
    j('nat', 'OUTPUT', KUBE_SERVICES, 'kubernetes service portals'),
    j('nat', 'PREROUTING', KUBE_SERVICES, 'kubernetes service portals'),
    j('nat', 'POSTROUTING', KUBE_POSTROUTING, 'kubernetes postrouting rules'),
    j('filter', 'FORWARD', KUBE_FORWARD, 'kubernetes forwarding rules'),
    j('filter', 'INPUT', KUBE_NODE_PORT, 'kubernetes health check rules'),
    j('filter', 'INPUT', KUBE_PROXY_FIREWALL, 'kube-proxy firewall rules'),
    j('filter', 'FORWARD', KUBE_PROXY_FIREWALL, 'kube-proxy firewall rules'),
    j('filter', 'INPUT', KUBE_IPVS_FILTER, 'kubernetes ipvs access filter'),
    j('filter', 'OUTPUT', KUBE_IPVS_OUT_FILTER, 'kubernetes ipvs access filter'),
  ];
}
