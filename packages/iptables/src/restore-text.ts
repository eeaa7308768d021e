/**
 * Serialising a rendered ruleset into iptables-restore input: the single payload kube-proxy
 * writes, and the chunked sequence this package applies on full syncs.
 *
 * @module
 */
import type { IptablesRuleset, ServicePortRules } from './render.js';

/** What a restore payload deletes besides what it writes. */
export interface RestoreTextOptions {
  /**
   * Nat chains to flush and delete (`:CHAIN` + `-X CHAIN`): per-service chains that exist in
   * the kernel but are no longer written.
   * @default []
   */
  readonly staleNatChains?: Iterable<string>;
  /**
   * Write the shared chains (the filter table, nat KUBE-SERVICES, KUBE-NODEPORTS,
   * KUBE-POSTROUTING, KUBE-MARK-MASQ). kube-proxy always does; leaving them out is only
   * correct when the kernel already holds exactly this content (see {@link sharedChainsText}).
   * @default true
   */
  readonly includeSharedChains?: boolean;
}

const chainLine = (c: string): string => `:${c} - [0:0]\n`;

/** Newline-terminated lines as one flat string (see service-port-rules.ts: no nested ropes). */
function lines(l: readonly string[]): string {
  return l.length === 0 ? '' : [...l, ''].join('\n');
}

// Strings are built by concatenation (V8 ropes): far less garbage than one array entry per
// rule when a payload holds hundreds of thousands of rules.
function filterSection(rs: IptablesRuleset): string {
  let out = '*filter\n';
  for (const c of rs.filterChains) out += chainLine(c);
  out += lines(rs.filterHeadRules);
  for (const sp of rs.servicePorts) out += sp.filterRules;
  out += lines(rs.filterTailRules);
  return out + 'COMMIT\n';
}

/**
 * The restore payload kube-proxy writes for this ruleset in one `iptables-restore --noflush`
 * call: the filter table, then the nat table with the fixed chains, the own chains of every
 * service port the render wrote, flush + delete of `staleNatChains`, and the KUBE-SERVICES
 * tail rule.
 */
export function restoreText(rs: IptablesRuleset, opts: RestoreTextOptions = {}): string {
  const shared = opts.includeSharedChains ?? true;
  let out = shared ? filterSection(rs) + '*nat\n' : '*nat\n';
  if (shared) for (const c of rs.natChains) out += chainLine(c);
  for (const sp of rs.servicePorts) if (sp.chains) for (const c of sp.chains) out += chainLine(c);
  const stale = [...(opts.staleNatChains ?? [])];
  for (const c of stale) out += chainLine(c);
  if (shared) out += lines(rs.natHeadRules);
  for (const sp of rs.servicePorts) {
    if (shared) out += sp.dispatchRules;
    if (sp.chainRules) out += sp.chainRules;
  }
  for (const c of stale) out += `-X ${c}\n`;
  return out + (shared ? lines(rs.natTailRules) : '') + 'COMMIT\n';
}

/**
 * The full content of the shared chains as one string: equal strings mean a sync may leave
 * those chains alone.
 */
export function sharedChainsText(rs: IptablesRuleset): string {
  let out = filterSection(rs) + rs.natChains.join(' ') + '\n' + lines(rs.natHeadRules);
  for (const sp of rs.servicePorts) out += sp.dispatchRules;
  return out + lines(rs.natTailRules);
}

/** Options for {@link restoreChunks}. */
export interface RestoreChunksOptions extends RestoreTextOptions {
  /**
   * Maximum number of nat rules in one per-service chunk (a chunk always holds whole
   * service ports).
   * @default 2000
   */
  readonly maxRulesPerChunk?: number;
  /**
   * Service ports whose own chains may be written before the switch: chains no rule in the
   * kernel reaches yet (new names) or whose content the kernel already holds. Every other
   * service port's chains go into the last payload, together with the switch.
   * @default every service port (no kernel content known: the caller accepts early writes)
   */
  readonly early?: (sp: ServicePortRules) => boolean;
}

/** One payload of {@link restoreChunksPlan}, with the own chains it writes. */
export interface RestoreChunk {
  /** The iptables-restore input. */
  readonly text: string;
  /** Per-service chains it writes, with the port-level rules text each belongs to. */
  readonly chains: ReadonlyMap<string, string>;
}

/**
 * The same ruleset as {@link restoreText}, cut into several payloads applied in order, each
 * atomically, such that every packet meets either the previous rules or the new ones for its
 * service — make before break:
 *
 * 1. the own chains of the service ports `early` allows (new chain names nothing jumps to
 *    yet, or content the kernel already holds), a bounded number of rules per payload (each
 *    chain only jumps to chains of the same service port or KUBE-MARK-MASQ, which the caller
 *    ensures exists);
 * 2. last, in one payload: KUBE-POSTROUTING / KUBE-MARK-MASQ, the whole filter table, nat
 *    KUBE-SERVICES / KUBE-NODEPORTS (the switch), the own chains of every other service port
 *    (chains the previous rules reach and whose content changes), and the deletion of stale
 *    chains.
 *
 * Until the last payload, the previous dispatch only reaches chains with their previous
 * content; the last payload switches everything a packet can meet at once.
 */
export function restoreChunksPlan(rs: IptablesRuleset, opts: RestoreChunksOptions = {}): RestoreChunk[] {
  const maxRules = opts.maxRulesPerChunk ?? 2000;
  const early = opts.early ?? (() => true);
  const chunks: RestoreChunk[] = [];
  const late: ServicePortRules[] = [];

  let batch: ServicePortRules[] = [];
  let batchRules = 0;
  const chainsOf = (ports: readonly ServicePortRules[]): Map<string, string> => {
    const m = new Map<string, string>();
    for (const sp of ports) for (const c of sp.chains!) m.set(c, sp.chainRules!);
    return m;
  };
  const flush = (): void => {
    if (batch.length === 0) return;
    let out = '*nat\n';
    for (const sp of batch) for (const c of sp.chains!) out += chainLine(c);
    for (const sp of batch) out += sp.chainRules!;
    chunks.push({ text: out + 'COMMIT\n', chains: chainsOf(batch) });
    batch = [];
    batchRules = 0;
  };
  for (const sp of rs.servicePorts) {
    if (!sp.chains || sp.chains.length === 0) continue;
    if (!early(sp)) {
      late.push(sp);
      continue;
    }
    if (batchRules > 0 && batchRules + sp.chainRuleCount > maxRules) flush();
    batch.push(sp);
    batchRules += sp.chainRuleCount;
  }
  flush();

  let out = filterSection(rs) + '*nat\n';
  for (const c of rs.natChains) out += chainLine(c);
  for (const sp of late) for (const c of sp.chains!) out += chainLine(c);
  const stale = [...(opts.staleNatChains ?? [])];
  for (const c of stale) out += chainLine(c);
  out += lines(rs.natHeadRules);
  for (const sp of rs.servicePorts) out += sp.dispatchRules;
  for (const sp of late) out += sp.chainRules!;
  for (const c of stale) out += `-X ${c}\n`;
  chunks.push({ text: out + lines(rs.natTailRules) + 'COMMIT\n', chains: chainsOf(late) });
  return chunks;
}

/** The payloads of {@link restoreChunksPlan}. */
export function restoreChunks(rs: IptablesRuleset, opts: RestoreChunksOptions = {}): string[] {
  return restoreChunksPlan(rs, opts).map((c) => c.text);
}
