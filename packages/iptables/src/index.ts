/**
 * kube-proxy's iptables mode as a library: a pure renderer that writes the same chains,
 * rules and comments kube-proxy writes (Fixture-exact), full and partial sync planning with
 * stale-chain deletion, an executor that drives `iptables-restore` (optionally inside a
 * network namespace), the canary monitor, and a packet tracer over rendered rules.
 *
 * @example
 * ```ts
 * import { buildProxySnapshots } from '@nodeagent/proxy-state';
 * import { renderIptables, tracePacket } from '@nodeagent/iptables';
 *
 * const { v4 } = buildProxySnapshots({ nodeName: 'node-a', nodeIPs: ['192.168.0.2'], services, endpointSlices });
 * const rules = renderIptables(v4, { localDetector: { mode: 'ClusterCIDR', cidr: '10.0.0.0/8' } });
 * tracePacket(rules, { sourceIP: '10.0.0.5', destIP: '172.30.0.41', destPort: 80 }).endpoints; // ['10.180.0.1:80']
 * ```
 *
 * @packageDocumentation
 */
export {
  IptablesBackend,
  type IptablesBackendOptions,
  type IptablesFamilyOptions,
} from './backend.js';
export { CanaryMonitor, type CanaryMonitorOptions } from './canary-monitor.js';
export {
  EXT_PREFIX,
  endpointChainName,
  FW_PREFIX,
  isServiceChainName,
  KUBE_EXTERNAL_SERVICES,
  KUBE_FIREWALL,
  KUBE_FORWARD,
  KUBE_MARK_MASQ,
  KUBE_NODEPORTS,
  KUBE_POSTROUTING,
  KUBE_PROXY_CANARY,
  KUBE_PROXY_FIREWALL,
  KUBE_SERVICES,
  portProtoHash,
  SEP_PREFIX,
  SVC_PREFIX,
  SVL_PREFIX,
  serviceClusterChainName,
  serviceExternalChainName,
  serviceFirewallChainName,
  serviceLocalChainName,
} from './chain-names.js';
export { removeOwnedIptablesChains } from './cleanup.js';
export {
  IptablesCommandError,
  type IptablesExecutor,
  type JumpRule,
  jumpRuleArgs,
  kubeProxyJumpRules,
  type RestoreFlags,
} from './executor.js';
export {
  countWrittenRules,
  IptablesSyncer,
  type IptablesSyncerOptions,
  type IptablesSyncOptions,
  type IptablesSyncResult,
} from './iptables-syncer.js';
export {
  detectNfacct,
  ensureNfacctCounters,
  KUBE_PROXY_NFACCT_COUNTERS,
  NFACCT_CT_STATE_INVALID_DROPPED,
  NFACCT_LOCALHOST_NODEPORTS_ACCEPTED,
  type NfacctAvailability,
  type NfacctClient,
  type NfacctCounter,
  NfacctError,
  parseNfacctList,
  SpawnNfacctClient,
  type SpawnNfacctClientOptions,
} from './nfacct.js';
export { computeProbability, ProbabilityCache } from './probability.js';
export {
  IptablesRenderer,
  type IptablesRuleset,
  type RenderScope,
  renderIptablesRuleset,
  type ServicePortRules,
} from './render.js';
export { renderIptables, renderIptablesSnapshot, snapshotRenderOptions } from './render-iptables.js';
export {
  type IptablesRenderOptions,
  type LocalTrafficDetector,
  type ResolvedRenderOptions,
  resolveRenderOptions,
} from './render-options.js';
export {
  type ParsedChain,
  type ParsedRule,
  type ParsedTable,
  parseRestoreText,
  parseRule,
  RestoreParseError,
  type RuleValue,
  type SetMatch,
  tokenizeRule,
} from './restore-parser.js';
export {
  type RestoreChunk,
  type RestoreChunksOptions,
  type RestoreTextOptions,
  restoreChunks,
  restoreChunksPlan,
  restoreText,
  sharedChainsText,
} from './restore-text.js';
export { canonicalChains, canonicalRule } from './rule-canon.js';
export {
  type IptablesEndpoint,
  type IptablesServicePort,
  type L4Protocol,
  servicePortNameString,
} from './service-port.js';
export { SnapshotAdapter, servicePortFromSnapshot, snapshotFamily } from './snapshot-input.js';
export { sortRestoreText } from './sort-restore-text.js';
export { SpawnIptablesExecutor, type SpawnIptablesExecutorOptions } from './spawn-executor.js';
export {
  type FullSyncReason,
  IptablesSyncPlanner,
  type IptablesSyncPlannerOptions,
  type SyncPlan,
} from './sync-planner.js';
export {
  type IptablesTables,
  type TracePacket,
  type TraceResult,
  tablesFromRestoreText,
  tracePacket,
} from './tracer.js';
