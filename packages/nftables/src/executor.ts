/**
 * The side-effect boundary: everything that touches the kernel's nftables goes through an
 * {@link NftExecutor}. `SpawnNftExecutor` runs `nft`; `FakeNftExecutor` (from
 * `@nodeagent/nftables/testing`) applies the same transaction semantics in memory.
 *
 * @module
 */
import { CommandError } from '@nodeagent/core';
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
export class NftCommandError extends CommandError {
  override readonly name = 'NftCommandError';
}
