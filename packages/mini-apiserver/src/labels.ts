/**
 * Label selectors in the full string syntax of the API (`a=b,c!=d,e in (f,g),h notin (i),j,!k`).
 *
 * @module
 */
import { badRequest } from './errors.js';

/** One requirement of a label selector. */
export interface LabelRequirement {
  readonly key: string;
  readonly op: 'in' | 'notin' | 'exists' | '!';
  readonly values: readonly string[];
}

/** A parsed label selector; an empty one matches everything. */
export interface LabelSelector {
  readonly requirements: readonly LabelRequirement[];
  /** Whether `labels` satisfy every requirement. */
  matches(labels: Readonly<Record<string, string>> | undefined): boolean;
}

const EMPTY: Readonly<Record<string, string>> = Object.freeze({});

class ParsedLabelSelector implements LabelSelector {
  constructor(readonly requirements: readonly LabelRequirement[]) {}
  matches(labels: Readonly<Record<string, string>> | undefined): boolean {
    const l = labels ?? EMPTY;
    for (const r of this.requirements) {
      const has = Object.hasOwn(l, r.key);
      switch (r.op) {
        case 'exists':
          if (!has) return false;
          break;
        case '!':
          if (has) return false;
          break;
        case 'in':
          if (!has || !r.values.includes(l[r.key] as string)) return false;
          break;
        case 'notin':
          if (has && r.values.includes(l[r.key] as string)) return false;
          break;
      }
    }
    return true;
  }
}

/** A selector that matches every object. */
export const EVERYTHING: LabelSelector = new ParsedLabelSelector([]);

const KEY =
  /^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*\/)?[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?$/;
const VALUE = /^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$/;

function checkKey(key: string, selector: string): string {
  if (!KEY.test(key))
    throw badRequest(`unable to parse requirement: invalid label key "${key}" in selector "${selector}"`);
  return key;
}

function checkValue(value: string, selector: string): string {
  if (value.length > 63 || !VALUE.test(value)) {
    throw badRequest(
      `unable to parse requirement: invalid label value: "${value}" in selector "${selector}"`,
    );
  }
  return value;
}

/** Splits on commas that are not inside parentheses. */
function splitTopLevel(s: string): string[] {
  const out: string[] = [];
  let depth = 0;
  let start = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s[i];
    if (c === '(') depth++;
    else if (c === ')') depth--;
    else if (c === ',' && depth === 0) {
      out.push(s.slice(start, i));
      start = i + 1;
    }
  }
  out.push(s.slice(start));
  return out;
}

/**
 * Parses a label selector string.
 * @throws ApiStatusError (400 BadRequest) on a syntax error.
 */
export function parseLabelSelector(selector: string | undefined | null): LabelSelector {
  if (selector === undefined || selector === null || selector.trim() === '') return EVERYTHING;
  const reqs: LabelRequirement[] = [];
  for (const raw of splitTopLevel(selector)) {
    const part = raw.trim();
    if (part === '')
      throw badRequest(`unable to parse requirement: found '', expected: identifier in "${selector}"`);
    const setMatch = /^(\S+)\s+(in|notin)\s*\(([^)]*)\)$/.exec(part);
    if (setMatch) {
      const values = (setMatch[3] as string)
        .split(',')
        .map((v) => v.trim())
        .filter((v, _i, a) => !(v === '' && a.length === 1));
      reqs.push({
        key: checkKey(setMatch[1] as string, selector),
        op: setMatch[2] as 'in' | 'notin',
        values: values.map((v) => checkValue(v, selector)),
      });
      continue;
    }
    const cmp = /^([^=!\s]+)\s*(==|!=|=)\s*(.*)$/.exec(part);
    if (cmp) {
      const key = checkKey(cmp[1] as string, selector);
      const value = checkValue((cmp[3] as string).trim(), selector);
      reqs.push({ key, op: cmp[2] === '!=' ? 'notin' : 'in', values: [value] });
      continue;
    }
    if (part.startsWith('!')) {
      reqs.push({ key: checkKey(part.slice(1).trim(), selector), op: '!', values: [] });
      continue;
    }
    if (/^\S+$/.test(part) && !/[()<>]/.test(part)) {
      reqs.push({ key: checkKey(part, selector), op: 'exists', values: [] });
      continue;
    }
    throw badRequest(`unable to parse requirement: unable to parse "${part}" in selector "${selector}"`);
  }
  return new ParsedLabelSelector(reqs);
}

/** Matches labels against a `matchLabels` map (a Service's `spec.selector`). An empty map matches nothing here. */
export function matchesSelectorMap(
  selector: Readonly<Record<string, string>> | undefined,
  labels: Readonly<Record<string, string>> | undefined,
): boolean {
  if (!selector) return false;
  const keys = Object.keys(selector);
  if (keys.length === 0) return false;
  const l = labels ?? EMPTY;
  for (const k of keys) if (l[k] !== selector[k]) return false;
  return true;
}
