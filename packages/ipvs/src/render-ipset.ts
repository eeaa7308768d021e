/**
 * `ipset restore` text: the whole set of sets (`create … -exist` and `add … -exist`, as
 * kube-proxy's idempotent calls), and one strict line per incremental operation.
 *
 * @module
 */
import { parseCIDR, parseIP } from '@nodeagent/core';
import { parseIPSetEntry } from './ipsets.js';
import type { IPSet, IPSetType } from './model.js';
import type { IPSetHeader, IpvsOperation } from './operations.js';

/** A set or entry that cannot be written as ipset text (never produced by the planner). */
export class IPSetRenderError extends Error {
  override readonly name = 'IPSetRenderError';
}

const NAME_RE = /^[A-Za-z0-9][A-Za-z0-9_.:-]{0,30}$/;
const TYPES = new Set<IPSetType>([
  'hash:ip',
  'hash:ip,port',
  'hash:ip,port,ip',
  'hash:ip,port,net',
  'bitmap:port',
]);
const RANGE_RE = /^([0-9]{1,5})-([0-9]{1,5})$/;

function checkName(name: string): string {
  if (!NAME_RE.test(name)) throw new IPSetRenderError(`${JSON.stringify(name)} is not a valid ipset name`);
  return name;
}

function positive(what: string, n: number): number {
  if (!Number.isInteger(n) || n < 1 || n > 2 ** 31 - 1)
    throw new IPSetRenderError(`${what} ${JSON.stringify(n)} is invalid`);
  return n;
}

/** The `create` arguments after the set name: type and its header options. */
export function ipsetCreateArgs(set: IPSetHeader): string[] {
  if (!TYPES.has(set.type)) throw new IPSetRenderError(`unknown ipset type ${JSON.stringify(set.type)}`);
  if (set.type === 'bitmap:port') {
    const m = RANGE_RE.exec(set.portRange);
    if (!m || Number(m[1]) > Number(m[2]) || Number(m[2]) > 65535) {
      throw new IPSetRenderError(`port range ${JSON.stringify(set.portRange)} is invalid`);
    }
    return [set.type, 'range', set.portRange];
  }
  if (set.family !== 'inet' && set.family !== 'inet6') {
    throw new IPSetRenderError(`family ${JSON.stringify(set.family)} is invalid`);
  }
  return [
    set.type,
    'family',
    set.family,
    'hashsize',
    String(positive('hashsize', set.hashSize)),
    'maxelem',
    String(positive('maxelem', set.maxElem)),
  ];
}

/**
 * Checks that `entry` has the shape of `type` with valid addresses, so that no text can
 * reach ipset that would be read as another command. Returns the entry.
 */
export function checkIPSetEntry(type: IPSetType, entry: string): string {
  const p = parseIPSetEntry(type, String(entry));
  const bad = () => new IPSetRenderError(`${JSON.stringify(entry)} is not a valid ${type} entry`);
  if (!p) throw bad();
  if (p.ip !== undefined && parseIP(p.ip)?.ip === undefined) throw bad();
  if (p.ip2 !== undefined && parseIP(p.ip2)?.ip === undefined) throw bad();
  if (p.net !== undefined && parseCIDR(p.net)?.cidr === undefined) throw bad();
  return entry;
}

/** Options of {@link renderIpsetRestore}. */
export interface IpsetRestoreOptions {
  /**
   * Write `flush NAME` after each `create`, so the sets end up holding exactly the given
   * entries (otherwise entries already in a set stay).
   * @default false
   */
  readonly flush?: boolean;
}

/**
 * All sets as `ipset restore` input: `create NAME TYPE family inet hashsize 1024 maxelem 65536
 * -exist` (bitmap:port sets: `range 0-65535`), then `add NAME ENTRY -exist` per entry.
 * kube-proxy puts no comments on its sets or entries, so none are written. A set with
 * `entriesRefused` gets its `create` line only.
 */
export function renderIpsetRestore(sets: readonly IPSet[], options: IpsetRestoreOptions = {}): string {
  const lines: string[] = [];
  for (const set of sets) {
    const name = checkName(set.name);
    lines.push(['create', name, ...ipsetCreateArgs(set), '-exist'].join(' '));
    // A refused set (over its maxelem) keeps the entries it has: no flush, no adds.
    if (set.entriesRefused) continue;
    if (options.flush) lines.push(`flush ${name}`);
    for (const e of set.entries) lines.push(`add ${name} ${checkIPSetEntry(set.type, e)} -exist`);
  }
  return lines.length === 0 ? '' : `${lines.join('\n')}\n`;
}

/**
 * `ipset restore` input for the ipset operations among `ops`, in order. Lines carry no
 * `-exist`: a duplicate add or missing delete fails, as in the fake executor.
 * @param types the type of every set an add/del refers to (for entry validation).
 */
export function renderIpsetOperations(
  ops: readonly IpvsOperation[],
  types: ReadonlyMap<string, IPSetType>,
): string {
  const known = new Map(types);
  const lines: string[] = [];
  const typeOf = (name: string): IPSetType => {
    const t = known.get(name);
    if (!t) throw new IPSetRenderError(`ipset ${JSON.stringify(name)} has no known type`);
    return t;
  };
  for (const op of ops) {
    switch (op.kind) {
      case 'create-ipset':
        known.set(op.set.name, op.set.type);
        lines.push(['create', checkName(op.set.name), ...ipsetCreateArgs(op.set)].join(' '));
        break;
      case 'destroy-ipset':
        lines.push(`destroy ${checkName(op.name)}`);
        break;
      case 'ipset-add':
        lines.push(`add ${checkName(op.set)} ${checkIPSetEntry(typeOf(op.set), op.entry)}`);
        break;
      case 'ipset-del':
        lines.push(`del ${checkName(op.set)} ${checkIPSetEntry(typeOf(op.set), op.entry)}`);
        break;
      default:
        break;
    }
  }
  return lines.length === 0 ? '' : `${lines.join('\n')}\n`;
}
