// Shared tsup settings for every @nodeagent package: ESM only, d.ts, source maps.
// The d.ts step resolves sibling packages through their built `types` (not the
// `@nodeagent/source` condition), so packages are built in dependency order
// (scripts/build.mjs).
/** @param {string[]} entry */
export function packageConfig(entry) {
  return {
    entry,
    format: ['esm'],
    target: 'node20',
    platform: 'node',
    dts: { compilerOptions: { composite: false, customConditions: [], incremental: false } },
    sourcemap: true,
    clean: true,
    splitting: true,
    treeshake: true,
    tsconfig: 'tsconfig.json',
  };
}
