/**
 * A canonical form of an `-A` rule that is equal for the text this package writes and the text
 * `iptables-save` prints for it: the order of matches and options is ignored (every match of a
 * rule must hold, whatever its order), host prefixes (`/32`, `/128`), quoting and the `recent`
 * module's defaults (`--mask 255.255.255.255`, `--rsource`) are dropped, probabilities compared
 * as numbers. Used to learn, after a restart, which chains already hold what a sync would write.
 *
 * @module
 */
import { tokenizeRule } from './restore-parser.js';

const DEFAULTS = new Set(['--mask 255.255.255.255', '--rsource']);

/** The canonical form of one `-A CHAIN ...` line (chain included). */
export function canonicalRule(line: string): string {
  const words = tokenizeRule(line);
  const chain = words[1] ?? '';
  const modules: string[] = [];
  const opts: string[] = [];
  let target = '';
  let i = 2;
  let negate = false;
  while (i < words.length) {
    const w = words[i]!;
    if (w === '!') {
      negate = true;
      i++;
      continue;
    }
    const values: string[] = [];
    let j = i + 1;
    while (j < words.length && !(words[j]!.startsWith('-') && words[j]!.length > 1) && words[j] !== '!') {
      values.push(words[j]!);
      j++;
    }
    if (w === '-m') modules.push(values.join(' '));
    else if (w === '-j') target = values.join(' ');
    else {
      let v = values;
      if (w === '-s' || w === '-d') v = v.map((a) => a.replace(/\/(32|128)$/, ''));
      if (w === '--probability') v = v.map((p) => Number(p).toFixed(8));
      const seg = `${negate ? '! ' : ''}${w}${v.length > 0 ? ` ${v.join(' ')}` : ''}`;
      if (!DEFAULTS.has(seg)) opts.push(seg);
    }
    negate = false;
    i = j;
  }
  return `${chain}|${[...new Set(modules)].sort().join(',')}|${opts.sort().join(';')}|${target}`;
}

/** Canonical rules per chain of `-A` lines (order inside a chain kept). */
export function canonicalChains(lines: Iterable<string>): Map<string, string[]> {
  const out = new Map<string, string[]>();
  for (const line of lines) {
    if (!line.startsWith('-A ')) continue;
    const c = canonicalRule(line);
    const chain = c.slice(0, c.indexOf('|'));
    const list = out.get(chain);
    if (list) list.push(c);
    else out.set(chain, [c]);
  }
  return out;
}
