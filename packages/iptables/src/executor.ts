/**
 * The side-effect boundary: everything that touches the kernel's iptables goes through an
 * {@link IptablesExecutor}. `SpawnIptablesExecutor` runs the real tools;
 * `FakeIptablesExecutor` (from `@nodeagent/iptables/testing`) applies the same semantics
 * to an in-memory table set.
 *
 * @module
 */
import { CommandError } from '@nodeagent/core';
import type { IPFamilyName } from '@nodeagent/proxy-state';

/** Flags of one iptables-restore call. */
export interface RestoreFlags {
  /**
   * Keep chains the payload does not mention (`--noflush`); a declared chain is flushed.
   * @default true
   */
  readonly noflush?: boolean;
  /**
   * Restore packet/byte counters from the payload (`--counters`).
   * @default true
   */
  readonly counters?: boolean;
}

/** A jump rule from a built-in chain into one of ours, ensured with `-C` then `-I`. */
export interface JumpRule {
  /** Table (`filter`, `nat`). */
  readonly table: string;
  /** Built-in chain the rule is prepended to (`INPUT`, `PREROUTING`, ...). */
  readonly sourceChain: string;
  /** Our chain it jumps to (created if missing). */
  readonly targetChain: string;
  /** Comment, or `''` for none. */
  readonly comment: string;
  /** Extra match arguments written before the comment (`-m conntrack --ctstate NEW`). */
  readonly extraArgs: readonly string[];
}

/** The kernel-facing operations the iptables backend needs. */
export interface IptablesExecutor {
  /** Address family this executor drives (`iptables` vs `ip6tables`). */
  readonly family: IPFamilyName;
  /** Applies a restore payload (atomically per table). @throws IptablesCommandError */
  restore(text: string, flags?: RestoreFlags): Promise<void>;
  /** The current rules as iptables-save text, of one table or all. */
  save(table?: string): Promise<string>;
  /** Creates missing target chains and prepends missing jump rules. */
  ensureJumps(jumps: readonly JumpRule[]): Promise<void>;
  /** Creates `chain` in `table` if it does not exist; returns true if it existed. */
  ensureChain(table: string, chain: string): Promise<boolean>;
  /** True if `chain` exists in `table`. */
  chainExists(table: string, chain: string): Promise<boolean>;
}

/** A failed iptables tool call. */
export class IptablesCommandError extends CommandError {
  override readonly name = 'IptablesCommandError';
}

/**
 * kube-proxy's jump rules (`iptablesJumpChains` plus the kubelet-duplicated KUBE-FIREWALL
 * ones), in the order it ensures them.
 * @param localhostNodePorts include the KUBE-FIREWALL jumps (IPv4 with localhost node ports).
 */
export function kubeProxyJumpRules(localhostNodePorts = true): JumpRule[] {
  const ctNew = ['-m', 'conntrack', '--ctstate', 'NEW'];
  const j = (
    table: string,
    targetChain: string,
    sourceChain: string,
    comment: string,
    extraArgs: string[],
  ): JumpRule => ({
    table,
    targetChain,
    sourceChain,
    comment,
    extraArgs,
  });
  const rules = [
    j('filter', 'KUBE-EXTERNAL-SERVICES', 'INPUT', 'kubernetes externally-visible service portals', ctNew),
    j('filter', 'KUBE-EXTERNAL-SERVICES', 'FORWARD', 'kubernetes externally-visible service portals', ctNew),
    j('filter', 'KUBE-NODEPORTS', 'INPUT', 'kubernetes health check service ports', []),
    j('filter', 'KUBE-SERVICES', 'FORWARD', 'kubernetes service portals', ctNew),
    j('filter', 'KUBE-SERVICES', 'OUTPUT', 'kubernetes service portals', ctNew),
    j('filter', 'KUBE-FORWARD', 'FORWARD', 'kubernetes forwarding rules', []),
    j('filter', 'KUBE-PROXY-FIREWALL', 'INPUT', 'kubernetes load balancer firewall', ctNew),
    j('filter', 'KUBE-PROXY-FIREWALL', 'OUTPUT', 'kubernetes load balancer firewall', ctNew),
    j('filter', 'KUBE-PROXY-FIREWALL', 'FORWARD', 'kubernetes load balancer firewall', ctNew),
    j('nat', 'KUBE-SERVICES', 'OUTPUT', 'kubernetes service portals', []),
    j('nat', 'KUBE-SERVICES', 'PREROUTING', 'kubernetes service portals', []),
    j('nat', 'KUBE-POSTROUTING', 'POSTROUTING', 'kubernetes postrouting rules', []),
  ];
  if (localhostNodePorts) {
    rules.push(j('filter', 'KUBE-FIREWALL', 'INPUT', '', []), j('filter', 'KUBE-FIREWALL', 'OUTPUT', '', []));
  }
  return rules;
}

/** The argv of a jump rule after the chain name: extra args, comment, `-j target`. */
export function jumpRuleArgs(jump: JumpRule): string[] {
  const args = [...jump.extraArgs];
  if (jump.comment !== '') args.push('-m', 'comment', '--comment', jump.comment);
  args.push('-j', jump.targetChain);
  return args;
}
