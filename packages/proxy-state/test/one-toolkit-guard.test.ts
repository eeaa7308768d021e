/**
 * Guard: the data-plane packages share one IP/CIDR parser (`@nodeagent/core`'s ip.ts), one
 * `joinHostPort` (core), one comment quoting and one chain-name hash (proxy-state). A second
 * copy creeping back into any of them fails here, naming the file and line.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = join(import.meta.dirname, '..', '..', '..');
const PACKAGES = ['core', 'proxy-state', 'iptables', 'nftables', 'ipvs', 'proxier', 'prober'];

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = join(dir, e.name);
    if (e.isDirectory()) return sourceFiles(p);
    return e.name.endsWith('.ts') ? [p] : [];
  });
}

const RULES: { what: string; pattern: RegExp; home: string }[] = [
  {
    what: 'an IP/CIDR parser',
    pattern:
      /\b(function|const|let)\s+(parseIP|parseCIDR|parseIPValue|parseCIDRValue|parseIPv4\w*|parseIPv6\w*|isIPv4|isIPv6|\w*cidrContains\w*)\b|\binterface\s+Parsed(IP|CIDR)\b|\bisIP(v4|v6)?\s*\(/,
    home: 'packages/core/src/ip.ts',
  },
  {
    what: 'a joinHostPort',
    pattern: /\bfunction\s+joinHostPort\b|`\[\$\{[^}]+\}\]:\$\{/,
    home: 'packages/core/src/host-port.ts',
  },
  {
    what: 'a comment quoting',
    pattern: /\bfunction\s+\w*[qQ]uote\w*Comment\b|\bfunction\s+\w*[cC]ommentArg\b/,
    home: 'packages/proxy-state/src/rule-comments.ts',
  },
  {
    what: 'a chain-name hash',
    pattern: /\b(hash|createHash)\(\s*'sha256'/,
    home: 'packages/proxy-state/src/chain-name-hash.ts',
  },
];

describe('one data-plane toolkit', () => {
  const files = PACKAGES.flatMap((p) => sourceFiles(join(ROOT, 'packages', p, 'src')));

  it('finds the packages it guards', () => {
    expect(files.length).toBeGreaterThan(100);
  });

  for (const rule of RULES) {
    it(`has ${rule.what} only in ${rule.home}`, () => {
      const found: string[] = [];
      for (const file of files) {
        const rel = relative(ROOT, file);
        if (rel === rule.home) continue;
        readFileSync(file, 'utf8')
          .split('\n')
          .forEach((line, i) => {
            if (rule.pattern.test(line)) found.push(`${rel}:${i + 1}: ${line.trim()}`);
          });
      }
      expect(found).toEqual([]);
    });
  }

  it('the homes do define them', () => {
    for (const rule of RULES) {
      expect(readFileSync(join(ROOT, rule.home), 'utf8')).toMatch(rule.pattern);
    }
  });
});
