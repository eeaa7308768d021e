/**
 * kube-proxy's loop as a library: informers for Services, EndpointSlices and this Node feed
 * `@nodeagent/proxy-state`; a bounded-frequency runner syncs each checkout into a backend —
 * `IptablesBackend`, `NftablesBackend` or `IpvsBackend` from their `@nodeagent` packages
 * (optional installs: install the one you use), or your own `DataPlaneBackend`;
 * plus kube-proxy's healthz server (port 10256 semantics), health-check node ports for
 * `externalTrafficPolicy: Local` services, stale UDP conntrack cleanup and the `kubeproxy_*`
 * metrics.
 *
 * @example
 * ```ts
 * import { KubeConfig } from '@kubernetes/client-node';
 * import { NftablesBackend, SpawnNftExecutor } from '@nodeagent/nftables';
 * import { Proxier } from '@nodeagent/proxier';
 *
 * const kubeConfig = new KubeConfig();
 * kubeConfig.loadFromDefault();
 * const proxier = new Proxier({
 *   kubeConfig,
 *   nodeName: 'node-a',
 *   backend: new NftablesBackend({ ipv4: { executor: new SpawnNftExecutor() } }),
 * });
 * proxier.on('objectError', (err) => console.warn(err.message));
 * await proxier.start(AbortSignal.timeout(60_000));
 * ```
 *
 * @packageDocumentation
 */
export {
  BACKEND_PACKAGES,
  type BackendModules,
  BackendNotInstalledError,
  type LoadBackendOptions,
  loadBackendModule,
  type ModuleLoader,
  type ProxyMode,
} from './backend-loader.js';
export {
  BoundedFrequencyRunner,
  type BoundedFrequencyRunnerOptions,
} from './bounded-frequency-runner.js';
export type {
  DetectedMode as DataPlaneMode,
  Finding as DataPlaneFinding,
  Severity as DataPlaneSeverity,
} from './cli/doctor-checks.js';
export type { DoctorCommandResult, DoctorRunner } from './cli/doctor-read.js';
export {
  type ConntrackCleaner,
  ConntrackError,
  type ConntrackFilter,
  conntrackArgs,
  NO_CONNECTION_TO_DELETE,
  SpawnConntrackCleaner,
  type SpawnConntrackCleanerOptions,
} from './conntrack.js';
export {
  type DataPlaneDoctorOptions,
  type DataPlaneDoctorResult,
  dataPlaneDoctor,
} from './data-plane-doctor.js';
export { ProxierSyncError } from './errors.js';
export {
  type BindAddress,
  goTime,
  InvalidBindAddressError,
  parseBindAddress,
} from './http-util.js';
export { healthCheckNodePorts, localReadyEndpoints } from './local-endpoints.js';
export {
  createProxierMetrics,
  NFACCT_METRICS,
  type NfacctCounterSource,
  noopProxierMetrics,
  PROXIER_METRIC_NAMES,
  type ProxierMetrics,
  type ProxierMetricsOptions,
  registerNfacctCollectors,
} from './metrics.js';
export {
  type ListInterfaceAddressesOptions,
  listInterfaceAddresses,
  NODE_POLL_INTERVAL_MS,
  NODE_POLL_TIMEOUT_MS,
  type NodePortAddresses,
  NodeWaitTimeoutError,
  newNodePortAddresses,
  nodePodCIDRs,
  nodePortAddressIPs,
  podCIDRsChanged,
  type WaitForNodeOptions,
  waitForNodePodCIDRs,
} from './node-manager.js';
export { Proxier, type ProxierEvents, type ProxierOptions } from './proxier.js';
export {
  DEFAULT_HEALTHZ_PORT,
  type FamilyHealth,
  type ProxyHealthBody,
  ProxyHealthServer,
  type ProxyHealthServerOptions,
  TO_BE_DELETED_TAINT,
} from './proxy-health-server.js';
export { ServiceHealthServer, type ServiceHealthServerOptions } from './service-health-server.js';
export { staleConntrackFilters } from './stale-conntrack.js';
export type { ProxierSyncResult } from './sync-loop.js';
