/**
 * The version `nodeagent-proxy --version` prints: the `version` of `@nodeagent/proxier`'s
 * `package.json`, found at run time by walking up from this module (so it works from the
 * built `dist/` and from `src/`).
 *
 * @module
 */
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** `@nodeagent/proxier`'s version, read from its `package.json`. */
export function proxierVersion(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (;;) {
    try {
      const pkg = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as {
        name?: string;
        version?: string;
      };
      if (pkg.name === '@nodeagent/proxier' && typeof pkg.version === 'string') return pkg.version;
    } catch {
      // no package.json here: keep walking up
    }
    const parent = dirname(dir);
    if (parent === dir) return 'unknown';
    dir = parent;
  }
}
