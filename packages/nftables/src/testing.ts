/**
 * Test helpers: the in-memory executor with nft's transaction semantics.
 *
 * @packageDocumentation
 */
export { FakeNftExecutor } from './fake-executor.js';
export { dumpTable, NftState, type NftTableState, NftTransactionError } from './table-state.js';
