import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

const srcDir = join(import.meta.dirname, '..', 'src');

// prom-client is an optional peer dependency and @kubernetes/client-node a peer used for
// types only: loading the package must never require either at runtime.
describe('@nodeagent/pod-workers runtime imports', () => {
  it.each(['prom-client', '@kubernetes/client-node'])('imports %s only as types', (name) => {
    const offenders: string[] = [];
    for (const file of readdirSync(srcDir).filter((f) => f.endsWith('.ts'))) {
      const text = readFileSync(join(srcDir, file), 'utf8');
      for (const match of text.matchAll(/^\s*(import|export)\b[^;]*?from\s+['"]([^'"]+)['"]/gms)) {
        if (match[2] === name && !/^\s*(import|export) type\b/.test(match[0]))
          offenders.push(`${file}: ${match[0]}`);
      }
      if (text.includes(`import('${name}')`) && !text.includes(`typeof import('${name}')`)) {
        offenders.push(`${file}: dynamic import`);
      }
    }
    expect(offenders).toEqual([]);
  });
});
