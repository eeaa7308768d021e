/**
 * An embedded, in-memory Kubernetes API server that speaks the real REST protocol (list
 * with pagination and selectors, watch with resourceVersions, bookmarks and streaming
 * lists, patches, graceful pod deletion, discovery), so agents and informers run against a
 * real HTTP peer with no cluster — plus fault injection and an EndpointSlice controller.
 *
 * @example
 * ```ts
 * import { startMiniApiServer } from '@nodeagent/mini-apiserver';
 *
 * const server = await startMiniApiServer({ token: 'secret', tls: 'self-signed' });
 * server.store.create('pods', {
 *   metadata: { name: 'web', namespace: 'default' },
 *   spec: { nodeName: 'node-1', containers: [{ name: 'app', image: 'nginx' }] },
 * });
 * // server.kubeconfig (https, CA data, token) works with kubectl and client-node
 * server.setTokens(['rotated']); // token rotation
 * server.faults.dropWatches();
 * await server.stop();
 * ```
 *
 * @packageDocumentation
 */

export {
  DEFAULT_TOLERATION_SECONDS,
  defaultDaemonSet,
  defaultPod,
  defaultPullPolicy,
} from './api-defaults.js';
export {
  ANONYMOUS_USER,
  type BearerToken,
  DEFAULT_TOKEN_GROUPS,
  DEFAULT_TOKEN_USER,
  SYSTEM_AUTHENTICATED,
} from './auth.js';
export {
  EndpointSliceController,
  MANAGED_BY,
  SERVICE_NAME_LABEL,
} from './endpointslice-controller.js';
export {
  ApiStatusError,
  type StatusBody,
  type StatusCause,
  type StatusDetails,
} from './errors.js';
export { fromEventsV1, toEventsV1 } from './events-v1.js';
export { type DropRule, type FailureRule, Faults, type WatchControl } from './faults.js';
export type { RequestRecord } from './handler.js';
export { type KubeconfigOptions, renderKubeconfig } from './kubeconfig.js';
export { type LabelRequirement, type LabelSelector, parseLabelSelector } from './labels.js';
export { NodeLifecycleController } from './node-lifecycle-controller.js';
export {
  DEFAULT_LARGE_CLUSTER_SIZE_THRESHOLD,
  DEFAULT_NODE_EVICTION_RATE,
  DEFAULT_NODE_MONITOR_GRACE_PERIOD_MS,
  DEFAULT_NODE_MONITOR_PERIOD_MS,
  DEFAULT_NODE_STARTUP_GRACE_PERIOD_MS,
  DEFAULT_SECONDARY_NODE_EVICTION_RATE,
  DEFAULT_UNHEALTHY_ZONE_THRESHOLD,
  type NodeLifecycleControllerOptions,
  type NodeLifecycleSettings,
  nodeLifecycleSettings,
} from './node-lifecycle-options.js';
export { NODE_CONTROLLER_COMPONENT } from './node-lifecycle-records.js';
export {
  type NodeCondition,
  type NodeTaint,
  TAINT_NODE_NOT_READY,
  TAINT_NODE_UNREACHABLE,
  TAINT_NODE_UNSCHEDULABLE,
} from './node-lifecycle-taints.js';
export type { JsonValue, KubeObject, ObjectMeta } from './object.js';
export { applyJsonPatch, applyMergePatch, applyStrategicMergePatch, type PatchType } from './patch.js';
export type { KubeletClientOptions } from './pod-node-proxy.js';
export {
  type Decision,
  forbiddenMessage,
  type PolicyRule,
  RbacAuthorizer,
  ruleAllows,
  SYSTEM_MASTERS,
  type UserInfo,
} from './rbac.js';
export { MAX_JSON_NESTING_DEPTH, MAX_STORED_NESTING_DEPTH } from './request-body.js';
export { type RequestInfo, requestInfo } from './request-info.js';
export { RESOURCE_TYPES, type ResourceName, type ResourceType } from './resources.js';
export {
  type CliOutput,
  type CliSignalSource,
  CliUsageError,
  type MiniApiServerCliIo,
  runMiniApiServerCli,
} from './run-cli.js';
export {
  bindPod,
  DEFAULT_SCHEDULER_NAME,
  failureMessage,
  MiniScheduler,
  type MiniSchedulerOptions,
  type Misfit,
} from './scheduler.js';
export { startMiniApiServer } from './server.js';
export {
  DEFAULT_HEADERS_TIMEOUT_MS,
  DEFAULT_MAX_REQUEST_BODY_BYTES,
  DEFAULT_REQUEST_TIMEOUT_MS,
  type MiniApiServer,
  type MiniApiServerOptions,
  type ServerTls,
} from './server-options.js';
export {
  type AllocationSource,
  ApiDefaulting,
  type ApiDefaultingOptions,
  DEFAULT_SERVICE_CIDR_NAME,
  DEFAULT_SERVICE_CLUSTER_IP_RANGE,
  DEFAULT_SERVICE_NODE_PORT_RANGE,
  type Ipv4Cidr,
  parseIpv4,
  parseIpv4Cidr,
} from './service-allocation.js';
export {
  admitPod,
  DEFAULT_SERVICE_ACCOUNT_NAME,
  MIRROR_POD_ANNOTATION,
  type PodAdmissionOptions,
  ROOT_CA_CONFIG_MAP,
  SERVICE_ACCOUNT_MOUNT_PATH,
  SERVICE_ACCOUNT_VOLUME_NAME,
  tokenVolumeSource,
} from './serviceaccount-admission.js';
export {
  DEFAULT_SERVICE_ACCOUNT_ISSUER,
  DEFAULT_TOKEN_EXPIRATION_SECONDS,
  EXPIRATION_EXTENSION_SECONDS,
  MAX_TOKEN_AGE_SECONDS,
  MIN_TOKEN_AGE_SECONDS,
  SERVICE_ACCOUNT_EXTRA,
  type ServiceAccountTokenOptions,
  ServiceAccountTokens,
  serviceAccountGroups,
  serviceAccountUsername,
  type TokenAuthentication,
  type TokenUser,
  WARN_ONLY_BOUND_TOKEN_EXPIRATION_SECONDS,
} from './serviceaccount-token.js';
export { ROOT_CA_DESCRIPTION, ServiceAccountsController } from './serviceaccounts-controller.js';
export {
  type CreateOptions,
  DEFAULT_HISTORY_MAX_BYTES,
  DEFAULT_MAX_OBJECT_BYTES,
  type DeleteOptions,
  type DeleteResult,
  ObjectStore,
  type ObjectStoreOptions,
  type StoreChange,
  type WriteOptions,
} from './store.js';
export type { StoreEventType } from './table.js';
export {
  type CertificateAndKey,
  CertificateGenerationError,
  type ClientCertificateOptions,
  createSelfSignedTls,
  issueClientCertificate,
  OpensslNotFoundError,
  type SelfSignedTls,
  type SelfSignedTlsOptions,
  type TlsMaterial,
} from './tls.js';
