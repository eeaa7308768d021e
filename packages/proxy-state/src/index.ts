/**
 * kube-proxy's service and EndpointSlice bookkeeping, without any rule syntax: change
 * trackers, the EndpointSlice cache, endpoint categorisation (traffic policies, topology
 * hints, terminating fallback) and immutable per-family snapshots for the renderers, plus what
 * the iptables, nftables and IPVS renderers share: the one service port check
 * ({@link checkServicePort}, {@link InvalidServicePortError}), rule comment quoting
 * ({@link quoteIptablesComment}, {@link quoteNftComment}) and kube-proxy's chain-name hash
 * ({@link chainNameHash}). Objects come in already parsed; reading manifest files is the CLI's job.
 *
 * @example
 * ```ts
 * import { ProxyState } from '@nodeagent/proxy-state';
 *
 * const state = new ProxyState({ nodeName: 'node-a', nodeIPs: ['192.168.0.2'] });
 * state.onServiceAdd({
 *   metadata: { namespace: 'ns1', name: 'svc1' },
 *   spec: { clusterIP: '172.30.0.41', ports: [{ name: 'p80', port: 80, protocol: 'TCP' }] },
 * });
 * state.onEndpointSliceAdd({
 *   metadata: { namespace: 'ns1', name: 'svc1-abc', labels: { 'kubernetes.io/service-name': 'svc1' } },
 *   addressType: 'IPv4',
 *   ports: [{ name: 'p80', port: 80, protocol: 'TCP' }],
 *   endpoints: [{ addresses: ['10.180.0.1'] }],
 * });
 * const { v4 } = state.checkout();
 * v4.categorize('ns1/svc1:p80').clusterEndpoints.map((e) => e.endpoint); // ['10.180.0.1:80']
 * ```
 *
 * @packageDocumentation
 */
export {
  type BackendHost,
  type BackendSyncOptions,
  type BackendSyncResult,
  configuredFamilies,
  type DataPlaneBackend,
  type FamilySyncResult,
  FULL_SYNC_PERIOD_MS,
  type PerFamilyOptions,
} from './backend.js';
export {
  type BuildProxySnapshotsInput,
  type BuiltProxySnapshots,
  buildProxySnapshots,
} from './build-snapshots.js';
export {
  type CategorizeNode,
  type CategorizeOptions,
  categorizeEndpoints,
  type ServicePortPolicy,
  topologyModeFromHints,
} from './categorize-endpoints.js';
export { chainNameHash } from './chain-name-hash.js';
export { type Change, ChangeTracker } from './change-tracker.js';
export {
  EndpointSliceCache,
  type EndpointsChange,
  type EndpointsMap,
  endpointsMapKey,
  endpointsMapsEqual,
} from './endpoint-slice-cache.js';
export {
  ANNOTATION_LAST_CHANGE_TRIGGER_TIME,
  LABEL_SERVICE_NAME,
  type ParsedEndpointSlice,
  parseEndpointSlice,
  type SliceEndpoint,
  type SlicePort,
} from './endpoint-slice-info.js';
export {
  InvalidEndpointSliceError,
  InvalidServiceError,
  InvalidServicePortError,
  isValidPort,
  type ProxyStateError,
} from './errors.js';
export {
  type ChangeCounts,
  LABEL_TOPOLOGY_ZONE,
  ProxyState,
  type ProxyStateOptions,
  type UpdateResult,
} from './proxy-state.js';
export {
  DEFAULT_MASQUERADE_BIT,
  type LocalTrafficDetector,
  type ProxyRenderOptions,
} from './render-options.js';
export {
  iptablesCommentArg,
  isCleanIptablesComment,
  MAX_IPTABLES_COMMENT_BYTES,
  MAX_NFT_COMMENT_BYTES,
  quoteIptablesComment,
  quoteNftComment,
} from './rule-comments.js';
export {
  type CollectedServiceCIDRs,
  collectServiceCIDRs,
  InvalidServiceCIDRError,
} from './service-cidrs.js';
export {
  type CheckedServicePort,
  checkEndpoint,
  checkServicePort,
  checkServicePortFields,
  type ServicePortCheckOptions,
  type ServicePortFields,
} from './service-port-check.js';
export {
  DEFAULT_STICKY_MAX_AGE_SECONDS,
  type ParsedService,
  parseService,
  type ServicePortMap,
  servicePortMapsEqual,
} from './service-port-map.js';
export { endpointString, namespacedName, servicePortNameString } from './service-port-name.js';
export type { TraceOutcome, TracePacket, TraceResult } from './trace.js';
export type {
  CategorizedEndpoints,
  Endpoint,
  IPFamily,
  IPFamilyName,
  NodeInfo,
  Protocol,
  ProxyCheckout,
  ProxySnapshot,
  ServicePortInfo,
  ServicePortName,
  TopologyMode,
} from './types.js';
export { ipFamilyName } from './types.js';
