/** Helpers for the real-kernel tests: TCP servers/clients in namespaces, semantic iptables-save. */
import type { Netns } from '@nodeagent/test-support/netns';
import { startNameServer as startEchoServer } from '@nodeagent/test-support/tcp-echo';

export { type ConnectResult, connectFrom } from '@nodeagent/test-support/tcp-echo';

/** Starts a name-echoing TCP server inside `ns`, listening on `0.0.0.0` unless told otherwise. */
export function startNameServer(ns: Netns, name: string, port: number, host = '0.0.0.0'): Promise<void> {
  return startEchoServer(ns, name, port, host);
}

/**
 * iptables-save output reduced to its meaning for comparison: per table, chain → rules,
 * ignoring chain order, counters and comments lines. (Rule order inside a chain matters.)
 */
export function saveMeaning(save: string): Record<string, Record<string, string[]>> {
  const out: Record<string, Record<string, string[]>> = {};
  let table: Record<string, string[]> | undefined;
  for (const line of save.split('\n')) {
    if (line.startsWith('#') || line === '' || line === 'COMMIT') continue;
    if (line.startsWith('*')) {
      table = {};
      out[line.slice(1)] = table;
    } else if (line.startsWith(':')) table![line.slice(1).split(' ')[0]!] ??= [];
    else if (line.startsWith('-A ')) {
      const chain = line.split(' ')[1]!;
      table![chain] = [...(table![chain] ?? []), line];
    }
  }
  for (const t of Object.values(out)) {
    const sorted = Object.fromEntries(Object.entries(t).sort(([a], [b]) => (a < b ? -1 : 1)));
    for (const k of Object.keys(t)) delete t[k];
    Object.assign(t, sorted);
  }
  return out;
}
