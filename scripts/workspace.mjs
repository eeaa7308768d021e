// Reads the workspace packages and orders them so that every package comes after the
// @nodeagent packages it depends on. Shared by the build and packaging-lint scripts.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * @param {string} [root]
 * @param {{ includeTestSupport?: boolean }} [options] also list the private `test/support` package
 * @returns {{ name: string, dir: string, json: any }[]} in dependency order
 */
export function workspacePackages(root = process.cwd(), options = {}) {
  const pkgs = [];
  const add = (/** @type {string} */ dir) => {
    const file = join(dir, 'package.json');
    if (!existsSync(file)) return;
    const json = JSON.parse(readFileSync(file, 'utf8'));
    pkgs.push({ name: json.name, dir, json });
  };
  for (const base of ['packages', 'examples']) {
    const dir = join(root, base);
    if (!existsSync(dir)) continue;
    for (const entry of readdirSync(dir).sort()) add(join(dir, entry));
  }
  if (options.includeTestSupport) add(join(root, 'test', 'support'));
  const byName = new Map(pkgs.map((p) => [p.name, p]));
  const ordered = [];
  const state = new Map();
  const visit = (p, trail) => {
    if (state.get(p.name) === 'done') return;
    if (state.get(p.name) === 'visiting')
      throw new Error(`dependency cycle: ${[...trail, p.name].join(' -> ')}`);
    state.set(p.name, 'visiting');
    const deps = { ...p.json.dependencies, ...p.json.devDependencies, ...p.json.peerDependencies };
    for (const d of Object.keys(deps)) {
      const dep = byName.get(d);
      if (dep) visit(dep, [...trail, p.name]);
    }
    state.set(p.name, 'done');
    ordered.push(p);
  };
  for (const p of pkgs) visit(p, []);
  return ordered;
}
