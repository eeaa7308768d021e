/**
 * The side-effect boundary: everything that touches the kernel's nftables goes through an
 * {@link NftExecutor}. `SpawnNftExecutor` runs `nft`; `FakeNftExecutor` (from
 * `@nodeagent/nftables/testing`) applies the same transaction semantics in memory.
 *
 * @module
 */
import type { NftFamily } from './model.js';
import type { ExistingObjects } from './sync-planner.js';

/** The kernel-facing operations the nftables backend needs. */
export interface NftExecutor {
  /** Applies one transaction (`nft -f -`): all of it or nothing. @throws NftCommandError */
  apply(text: string): Promise<void>;
  /** Checks a transaction without committing it (`nft -c -f -`). @throws NftCommandError */
  check(text: string): Promise<void>;
  /** Chain and set names of a table, or undefined when the table does not exist. */
  listObjects(family: NftFamily, table: string): Promise<ExistingObjects | undefined>;
}

/** A failed nft call (the transaction was not applied). */
export class NftCommandError extends Error {
  override readonly name = 'NftCommandError';
  /** The argv that failed. */
  readonly argv: readonly string[];
  /** Exit code (undefined when killed by a signal or not started). */
  readonly exitCode: number | undefined;
  /** Captured stderr (nft's error messages with line references). */
  readonly stderr: string;
  /** @param argv command; @param exitCode exit status; @param stderr its stderr. */
  constructor(argv: readonly string[], exitCode: number | undefined, stderr: string) {
    super(`${argv.join(' ')} failed (exit ${exitCode ?? 'signal'}): ${stderr.trim().slice(0, 2000)}`);
    this.argv = argv;
    this.exitCode = exitCode;
    this.stderr = stderr;
  }
}
