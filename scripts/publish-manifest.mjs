#!/usr/bin/env node
// The published manifest. `prepack` (run by npm pack / npm publish / changeset publish, in the
// package's directory) keeps the repository's package.json aside and writes the one users get:
// without the repository-internal `@nodeagent/source` export condition and without `src` in
// `files` (the source maps already carry the sources as `sourcesContent`), and without
// `scripts` (build and these pack hooks only work in the repository; npm runs `postpack` from
// the manifest it read before `prepack`). `postpack` puts the repository's package.json back.
import { existsSync, readFileSync, renameSync, writeFileSync } from 'node:fs';

const KEPT = 'package.json.repo';
const mode = process.argv[2];

/** @param {any} exportsField */
function stripSourceCondition(exportsField) {
  if (typeof exportsField !== 'object' || exportsField === null) return exportsField;
  return Object.fromEntries(
    Object.entries(exportsField)
      .filter(([key]) => key !== '@nodeagent/source')
      .map(([key, value]) => [key, stripSourceCondition(value)]),
  );
}

/** @param {any} json @returns {any} the manifest as published */
export function publishedManifest(json) {
  const { scripts: _scripts, ...rest } = json;
  return {
    ...rest,
    exports: stripSourceCondition(json.exports),
    files: json.files?.filter((/** @type {string} */ f) => f !== 'src'),
  };
}

if (mode === 'prepack') {
  if (existsSync(KEPT)) throw new Error(`${KEPT} exists: an earlier pack did not finish; restore it first`);
  const text = readFileSync('package.json', 'utf8');
  renameSync('package.json', KEPT);
  writeFileSync('package.json', `${JSON.stringify(publishedManifest(JSON.parse(text)), null, 2)}\n`);
} else if (mode === 'postpack') {
  if (existsSync(KEPT)) renameSync(KEPT, 'package.json');
} else if (mode !== undefined) {
  throw new Error(`usage: publish-manifest.mjs prepack|postpack (got ${mode})`);
}
