/**
 * Removing a backend's iptables chains (kube-proxy's `CleanupLeftovers` for the iptables side):
 * read the tables back, rewrite the built-in chains without the jumps into our chains, then
 * flush and delete our chains — all in one `iptables-restore --noflush` payload per table, so
 * other owners' chains are untouched.
 *
 * @module
 */
import { type IptablesExecutor, parseRestoreText, parseRule } from '@nodeagent/iptables';

const BUILTIN = new Set(['INPUT', 'FORWARD', 'OUTPUT', 'PREROUTING', 'POSTROUTING']);

/**
 * Deletes every chain `isOwned` accepts in `tables`, and every rule elsewhere that jumps to
 * one. Returns the names of the chains deleted, per table.
 */
export async function removeOwnedIptablesChains(
  executor: IptablesExecutor,
  tables: readonly string[],
  isOwned: (chain: string) => boolean,
): Promise<Record<string, string[]>> {
  const deleted: Record<string, string[]> = {};
  for (const table of tables) {
    const saved = await executor.save(table);
    const parsed = parseRestoreText(saved).find((t) => t.name === table);
    if (!parsed) continue;
    // Redeclaring a built-in chain resets its policy: keep the one it has.
    const policies = new Map<string, string>();
    for (const m of saved.matchAll(/^:(\S+) (\S+)/gm)) policies.set(m[1]!, m[2]!);
    const owned = [...parsed.chains.keys()].filter((c) => !BUILTIN.has(c) && isOwned(c));
    if (owned.length === 0) continue;
    const ownedSet = new Set(owned);
    const out = [`*${table}`];
    const rewrite = new Map<string, string[]>();
    for (const rule of parsed.rules) {
      if (ownedSet.has(rule.chain)) continue;
      const list = rewrite.get(rule.chain) ?? [];
      rewrite.set(rule.chain, list);
      list.push(rule.raw);
    }
    // Only chains that jump into ours are redeclared (and so rewritten); others stay as they are.
    for (const [chain, rules] of rewrite) {
      const hits = rules.some((r) => ownedSet.has(parseRule(r).params.get('-j')?.value ?? ''));
      if (!hits) continue;
      out.push(`:${chain} ${BUILTIN.has(chain) ? (policies.get(chain) ?? 'ACCEPT') : '-'} [0:0]`);
      for (const r of rules) if (!ownedSet.has(parseRule(r).params.get('-j')?.value ?? '')) out.push(r);
    }
    for (const c of owned) out.push(`:${c} - [0:0]`);
    for (const c of owned) out.push(`-X ${c}`);
    out.push('COMMIT');
    await executor.restore(`${out.join('\n')}\n`, { noflush: true, counters: false });
    deleted[table] = owned;
  }
  return deleted;
}
