/**
 * kube-proxy's IPVS mode as data: a pure planner from a `@nodeagent/proxy-state` snapshot to
 * virtual servers (scheduler, persistence for ClientIP affinity) and real servers, the
 * addresses to bind on `kube-ipvs0`, kube-proxy's ipsets and the residual iptables rules;
 * renderers for `ipvsadm-restore`, `ipset restore` and `iptables-restore` text; an
 * incremental diff with graceful termination (weight 0, delete once drained) that leaves
 * `--ipvs-exclude-cidrs` alone; executors; kube-proxy's IPVS start-up (`prepareIpvsNode`:
 * the ipset/kernel/scheduler check, the sysctls, the timeouts); and a packet tracer.
 *
 * IPVS mode is deprecated in kube-proxy since Kubernetes 1.35: `prepareIpvsNode` logs
 * upstream's {@link IPVS_DEPRECATION_MESSAGE}; prefer `@nodeagent/nftables` for new work.
 *
 * IPVS is not available on the kernel this package is developed and tested on ("Protocol not
 * available"; no dummy link type either): the IPVS part is tested against
 * `FakeIpvsExecutor` from `@nodeagent/ipvs/testing`, the ipset and iptables parts against the
 * real kernel in network namespaces.
 *
 * @example
 * ```ts
 * import { buildProxySnapshots } from '@nodeagent/proxy-state';
 * import { planIpvs, renderIpvsadmRestore, traceIpvs } from '@nodeagent/ipvs';
 *
 * const { v4 } = buildProxySnapshots({ nodeName: 'node-a', nodeIPs: ['192.168.0.2'], services, endpointSlices });
 * const plan = planIpvs(v4, { localDetector: { mode: 'ClusterCIDR', cidr: '10.0.0.0/8' } });
 * renderIpvsadmRestore(plan); // '-A -t 172.30.0.41:80 -s rr\n-a -t 172.30.0.41:80 -r 10.180.0.1:80 -m -w 1\n'
 * traceIpvs(plan, { sourceIP: '10.0.0.5', destIP: '172.30.0.41', destPort: 80 }).endpoints; // ['10.180.0.1:80']
 * ```
 *
 * @packageDocumentation
 */
