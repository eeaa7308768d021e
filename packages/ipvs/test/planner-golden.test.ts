/**
 * Golden output of the planner + renderers per service type / policy / affinity. The golden
 * files were generated once and reviewed line by line against the facts (kube-proxy's IPVS
 * layout); regenerate with UPDATE_GOLDEN=1 only after reviewing a deliberate change.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { GOLDEN_CASES } from './golden-cases.js';
import { plan, renderAll, TEST_OPTIONS } from './helpers.js';

const dir = new URL('./golden/', import.meta.url);

describe('planner golden output', () => {
  for (const c of GOLDEN_CASES) {
    it(c.name, () => {
      const p = plan(c.cluster, c.options ?? TEST_OPTIONS, c.family ?? 4);
      expect(p.errors).toEqual([]);
      const text = renderAll(p);
      const file = new URL(`${c.name}.txt`, dir);
      if (process.env.UPDATE_GOLDEN === '1') writeFileSync(file, text);
      expect(text).toBe(readFileSync(file, 'utf8'));
      // Deterministic: planning again gives the same bytes.
      expect(renderAll(plan(c.cluster, c.options ?? TEST_OPTIONS, c.family ?? 4))).toBe(text);
    });
  }
});
