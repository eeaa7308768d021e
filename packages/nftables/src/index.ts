/**
 * kube-proxy's nftables mode as a library: a pure renderer writing kube-proxy's table
 * (`ip kube-proxy` / `ip6 kube-proxy`, verdict maps, `numgen` endpoint choice, affinity
 * sets) or an optimized layout with the same packet outcomes; incremental one-transaction
 * syncs against an in-memory mirror; an executor driving `nft -f -`; and a packet tracer.
 *
 * @example
 * ```ts
 * import { buildProxySnapshots } from '@nodeagent/proxy-state';
 * import { renderNftables, tracePacket } from '@nodeagent/nftables';
 *
 * const { v4 } = buildProxySnapshots({ nodeName: 'node-a', nodeIPs: ['192.168.0.2'], services, endpointSlices });
 * const text = renderNftables(v4, { localDetector: { mode: 'ClusterCIDR', cidr: '10.0.0.0/8' } });
 * tracePacket(text, { sourceIP: '10.0.0.5', destIP: '172.30.0.41', destPort: 80 }).endpoints; // ['10.180.0.1:80']
 * ```
 *
 * @packageDocumentation
 */
export {
  NftablesBackend,
  type NftablesBackendOptions,
  type NftablesFamilyOptions,
} from './backend.js';
export {
  affinitySetName,
  CHAIN_NAME_BASE_MAX_LENGTH,
  type ChainNameParts,
  endpointChainName,
  endpointChainNameBase,
  externalChainName,
  firewallChainName,
  hashAndTruncate,
  isServiceChainName,
  localChainName,
  SAFE_NAME_PART,
  serviceChainName,
  servicePortChainNameBase,
} from './chain-names.js';
export { NftCommandError, type NftExecutor } from './executor.js';
export type {
  ChainHook,
  ChainSpec,
  ElementSpec,
  NftFamily,
  NftRuleset,
  PortRender,
  SetSpec,
} from './model.js';
export { type NftCommand, NftSyntaxError, parseNftCommands } from './nft-commands.js';
export {
  NftSyncer,
  type NftSyncerOptions,
  type NftSyncOptions,
  type NftSyncResult,
} from './nft-syncer.js';
export { NFT } from './render-base.js';
export { renderNftables, renderNftablesRuleset, snapshotRenderOptions } from './render-nftables.js';
export {
  type LocalTrafficDetector,
  type NftLayout,
  type NftRenderOptions,
  type ResolvedNftOptions,
  resolveNftOptions,
} from './render-options.js';
export { type LbKind, lbChainName, OPT } from './render-port-optimized.js';
export { NftRenderer, type RenderResult } from './renderer.js';
export { RuleParseError } from './rule-parser.js';
export { parseListObjects, SpawnNftExecutor, type SpawnNftExecutorOptions } from './spawn-executor.js';
export {
  type ExistingObjects,
  NftSyncPlanner,
  type NftSyncPlannerOptions,
  type SyncPlan,
} from './sync-planner.js';
export {
  dumpTable,
  type NftTableState,
  NftTransactionError,
  type StateChain,
  type StateSet,
} from './table-state.js';
export { NftTracer, type TracePacket, type TraceResult, tableFromText, tracePacket } from './tracer.js';
