import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

const srcDir = join(import.meta.dirname, '..', 'src');

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? sourceFiles(join(dir, e.name)) : e.name.endsWith('.ts') ? [join(dir, e.name)] : [],
  );
}

// prom-client is an optional peer dependency: only its types may be imported, so loading
// @nodeagent/core never requires it at runtime.
describe('@nodeagent/core without prom-client', () => {
  it('imports prom-client only as types', () => {
    const offenders: string[] = [];
    for (const file of sourceFiles(srcDir)) {
      for (const line of readFileSync(file, 'utf8').split('\n')) {
        const mentions = /['"]prom-client['"]/.test(line) && /\b(import|require|from)\b/.test(line);
        if (mentions && !/^\s*import type\b/.test(line) && !/^\s*(\/?\*|\/\/)/.test(line))
          offenders.push(`${file}: ${line}`);
      }
    }
    expect(offenders).toEqual([]);
  });
});
