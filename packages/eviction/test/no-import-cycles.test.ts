import { fileURLToPath } from 'node:url';
import { findImportCycles } from '@nodeagent/test-support/import-cycles';
import { expect, it } from 'vitest';

it('src has no import cycles (type-only imports included)', () => {
  expect(findImportCycles(fileURLToPath(new URL('../src', import.meta.url)))).toEqual([]);
});
