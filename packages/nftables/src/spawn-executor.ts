/**
 * The real executor: `nft -t -f -` (or `nft -c -f -`) spawned without a shell with the
 * transaction on stdin, optionally inside a named network namespace
 * (`ip netns exec NAME nft -f -`).
 *
 * @module
 */
import { CommandError, type RunCommandResult, runCommand } from '@nodeagent/core';
import { NftCommandError, type NftExecutor } from './executor.js';
import type { NftFamily } from './model.js';
import type { ExistingObjects } from './sync-planner.js';

/** Options of {@link SpawnNftExecutor}. */
export interface SpawnNftExecutorOptions {
  /**
   * Run nft inside this named network namespace (`/run/netns/<name>`).
   * @default undefined (the caller's namespace)
   */
  readonly netns?: string;
  /**
   * The nft binary.
   * @default 'nft'
   */
  readonly nftPath?: string;
  /**
   * The ip binary used for `ip netns exec`.
   * @default 'ip'
   */
  readonly ipPath?: string;
}

/** Runs `argv` without a shell, `input` on stdin; a command that cannot start is a {@link NftCommandError}. */
async function run(argv: readonly string[], input?: string): Promise<RunCommandResult> {
  try {
    return await runCommand(argv, { input });
  } catch (e) {
    if (e instanceof CommandError) throw new NftCommandError(e.argv, undefined, e.stderr, { cause: e.cause });
    throw e;
  }
}

/** Drives the `nft` binary. */
export class SpawnNftExecutor implements NftExecutor {
  readonly #prefix: readonly string[];

  /** @param options namespace and binaries. */
  constructor(options: SpawnNftExecutorOptions = {}) {
    const nft = options.nftPath ?? 'nft';
    if (options.netns !== undefined && !/^[A-Za-z0-9_.-]{1,64}$/.test(options.netns)) {
      throw new TypeError(`netns name ${JSON.stringify(options.netns)} is not valid`);
    }
    this.#prefix =
      options.netns === undefined ? [nft] : [options.ipPath ?? 'ip', 'netns', 'exec', options.netns, nft];
  }

  async #run(args: readonly string[], input?: string): Promise<string> {
    const argv = [...this.#prefix, ...args];
    const r = await run(argv, input);
    if (r.code !== 0) throw new NftCommandError(argv, r.code, r.stderr);
    return r.stdout;
  }

  /**
   * `nft -t -f -`. Terse (`-t`) only changes what `list` commands print: the anchor listings
   * that end some partial syncs (see `NftSyncPlanner`) would otherwise print every element of
   * the set they name (800 KB for `service-ips` at 10,000 services, ~0.15 s of nft CPU).
   */
  async apply(text: string): Promise<void> {
    await this.#run(['-t', '-f', '-'], text);
  }

  /** `nft -c -f -`. */
  async check(text: string): Promise<void> {
    await this.#run(['-c', '-f', '-'], text);
  }

  /** `nft -j list table` (terse: no set contents), names only. */
  async listObjects(family: NftFamily, table: string): Promise<ExistingObjects | undefined> {
    const argv = [...this.#prefix, '-t', '-j', 'list', 'table', family, table];
    const r = await run(argv, undefined);
    if (r.code !== 0) {
      if (/No such file or directory/.test(r.stderr)) return undefined;
      throw new NftCommandError(argv, r.code, r.stderr);
    }
    return parseListObjects(r.stdout);
  }

  /** `nft -j list table` in full (for tests and diagnostics). */
  async listTableJson(family: NftFamily, table: string): Promise<unknown> {
    return JSON.parse(await this.#run(['-j', 'list', 'table', family, table])) as unknown;
  }
}

/** Extracts chain and set names from `nft -j list table` output. */
export function parseListObjects(json: string): ExistingObjects {
  const doc = JSON.parse(json) as { nftables?: Record<string, { name?: string }>[] };
  const chains: string[] = [];
  const sets: { name: string; kind: 'set' | 'map' }[] = [];
  for (const item of doc.nftables ?? []) {
    if (item.chain?.name) chains.push(item.chain.name);
    else if (item.set?.name) sets.push({ name: item.set.name, kind: 'set' });
    else if (item.map?.name) sets.push({ name: item.map.name, kind: 'map' });
  }
  return { chains, sets };
}
