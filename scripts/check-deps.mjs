#!/usr/bin/env node
// Dependency audit: internal ranges must resolve to the workspace, and every workspace
// package's `dependencies` + `peerDependencies` must be exactly the bare modules its `src` imports (value or type imports, `import()` and
// re-exports; `node:` builtins aside). An unused entry makes users install what is never
// loaded; an undeclared one breaks for users (it only resolves here through hoisting).
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { builtinModules } from 'node:module';
import { join } from 'node:path';
import { workspacePackages } from './workspace.mjs';

const IMPORT_RES = [
  /^\s*(?:import|export)\s[^'"`;]*?\bfrom\s*['"]([^'"]+)['"]/gm, // import/export ... from 'x'
  /^\s*import\s*['"]([^'"]+)['"]/gm, // import 'x'
  /\bimport\(\s*['"]([^'"]+)['"]\s*\)/g, // import('x'), also in types
];
const builtins = new Set(builtinModules);

/** @param {string} dir @returns {string[]} */
function sourceFiles(dir) {
  if (!existsSync(dir)) return [];
  return readdirSync(dir).flatMap((entry) => {
    const path = join(dir, entry);
    if (statSync(path).isDirectory()) return sourceFiles(path);
    return /\.(ts|mts|js|mjs)$/.test(entry) && !/\.test\.ts$/.test(entry) ? [path] : [];
  });
}

/** @param {string} specifier */
function packageName(specifier) {
  const parts = specifier.split('/');
  return specifier.startsWith('@') ? parts.slice(0, 2).join('/') : parts[0];
}

/** @returns {Map<string, Set<string>>} bare package name -> files importing it */
export function importedPackages(/** @type {string} */ srcDir) {
  const found = new Map();
  for (const file of sourceFiles(srcDir)) {
    // Drop comments so that examples in doc comments do not count as imports.
    const text = readFileSync(file, 'utf8')
      .replace(/\/\*[\s\S]*?\*\//g, '')
      .replace(/(^|[^:])\/\/.*$/gm, '$1');
    for (const m of IMPORT_RES.flatMap((re) => [...text.matchAll(re)])) {
      const spec = m[1];
      if (spec.startsWith('.') || spec.startsWith('node:') || builtins.has(spec)) continue;
      const name = packageName(spec);
      if (!found.has(name)) found.set(name, new Set());
      found.get(name).add(file);
    }
  }
  return found;
}

/** @returns {string[]} problems, one line each */
export function dependencyProblems(root = process.cwd()) {
  const problems = [];
  const workspace = workspacePackages(root);
  const localVersion = new Map(workspace.map((p) => [p.name, p.json.version]));
  for (const p of workspace) {
    // npm links a workspace package only when the range admits its local version; otherwise
    // it goes to the registry. Public packages use `^<local version>` (changeset version
    // rewrites it), the private example `*`.
    for (const [name, range] of Object.entries({ ...p.json.dependencies, ...p.json.devDependencies })) {
      const local = localVersion.get(name);
      if (local === undefined) continue;
      const expected = p.json.private ? '*' : `^${local}`;
      if (range !== expected)
        problems.push(`${p.name}: depends on ${name}@${range}, expected ${expected} (local ${local})`);
    }
    const declared = new Set([
      ...Object.keys(p.json.dependencies ?? {}),
      ...Object.keys(p.json.peerDependencies ?? {}),
    ]);
    const imported = importedPackages(join(p.dir, 'src'));
    for (const name of declared)
      if (!imported.has(name)) problems.push(`${p.name}: declares ${name} but src never imports it`);
    for (const [name, files] of imported)
      if (!declared.has(name) && name !== p.name)
        problems.push(
          `${p.name}: imports ${name} (${[...files].map((f) => f.slice(p.dir.length + 1)).join(', ')}) without declaring it`,
        );
  }
  return problems;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const problems = dependencyProblems();
  for (const p of problems) console.error(`check-deps: ${p}`);
  if (problems.length) process.exit(1);
  console.log('check-deps: every package declares exactly what its src imports');
}
