/**
 * Clearing stale UDP conntrack entries. UDP has no connection teardown, so a flow that the
 * kernel tracked while a service had no endpoints (or towards an endpoint that is gone) keeps
 * being answered by its old entry; kube-proxy deletes those entries after each sync. The
 * {@link ConntrackCleaner} interface takes kube-proxy's four filter shapes; the real one runs
 * `conntrack -D` (no shell, optionally inside a network namespace).
 *
 * @module
 */
import { CommandError, runCommand } from '@nodeagent/core';
import type { IPFamily } from '@nodeagent/proxy-state';

/** Which UDP conntrack entries to delete (kube-proxy's `ClearEntriesFor*`). */
export type ConntrackFilter =
  /** Every UDP entry whose original destination is `ip` (a service IP that gained endpoints or lost its port). */
  | { readonly kind: 'ip'; readonly family: IPFamily; readonly ip: string }
  /** Every UDP entry to node port `port`. */
  | { readonly kind: 'port'; readonly family: IPFamily; readonly port: number }
  /** Entries to service IP `origDst` that were DNATed to endpoint `dstNat`. */
  | { readonly kind: 'nat'; readonly family: IPFamily; readonly origDst: string; readonly dstNat: string }
  /** Entries to node port `port` that were DNATed to endpoint `dstNat`. */
  | { readonly kind: 'port-nat'; readonly family: IPFamily; readonly port: number; readonly dstNat: string };

/** Deletes conntrack entries. */
export interface ConntrackCleaner {
  /** Deletes the entries matching each filter; "nothing to delete" is not an error. @throws ConntrackError */
  clear(filters: readonly ConntrackFilter[]): Promise<void>;
}

/** A `conntrack` call that failed. */
export class ConntrackError extends Error {
  override readonly name = 'ConntrackError';
  /** The argv that failed. */
  readonly argv: readonly string[];
  /** Exit code (undefined when killed or not started). */
  readonly exitCode: number | undefined;
  /** Captured stderr. */
  readonly stderr: string;
  /** @param argv - Command. @param exitCode - Exit status. @param stderr - Its stderr. */
  constructor(argv: readonly string[], exitCode: number | undefined, stderr: string) {
    super(`${argv.join(' ')} failed (exit ${exitCode ?? 'signal'}): ${stderr.trim().slice(0, 1000)}`);
    this.argv = argv;
    this.exitCode = exitCode;
    this.stderr = stderr;
  }
}

/** What conntrack prints (exit 1) when no entry matched: not an error for us. */
export const NO_CONNECTION_TO_DELETE = '0 flow entries have been deleted';

/** The `conntrack` arguments kube-proxy uses for a filter (`-f ipv6` appended for IPv6). */
export function conntrackArgs(filter: ConntrackFilter): string[] {
  let args: string[];
  switch (filter.kind) {
    case 'ip':
      args = ['-D', '--orig-dst', filter.ip, '-p', 'udp'];
      break;
    case 'port':
      args = ['-D', '-p', 'udp', '--dport', String(filter.port)];
      break;
    case 'nat':
      args = ['-D', '--orig-dst', filter.origDst, '--dst-nat', filter.dstNat, '-p', 'udp'];
      break;
    case 'port-nat':
      args = ['-D', '-p', 'udp', '--dport', String(filter.port), '--dst-nat', filter.dstNat];
      break;
  }
  if (filter.family === 6) args.push('-f', 'ipv6');
  return args;
}

/** Options of {@link SpawnConntrackCleaner}. */
export interface SpawnConntrackCleanerOptions {
  /**
   * Run inside this named network namespace (`/run/netns/<name>`, entered with `nsenter --net=`).
   * @default undefined (the caller's namespace)
   */
  readonly netns?: string;
  /** @default 'conntrack' */
  readonly conntrackPath?: string;
  /** @default 'nsenter' */
  readonly nsenterPath?: string;
}

/** Runs `conntrack -D …` once per filter, without a shell. */
export class SpawnConntrackCleaner implements ConntrackCleaner {
  readonly #options: SpawnConntrackCleanerOptions;

  /** @param options - Namespace and binary paths. */
  constructor(options: SpawnConntrackCleanerOptions = {}) {
    if (options.netns !== undefined && !/^[A-Za-z0-9_.-]+$/.test(options.netns)) {
      throw new TypeError(`invalid netns name ${JSON.stringify(options.netns)}`);
    }
    this.#options = options;
  }

  /** The argv run for a filter. */
  argv(filter: ConntrackFilter): string[] {
    const ct = [this.#options.conntrackPath ?? 'conntrack', ...conntrackArgs(filter)];
    const ns = this.#options.netns;
    return ns === undefined
      ? ct
      : [this.#options.nsenterPath ?? 'nsenter', `--net=/run/netns/${ns}`, '--', ...ct];
  }

  /** @inheritdoc */
  async clear(filters: readonly ConntrackFilter[]): Promise<void> {
    const failures: ConntrackError[] = [];
    for (const f of filters) {
      const argv = this.argv(f);
      const r = await run(argv);
      if (r.code === 0 || r.stderr.includes(NO_CONNECTION_TO_DELETE)) continue;
      failures.push(new ConntrackError(argv, r.code, r.stderr));
    }
    // Every filter is tried; the first failure is reported.
    if (failures.length > 0) throw failures[0];
  }
}

async function run(argv: readonly string[]): Promise<{ code: number | undefined; stderr: string }> {
  try {
    return await runCommand(argv);
  } catch (err) {
    // Not started (e.g. no conntrack binary): reported as a failed call with the cause.
    return { code: undefined, stderr: String(err instanceof CommandError ? err.cause : err) };
  }
}
