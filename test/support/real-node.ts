/**
 * Gatekeeping for tests that need a real node: root, network namespaces, containerd, CNI,
 * iptables/nft. Suites wrapped in {@link describeRealNode} run when everything is present, FAIL
 * under `CI=true` when something is missing, and elsewhere skip with a loud warning.
 *
 * @example
 * ```ts
 * describeRealNode('CRI against containerd', ['root', 'netns', 'containerd', 'runc', 'cni', 'busybox'], () => {
 *   it('answers Version', async () => { ... });
 * });
 * ```
 * @module
 */
import { spawnSync } from 'node:child_process';
import { accessSync, constants } from 'node:fs';
import { describe, it } from 'vitest';
import { findBinary } from './command.js';
import { BUSYBOX_PATH, CNI_BIN_DIR } from './node-paths.js';

export { BUSYBOX_PATH, CNI_BIN_DIR };

/** One prerequisite of a real-node test. */
export type Requirement =
  | 'root'
  | 'netns'
  | 'containerd'
  | 'runc'
  | 'cni'
  | 'iptables'
  | 'nft'
  | 'busybox'
  | 'conntrack'
  | 'ipset'
  | 'nfacct';

/** Everything {@link startNodeSandbox} needs. */
export const NODE_SANDBOX_REQUIREMENTS: readonly Requirement[] = [
  'root',
  'netns',
  'containerd',
  'runc',
  'cni',
  'busybox',
];

function executable(path: string): boolean {
  try {
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

function binaries(names: readonly string[]): string[] {
  return names.filter((n) => !findBinary(n)).map((n) => `${n} (not on PATH)`);
}

let netnsProbe: string | undefined;

/** Whether this process can create (and delete) a named network namespace; cached per process. */
function netnsProblem(): string {
  netnsProbe ??= probeNetns();
  return netnsProbe;
}

function probeNetns(): string {
  const ip = findBinary('ip');
  if (!ip) return 'ip (iproute2, not on PATH)';
  const name = `narprobe-${process.pid.toString(36)}`;
  const add = spawnSync(ip, ['netns', 'add', name], { encoding: 'utf8', timeout: 10_000 });
  if (add.status !== 0) {
    return `netns (cannot create a network namespace: ${(add.stderr || String(add.error)).trim()})`;
  }
  spawnSync(ip, ['netns', 'delete', name], { timeout: 10_000 });
  return '';
}

function checkOne(req: Requirement): string[] {
  switch (req) {
    case 'root':
      return process.getuid?.() === 0 ? [] : ['root (tests must run as uid 0)'];
    case 'netns': {
      const missing = binaries(['ip', 'nsenter']);
      if (missing.length > 0) return missing;
      if (process.getuid?.() !== 0) return ['netns (needs root)'];
      const problem = netnsProblem();
      return problem ? [problem] : [];
    }
    case 'containerd':
      return binaries(['containerd', 'ctr', 'containerd-shim-runc-v2']);
    case 'runc':
      return binaries(['runc']);
    case 'cni':
      return ['bridge', 'host-local', 'loopback']
        .filter((p) => !executable(`${CNI_BIN_DIR}/${p}`))
        .map((p) => `cni (${CNI_BIN_DIR}/${p} missing)`);
    case 'iptables':
      return binaries(['iptables', 'iptables-save', 'iptables-restore', 'ip6tables']);
    case 'nft':
      return binaries(['nft']);
    case 'busybox':
      return executable(BUSYBOX_PATH) ? [] : [`busybox (${BUSYBOX_PATH} missing; install busybox-static)`];
    case 'conntrack':
      return binaries(['conntrack']);
    case 'ipset':
      return binaries(['ipset']);
    case 'nfacct':
      return binaries(['nfacct']);
    default: {
      const never: never = req;
      return [`unknown requirement ${String(never)}`];
    }
  }
}

/**
 * What is missing for the given requirements, one human-readable entry per problem
 * (empty when everything is present). Synchronous so it can run at test collection time.
 */
export function realNodeMissing(reqs: readonly Requirement[]): string[] {
  return [...new Set(reqs)].flatMap(checkOne);
}

/** Thrown (as a failing test) when prerequisites are missing under `CI=true`. */
export class RealNodePrerequisitesError extends Error {
  override readonly name = 'RealNodePrerequisitesError';
  constructor(readonly missing: readonly string[]) {
    super(`real-node prerequisites missing under CI=true: ${missing.join(', ')}`);
  }
}

/** What {@link describeRealNode} does with a suite, given what is missing. */
export type RealNodeGate =
  | { readonly action: 'run' }
  | { readonly action: 'fail'; readonly error: RealNodePrerequisitesError }
  | { readonly action: 'skip'; readonly warning: string };

/**
 * The decision behind {@link describeRealNode}: run when nothing is missing; fail when something is
 * missing and `env.CI === 'true'`; skip with a warning otherwise.
 */
export function realNodeGate(
  name: string,
  missing: readonly string[],
  env: NodeJS.ProcessEnv = process.env,
): RealNodeGate {
  if (missing.length === 0) return { action: 'run' };
  if (env.CI === 'true') return { action: 'fail', error: new RealNodePrerequisitesError(missing) };
  return {
    action: 'skip',
    warning:
      `\n!!! SKIPPING real-node suite "${name}": missing ${missing.join(', ')}.\n` +
      '!!! These tests need root, network namespaces and node packages (scripts/install-node-deps.sh);\n' +
      '!!! under CI=true they fail instead of skipping.\n',
  };
}

/**
 * `NODEAGENT_TESTS=unit` selects the unit suites only: every real-node suite is skipped (even
 * under `CI=true`). The Node.js version matrix (`scripts/node-matrix.sh`) runs that way, since
 * the kernel and containerd suites do not depend on the Node.js version and run once.
 */
export const UNIT_ONLY_ENV = 'NODEAGENT_TESTS';

/**
 * `describe(name, fn)` when every requirement is met. Otherwise: under `CI=true`, a suite with one
 * failing test naming what is missing; elsewhere `describe.skip` plus a console warning.
 * Skipped without a word when `NODEAGENT_TESTS=unit` ({@link UNIT_ONLY_ENV}).
 */
export function describeRealNode(name: string, reqs: readonly Requirement[], fn: () => void): void {
  if (process.env[UNIT_ONLY_ENV] === 'unit') {
    describe.skip(name, fn);
    return;
  }
  const gate = realNodeGate(name, realNodeMissing(reqs));
  switch (gate.action) {
    case 'run':
      describe(name, fn);
      return;
    case 'fail':
      describe(name, () => {
        it('has its real-node prerequisites', () => {
          throw gate.error;
        });
      });
      return;
    case 'skip':
      console.warn(gate.warning);
      describe.skip(name, fn);
      return;
  }
}
