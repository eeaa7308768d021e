// typedoc plugin: names every entry-point module after the import specifier a user writes
// (`@nodeagent/core`, `@nodeagent/core/testing`), found from the package.json `exports` entry
// whose `@nodeagent/source` condition points at the entry file. Without it, typedoc names
// modules after their paths ("core/src", "core/src/testing").
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { Converter, ReflectionKind } from 'typedoc';

/** @param {string} file */
function specifierFor(file) {
  for (let dir = dirname(file); dir !== dirname(dir); dir = dirname(dir)) {
    const pj = join(dir, 'package.json');
    if (!existsSync(pj)) continue;
    const json = JSON.parse(readFileSync(pj, 'utf8'));
    const rel = `./${relative(dir, file).split('\\').join('/')}`;
    for (const [subpath, target] of Object.entries(json.exports ?? {})) {
      const source = typeof target === 'object' && target !== null ? target['@nodeagent/source'] : undefined;
      if (source === rel) return subpath === '.' ? json.name : `${json.name}/${subpath.slice(2)}`;
    }
    return undefined;
  }
  return undefined;
}

/** @param {import('typedoc').Application} app */
export function load(app) {
  app.converter.on(Converter.EVENT_CREATE_DECLARATION, (context, reflection) => {
    if (!reflection.kindOf(ReflectionKind.Module)) return;
    const symbol = context.getSymbolFromReflection(reflection);
    const file = symbol?.declarations?.[0]?.getSourceFile().fileName;
    if (!file) return;
    const name = specifierFor(file);
    if (name) reflection.name = name;
    else app.logger.warn(`typedoc-package-names: no package.json export for ${file}`);
  });
}
