/**
 * An in-memory {@link NftExecutor} with nft's transaction semantics, for tests.
 *
 * @module
 */
import type { NftExecutor } from './executor.js';
import type { NftFamily } from './model.js';
import type { ExistingObjects } from './sync-planner.js';
import { NftState } from './table-state.js';

/** Records every transaction and applies it to {@link FakeNftExecutor.state}. */
export class FakeNftExecutor implements NftExecutor {
  /** The kernel state this fake maintains. */
  readonly state = new NftState();
  /** Every transaction text passed to {@link apply}, successful or not. */
  readonly transactions: string[] = [];
  /** When set, the next {@link apply} fails with this error (then it is cleared). */
  failNext: Error | undefined;

  /** Applies atomically. @throws NftTransactionError / NftSyntaxError like nft would fail */
  async apply(text: string): Promise<void> {
    this.transactions.push(text);
    if (this.failNext) {
      const e = this.failNext;
      this.failNext = undefined;
      throw e;
    }
    this.state.apply(text);
  }

  /** Validates without committing. */
  async check(text: string): Promise<void> {
    this.state.check(text);
  }

  /** Names of chains and sets of a table. */
  async listObjects(family: NftFamily, table: string): Promise<ExistingObjects | undefined> {
    const t = this.state.table(family, table);
    if (!t) return undefined;
    return {
      chains: [...t.chains.keys()],
      sets: [...t.sets.entries()].map(([name, s]) => ({ name, kind: s.kind })),
    };
  }
}
