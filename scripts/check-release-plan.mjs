#!/usr/bin/env node
// Asserts what `changeset version` would do: every public workspace package goes to exactly
// EXPECTED_VERSION (the first release), and no private package (the example, test support)
// gets a new version. Exits 1 with one line per problem.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import getReleasePlan from '@changesets/get-release-plan';
import { workspacePackages } from './workspace.mjs';

const EXPECTED_VERSION = process.env.EXPECTED_RELEASE_VERSION ?? '0.1.0';

/**
 * `changeset status --output`'s plan. `changeset status` diffs against the base branch (`main`)
 * and fails in a clone without it; then the plan comes from `@changesets/get-release-plan`, the
 * function `changeset status` computes it with, over the same changeset files.
 * @param {string} root
 * @returns {Promise<{ releases: { name: string, type: string, oldVersion: string, newVersion: string }[] }>}
 */
async function releasePlan(root) {
  const dir = mkdtempSync(join(tmpdir(), 'release-plan-'));
  try {
    const out = join(dir, 'status.json');
    const r = spawnSync('npx', ['--no-install', 'changeset', 'status', '--output', out], {
      cwd: root,
      encoding: 'utf8',
    });
    if (r.status === 0) return JSON.parse(readFileSync(out, 'utf8'));
    if (!/Failed to find where HEAD diverged/.test(r.stdout + r.stderr))
      throw new Error(`changeset status failed:\n${r.stdout}${r.stderr}`);
    return await getReleasePlan(root);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** @returns {Promise<string[]>} problems, empty when the plan is the expected one */
export async function releasePlanProblems(root = process.cwd()) {
  const plan = await releasePlan(root);
  const byName = new Map(plan.releases.map((r) => [r.name, r]));
  const problems = [];
  for (const p of workspacePackages(root, { includeTestSupport: true })) {
    const release = byName.get(p.name);
    if (p.json.private) {
      if (release && release.newVersion !== release.oldVersion)
        problems.push(
          `${p.name} is private but would be versioned ${release.oldVersion} -> ${release.newVersion}`,
        );
    } else if (!release) {
      problems.push(`${p.name} has no pending changeset (expected ${EXPECTED_VERSION})`);
    } else if (release.newVersion !== EXPECTED_VERSION) {
      problems.push(`${p.name} would be released as ${release.newVersion}, expected ${EXPECTED_VERSION}`);
    }
  }
  return problems;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const problems = await releasePlanProblems();
  for (const p of problems) console.error(`release plan: ${p}`);
  if (problems.length) process.exit(1);
  console.log(`release plan: every public package is released as ${EXPECTED_VERSION}`);
}
