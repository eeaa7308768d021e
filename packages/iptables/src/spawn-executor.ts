/**
 * The real executor: runs iptables-restore / iptables-save / iptables (or the ip6tables
 * variants) as child processes without a shell, payloads fed on stdin, optionally inside a
 * named network namespace.
 *
 * @module
 */
import { CommandError, type RunCommandResult, runCommand } from '@nodeagent/core';
import type { IPFamilyName } from '@nodeagent/proxy-state';
import {
  IptablesCommandError,
  type IptablesExecutor,
  type JumpRule,
  jumpRuleArgs,
  type RestoreFlags,
} from './executor.js';

/** Options of {@link SpawnIptablesExecutor}. */
export interface SpawnIptablesExecutorOptions {
  /**
   * Address family: `iptables*` for IPv4, `ip6tables*` for IPv6.
   * @default 'IPv4'
   */
  readonly family?: IPFamilyName;
  /**
   * Run every command inside this named network namespace (`/run/netns/<name>`).
   * @default undefined (the caller's namespace)
   */
  readonly netns?: string;
  /**
   * How to enter `netns`: `ip netns exec` (also remounts /sys) or `nsenter --net=`.
   * @default 'nsenter'
   */
  readonly netnsVia?: 'ip-netns-exec' | 'nsenter';
  /**
   * Seconds to wait for the xtables lock (`-w`); 0 waits indefinitely (`-w` alone).
   * @default 0
   */
  readonly lockWaitSeconds?: number;
  /**
   * Override of the binaries (e.g. `iptables-legacy-restore`).
   * @default the family's `iptables-restore`, `iptables-save`, `iptables`
   */
  readonly binaries?: { readonly restore?: string; readonly save?: string; readonly iptables?: string };
}

/** Runs `argv` without a shell, `input` on stdin; a command that cannot start is a {@link IptablesCommandError}. */
async function run(argv: readonly string[], input?: string): Promise<RunCommandResult> {
  try {
    return await runCommand(argv, { input });
  } catch (e) {
    if (e instanceof CommandError)
      throw new IptablesCommandError(e.argv, undefined, e.stderr, { cause: e.cause });
    throw e;
  }
}

/** Drives the real iptables tools. */
export class SpawnIptablesExecutor implements IptablesExecutor {
  /** @inheritdoc */
  readonly family: IPFamilyName;
  readonly #prefix: readonly string[];
  readonly #wait: readonly string[];
  readonly #restoreBin: string;
  readonly #saveBin: string;
  readonly #iptablesBin: string;

  /** @param options family, namespace, lock wait, binaries. */
  constructor(options: SpawnIptablesExecutorOptions = {}) {
    this.family = options.family ?? 'IPv4';
    const v6 = this.family === 'IPv6';
    this.#restoreBin = options.binaries?.restore ?? (v6 ? 'ip6tables-restore' : 'iptables-restore');
    this.#saveBin = options.binaries?.save ?? (v6 ? 'ip6tables-save' : 'iptables-save');
    this.#iptablesBin = options.binaries?.iptables ?? (v6 ? 'ip6tables' : 'iptables');
    const ns = options.netns;
    if (ns !== undefined && !/^[A-Za-z0-9_.-]+$/.test(ns)) {
      throw new TypeError(`netns ${JSON.stringify(ns)} is not a valid namespace name`);
    }
    this.#prefix =
      ns === undefined
        ? []
        : (options.netnsVia ?? 'nsenter') === 'nsenter'
          ? ['nsenter', `--net=/run/netns/${ns}`, '--']
          : ['ip', 'netns', 'exec', ns];
    const w = options.lockWaitSeconds ?? 0;
    this.#wait = w > 0 ? ['-w', String(w)] : ['-w'];
  }

  /** The argv a restore call runs (for logs and tests). */
  restoreArgv(flags: RestoreFlags = {}): string[] {
    const argv = [...this.#prefix, this.#restoreBin];
    if (flags.noflush !== false) argv.push('--noflush');
    if (flags.counters !== false) argv.push('--counters');
    argv.push(...this.#wait);
    return argv;
  }

  async #check(argv: readonly string[], input?: string): Promise<string> {
    const r = await run(argv, input);
    if (r.code !== 0) throw new IptablesCommandError(argv, r.code, r.stderr);
    return r.stdout;
  }

  /** @inheritdoc */
  async restore(text: string, flags: RestoreFlags = {}): Promise<void> {
    await this.#check(this.restoreArgv(flags), text);
  }

  /** Validates a payload without applying it (`iptables-restore --test`). */
  async test(text: string): Promise<void> {
    await this.#check([...this.#prefix, this.#restoreBin, '--test', '--noflush', ...this.#wait], text);
  }

  /** @inheritdoc */
  async save(table?: string): Promise<string> {
    return this.#check([...this.#prefix, this.#saveBin, ...(table ? ['-t', table] : [])]);
  }

  /** @inheritdoc */
  async chainExists(table: string, chain: string): Promise<boolean> {
    const r = await run([...this.#prefix, this.#iptablesBin, ...this.#wait, '-t', table, '-n', '-L', chain]);
    return r.code === 0;
  }

  /** @inheritdoc */
  async ensureChain(table: string, chain: string): Promise<boolean> {
    const argv = [...this.#prefix, this.#iptablesBin, ...this.#wait, '-t', table, '-N', chain];
    const r = await run(argv);
    if (r.code === 0) return false;
    if (r.stderr.includes('exists')) return true;
    throw new IptablesCommandError(argv, r.code, r.stderr);
  }

  /** @inheritdoc */
  async ensureJumps(jumps: readonly JumpRule[]): Promise<void> {
    for (const j of jumps) {
      const args = jumpRuleArgs(j);
      const base = [...this.#prefix, this.#iptablesBin, ...this.#wait, '-t', j.table];
      // -C fails both when the rule or its target chain is missing: one call when all is well.
      const check = await run([...base, '-C', j.sourceChain, ...args]);
      if (check.code === 0) continue;
      await this.ensureChain(j.table, j.targetChain);
      await this.#check([...base, '-I', j.sourceChain, ...args]);
    }
  }
}
