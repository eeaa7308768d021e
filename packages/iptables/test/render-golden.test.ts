import { readFileSync, writeFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { renderIptables } from '../src/index.js';
import { sortRestoreText } from '../src/testing.js';
import { GOLDEN_CASES } from './golden-cases.js';
import { snapshot, TEST_OPTIONS } from './helpers.js';

const dir = new URL('./golden/', import.meta.url);

describe('golden rulesets derived from kube-proxy behaviour', () => {
  for (const c of GOLDEN_CASES) {
    it(c.name, () => {
      const { snap, errors } = snapshot(c.cluster, c.family ?? 4);
      expect(errors).toEqual([]);
      const text = sortRestoreText(renderIptables(snap, c.options ?? TEST_OPTIONS));
      const file = new URL(`${c.name}.rules`, dir);
      if (process.env.UPDATE_GOLDEN === '1') writeFileSync(file, text);
      expect(text).toBe(readFileSync(file, 'utf8'));
    });
  }
});
