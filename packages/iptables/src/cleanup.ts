/**
 * Removing a backend's iptables chains (kube-proxy's `CleanupLeftovers` for the iptables side):
 * read the tables back, rewrite the built-in chains without the jumps into our chains, then
 * flush and delete our chains — all in one `iptables-restore --noflush` payload per table, so
 * other owners' chains are untouched.
 *
 * @module
 */
import type { IptablesExecutor } from './executor.js';
import { parseRestoreText, parseRule } from './restore-parser.js';

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
    // Jumps into ours from other chains go first. Built-in chains are not flushed by a
    // declaration under --noflush, so their jump rules are deleted one by one (`-D`, as
    // kube-proxy's cleanup deletes them); another owner's chain is redeclared (flushed) and
    // refilled without the jumps.
    for (const [chain, rules] of rewrite) {
      const jumps = rules.filter((r) => ownedSet.has(parseRule(r).params.get('-j')?.value ?? ''));
      if (jumps.length === 0) continue;
      if (BUILTIN.has(chain)) {
        for (const r of jumps) out.push(r.replace(/^-A /, '-D '));
        continue;
      }
      out.push(`:${chain} - [0:0]`);
      for (const r of rules) if (!jumps.includes(r)) out.push(r);
    }
    for (const c of owned) out.push(`:${c} - [0:0]`);
    for (const c of owned) out.push(`-X ${c}`);
    out.push('COMMIT');
    await executor.restore(`${out.join('\n')}\n`, { noflush: true, counters: false });
    deleted[table] = owned;
  }
  return deleted;
}
