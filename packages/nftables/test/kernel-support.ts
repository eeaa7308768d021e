/** Helpers for the real-kernel tests: TCP servers/clients inside namespaces, nft JSON by meaning. */
import type { Netns } from '@nodeagent/test-support/netns';
import { startNameServer as startEchoServer } from '@nodeagent/test-support/tcp-echo';

export { type ConnectResult, connectFrom } from '@nodeagent/test-support/tcp-echo';

/** Starts a name-echoing TCP server inside `ns`, listening on `::` unless told otherwise. */
export function startNameServer(ns: Netns, name: string, port: number, host = '::'): Promise<void> {
  return startEchoServer(ns, name, port, host);
}

/**
 * `nft -j list table` reduced to its meaning: chains → rules (without handles), sets → sorted
 * elements; order of objects ignored, order of rules kept.
 */
export function tableMeaning(json: unknown): unknown {
  const items = (json as { nftables: Record<string, Record<string, unknown>>[] }).nftables;
  const chains: Record<string, unknown[]> = {};
  const sets: Record<string, unknown> = {};
  const strip = (o: Record<string, unknown>) => {
    const { handle: _h, ...rest } = o;
    return rest;
  };
  for (const it of items) {
    if (it.chain) chains[it.chain.name as string] ??= [];
    if (it.rule) {
      const list = chains[it.rule.chain as string] ?? [];
      chains[it.rule.chain as string] = list;
      list.push(JSON.stringify(strip(it.rule)));
    }
    const s = it.set ?? it.map;
    if (s) {
      const { handle: _h, elem, ...rest } = s;
      // Elements with an expiry (session affinity) are runtime state written by packets, not by syncs.
      const written = ((elem as unknown[]) ?? [])
        .map((e) => JSON.stringify(e))
        .filter((e) => !e.includes('"expires"'));
      sets[s.name as string] = { ...rest, elem: written.sort() };
    }
  }
  const sort = (o: Record<string, unknown>) =>
    Object.fromEntries(Object.entries(o).sort(([a], [b]) => (a < b ? -1 : 1)));
  return { chains: sort(chains), sets: sort(sets) };
}

/** Paths where two meanings differ (for readable failures). */
export function meaningDiff(a: unknown, b: unknown, path = ''): string[] {
  if (JSON.stringify(a) === JSON.stringify(b)) return [];
  if (
    typeof a !== 'object' ||
    typeof b !== 'object' ||
    a === null ||
    b === null ||
    Array.isArray(a) ||
    Array.isArray(b)
  ) {
    return [`${path}: ${JSON.stringify(a)?.slice(0, 300)} != ${JSON.stringify(b)?.slice(0, 300)}`];
  }
  const keys = new Set([...Object.keys(a), ...Object.keys(b)]);
  return [...keys].flatMap((k) =>
    meaningDiff((a as Record<string, unknown>)[k], (b as Record<string, unknown>)[k], `${path}/${k}`),
  );
}