export { IpvsBackend, type IpvsBackendOptions, type IpvsFamilyOptions } from './backend.js';
export {
  type ConnectionCounts,
  type DiffIpvsOptions,
  diffIpvs,
  type IpvsDiff,
  type TerminatingRealServer,
} from './diff.js';
export {
  InvalidEndpointError,
  IPSetOverflowError,
  type IpvsPlanError,
  VirtualServerConflictError,
} from './errors.js';
export {
  IpvsCommandError,
  type IpvsExecutor,
  IpvsOperationError,
  type IpvsStatsSource,
  type IpvsTimeouts,
  timeoutSeconds,
} from './executor.js';
export {
  IPSET_DEFINITIONS,
  IPSET_MAX_NAME_LENGTH,
  type IPSetDefinition,
  ipPortEntry,
  ipPortIpEntry,
  ipPortNetEntry,
  ipsetName,
  KUBE_CLUSTER_IP,
  KUBE_EXTERNAL_IP,
  KUBE_EXTERNAL_IP_LOCAL,
  KUBE_HEALTH_CHECK_NODE_PORT,
  KUBE_IPVS_IPS,
  KUBE_LOAD_BALANCER,
  KUBE_LOAD_BALANCER_FW,
  KUBE_LOAD_BALANCER_LOCAL,
  KUBE_LOAD_BALANCER_SOURCE_CIDR,
  KUBE_LOAD_BALANCER_SOURCE_IP,
  KUBE_LOOP_BACK,
  KUBE_NODE_PORT_LOCAL_SCTP_HASH,
  KUBE_NODE_PORT_LOCAL_TCP,
  KUBE_NODE_PORT_LOCAL_UDP,
  KUBE_NODE_PORT_SCTP_HASH,
  KUBE_NODE_PORT_TCP,
  KUBE_NODE_PORT_UDP,
  type ParsedIPSetEntry,
  parseIPSetEntry,
} from './ipsets.js';
export {
  IPVS_DEPRECATION_MESSAGE,
  type IpvsNodeReport,
  type PrepareIpvsNodeOptions,
  prepareIpvsNode,
} from './ipvs-node.js';
export {
  checkIpvsSupport,
  IPVS_PROBE_VIRTUAL_SERVER,
  type IpvsSupportOptions,
  IpvsUnavailableError,
  type IpvsUnavailableReason,
  MIN_IPSET_VERSION,
  parseIpsetVersion,
} from './ipvs-support.js';
export {
  CONN_REUSE_MODE_FIXED_KERNEL,
  CONN_REUSE_MODE_MIN_KERNEL,
  ensureIpvsSysctls,
  ensureSysctls,
  type IpvsSysctl,
  type IpvsSysctlOptions,
  ipvsSysctls,
  parseKernelVersion,
  SYSCTL_ARP_ANNOUNCE,
  SYSCTL_ARP_IGNORE,
  SYSCTL_IP_FORWARD,
  SYSCTL_VS_CONN_REUSE_MODE,
  SYSCTL_VS_CONNTRACK,
  SYSCTL_VS_EXPIRE_NODEST_CONN,
  SYSCTL_VS_EXPIRE_QUIESCENT_TEMPLATE,
  type SysctlReport,
} from './ipvs-sysctls.js';
export {
  compareVirtualServers,
  type IPSet,
  type IPSetType,
  type IpvsProtocol,
  type IpvsState,
  type RealServer,
  type RealServerId,
  realServerKey,
  sameVirtualServerSpec,
  uniqueRealServerKey,
  type VirtualServer,
  type VirtualServerFlag,
  type VirtualServerId,
  type VirtualServerSpec,
  virtualServerKey,
  virtualServerSpec,
} from './model.js';
export {
  type IPSetHeader,
  type IpvsOperation,
  isIpsetOperation,
  type OperationBackend,
  operationBackend,
} from './operations.js';
export {
  parseIPAddrShow,
  parseIPSetSave,
  parseIpvsadmList,
  parseIpvsadmSave,
  splitHostPort,
} from './parse-tools.js';
export {
  type IpvsPlanOptions,
  type LocalTrafficDetector,
  type ResolvedIpvsPlanOptions,
  resolveIpvsPlanOptions,
} from './plan-options.js';
export { type IpvsPlan, type PlannedVirtualServer, planIpvs, type VirtualServerKind } from './planner.js';
export { IpvsReconciler, type IpvsReconcilerOptions, type IpvsSyncResult } from './reconciler.js';
export {
  checkIPSetEntry,
  IPSetRenderError,
  type IpsetRestoreOptions,
  ipsetCreateArgs,
  renderIpsetOperations,
  renderIpsetRestore,
} from './render-ipset.js';
export {
  IptablesRenderError,
  type IpvsJumpRule,
  ipvsJumpRules,
  renderResidualIptables,
  ruleLine,
} from './render-iptables.js';
export {
  IpvsRenderError,
  ipvsadmArgs,
  renderIpvsadmOperations,
  renderIpvsadmRestore,
  serviceArgs,
  serviceOptionArgs,
} from './render-ipvsadm.js';
export {
  buildResidualIptables,
  IPVS_FILTER_CHAINS,
  IPVS_NAT_CHAINS,
  KUBE_FORWARD,
  KUBE_IPVS_FILTER,
  KUBE_IPVS_OUT_FILTER,
  KUBE_LOAD_BALANCER_CHAIN,
  KUBE_MARK_MASQ,
  KUBE_NODE_PORT,
  KUBE_POSTROUTING,
  KUBE_PROXY_FIREWALL,
  KUBE_SERVICES,
  KUBE_SOURCE_RANGES_FIREWALL,
  type NoNodeAccessEntry,
  type ResidualIptables,
  type ResidualRule,
  type RuleMatch,
  type RuleTarget,
} from './residual-iptables.js';
export { DEFAULT_IPVS_SCHEDULER, IPVS_SCHEDULERS, ipvsSchedulerProblem } from './schedulers.js';
export { SpawnIpvsExecutor, type SpawnIpvsExecutorOptions } from './spawn-executor.js';
export {
  ensureSysctl,
  ProcSysctl,
  type ProcSysctlOptions,
  type SysctlAccess,
  type SysctlChange,
  SysctlError,
} from './sysctl-access.js';
export { type IpvsTracePacket, type IpvsTraceResult, traceIpvs } from './tracer.js';
