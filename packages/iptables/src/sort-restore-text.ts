/**
 * The canonical order kube-proxy's unit tests put restore payloads in before comparing
 * them (`sortIPTablesRules`), so golden files do not depend on service iteration order.
 *
 * @module
 */
import { tokenizeRule } from './restore-parser.js';

const FIRST_CHAINS = ['KUBE-NODEPORTS', 'KUBE-SERVICES'];

function chainRank(a: string, b: string): number {
  const ia = FIRST_CHAINS.indexOf(a);
  const ib = FIRST_CHAINS.indexOf(b);
  if (ia !== -1 || ib !== -1) {
    if (ia === -1) return 1;
    if (ib === -1) return -1;
    return ia - ib;
  }
  return a < b ? -1 : a > b ? 1 : 0;
}

/** The `ns/name` a KUBE-SERVICES / KUBE-NODEPORTS rule belongs to (from its comment). */
function serviceOfRule(line: string): string {
  const words = tokenizeRule(line);
  const i = words.indexOf('--comment');
  const comment = i === -1 ? '' : (words[i + 1] ?? '');
  const first = comment.split(' ')[0] ?? '';
  const colon = first.indexOf(':');
  return colon === -1 ? first : first.slice(0, colon);
}

const NODEPORTS_TAIL = 'kubernetes service nodeports; NOTE: this must be the last rule in this chain';

/**
 * Sorts each table of a restore payload: chain declarations with KUBE-NODEPORTS and
 * KUBE-SERVICES first and the rest alphabetically; rules grouped by chain in that order
 * (keeping their order inside a chain), KUBE-SERVICES and KUBE-NODEPORTS rules grouped by
 * service (services sorted, the node-ports tail rule last); `-X` lines at the end.
 */
export function sortRestoreText(text: string): string {
  const out: string[] = [];
  let chains: string[] = [];
  let rules = new Map<string, string[]>();
  let deletes: string[] = [];
  const flushTable = (): void => {
    chains.sort((a, b) => chainRank(a.slice(1).split(' ')[0]!, b.slice(1).split(' ')[0]!));
    out.push(...chains);
    const names = [...rules.keys()].sort(chainRank);
    for (const name of names) {
      const lines = rules.get(name)!;
      if (name === 'KUBE-SERVICES' || name === 'KUBE-NODEPORTS') {
        const groups = new Map<string, string[]>();
        const tail: string[] = [];
        for (const l of lines) {
          if (l.includes(NODEPORTS_TAIL)) {
            tail.push(l);
            continue;
          }
          const svc = serviceOfRule(l);
          const g = groups.get(svc);
          if (g) g.push(l);
          else groups.set(svc, [l]);
        }
        for (const svc of [...groups.keys()].sort()) out.push(...groups.get(svc)!);
        out.push(...tail);
      } else {
        out.push(...lines);
      }
    }
    out.push(...deletes);
    chains = [];
    rules = new Map();
    deletes = [];
  };
  for (const line of text.split('\n')) {
    if (line === '') continue;
    if (line.startsWith('*')) out.push(line);
    else if (line === 'COMMIT') {
      flushTable();
      out.push(line);
    } else if (line.startsWith(':')) chains.push(line);
    else if (line.startsWith('-X ')) deletes.push(line);
    else if (line.startsWith('-A ')) {
      const chain = line.split(' ')[1]!;
      const l = rules.get(chain);
      if (l) l.push(line);
      else rules.set(chain, [line]);
    } else out.push(line);
  }
  return out.join('\n') + '\n';
}
