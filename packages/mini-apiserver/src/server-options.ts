/**
 * The options of `startMiniApiServer()` and the interface of a running server.
 *
 * @module
 */

import type { Clock, Logger } from '@nodeagent/core';
import type { BearerToken } from './auth.js';
import type { EndpointSliceController } from './endpointslice-controller.js';
import type { Faults } from './faults.js';
import type { RequestRecord } from './handler.js';
import type { NodeLifecycleController } from './node-lifecycle-controller.js';
import type { KubeletClientOptions } from './pod-node-proxy.js';
import type { MiniScheduler } from './scheduler.js';
import type { ServiceAccountTokens } from './serviceaccount-token.js';
import type { ObjectStore } from './store.js';
import type { CertificateAndKey, TlsMaterial } from './tls.js';

/** Options of `startMiniApiServer()`. */
export interface MiniApiServerOptions {
  /**
   * TCP port on 127.0.0.1; 0 picks a free one.
   * @default 0
   */
  readonly port?: number;
  /**
   * Address to listen on.
   * @default '127.0.0.1'
   */
  readonly host?: string;
  /** Listen on this unix socket path instead of TCP. */
  readonly socketPath?: string;
  /** Require `Authorization: Bearer <token>` (401 otherwise); also written to the kubeconfig. */
  readonly token?: string;
  /**
   * Accepted bearer tokens (in addition to `token`); a bare string authenticates as
   * `mini-apiserver-user`. Replace them at runtime with {@link MiniApiServer.setTokens}.
   * When neither `token` nor `tokens` nor `requestCert` is set, requests are anonymous.
   * @default []
   */
  readonly tokens?: ReadonlyArray<string | BearerToken>;
  /**
   * Serve HTTPS: PEM material, or `'self-signed'` to generate a throwaway CA and a server
   * certificate for 127.0.0.1, ::1, localhost (and `host`) at start with the `openssl`
   * binary (an `OpensslNotFoundError` when it is missing). The kubeconfig then carries
   * `certificate-authority-data` and no `insecure-skip-tls-verify`.
   * @default undefined (plain HTTP)
   */
  readonly tls?: 'self-signed' | TlsMaterial;
  /**
   * With `tls`: ask clients for a certificate and accept certificates signed by the CA
   * (`tls.ca`, or the generated one), mapping the common name to the user name. A client
   * certificate (the generated one, or `tls.clientCertificate`) goes into the kubeconfig.
   * @default false
   */
  readonly requestCert?: boolean;
  /**
   * Common name (user name) of the client certificate generated with `tls: 'self-signed'`
   * and `requestCert`; its organization is `system:masters`.
   * @default 'mini-apiserver-admin'
   */
  readonly clientCertificateUser?: string;
  /**
   * The `openssl` executable used by `tls: 'self-signed'`.
   * @default 'openssl'
   */
  readonly opensslPath?: string;
  /**
   * Live events a watch may have waiting for a client that does not read (its socket is
   * full) before the server closes it, like the real server's per-watcher buffer; the
   * client then re-watches from its last resourceVersion. 0 = unbounded.
   * @default 10000
   */
  readonly watchBufferMaxEvents?: number;
  /**
   * The same bound in bytes of serialized events. 0 = unbounded.
   * @default 67108864 (64 MiB)
   */
  readonly watchBufferMaxBytes?: number;
  /** Also write the kubeconfig to this file. */
  readonly kubeconfigPath?: string;
  /**
   * Time source for timestamps, bookmark intervals, watch timeouts and injected latency.
   * @default realClock
   */
  readonly clock?: Clock;
  /** @default noopLogger */
  readonly logger?: Logger;
  /**
   * Interval between BOOKMARK events on watches that allow them, in milliseconds (0 = never).
   * @default 60000
   */
  readonly bookmarkIntervalMs?: number;
  /**
   * Server-side timeout of watches without `timeoutSeconds`; 0 = never. The real server
   * picks a random value between 30 and 60 minutes.
   * @default 0
   */
  readonly watchTimeoutSeconds?: number;
  /**
   * Events kept per resource type for watches from an older resourceVersion.
   * @default 10000
   */
  readonly historySize?: number;
  /**
   * Bytes of serialized objects the watch history of all resource types may hold together;
   * past it the oldest events are forgotten first, as etcd compaction forgets old
   * revisions, and a watch or continue token from before the oldest event kept gets 410
   * Expired (a reflector then relists). Minimum: 0.
   * @default 67108864 (64 MiB)
   */
  readonly historyMaxBytes?: number;
  /**
   * Largest object stored, in bytes of its JSON (etcd's default `--max-request-bytes`). A
   * larger create or update fails as on a real cluster: 500 `etcdserver: request is too large`.
   * @default 1572864 (1.5 MiB)
   */
  readonly maxObjectBytes?: number;
  /**
   * Largest request body read, in bytes (kube-apiserver's `MaxRequestBodyBytes`); past it the
   * answer is 413 `Request entity too large: limit is 3145728`.
   * @default 3145728 (3 MiB)
   */
  readonly maxRequestBodyBytes?: number;
  /**
   * How requests are authorized: `'AlwaysAllow'` lets every authenticated request through;
   * `'RBAC'` decides with the Roles, ClusterRoles, RoleBindings and ClusterRoleBindings
   * stored in the server (rbac.authorization.k8s.io/v1) as kube-apiserver's RBAC authorizer
   * (403 Forbidden otherwise; `system:masters` members are always allowed), and creates the
   * bootstrap roles for discovery and self access reviews. `SubjectAccessReview` and
   * `SelfSubjectAccessReview` answer in both modes.
   * @default 'AlwaysAllow'
   */
  readonly authorization?: 'AlwaysAllow' | 'RBAC';
  /**
   * Time a request other than a watch may take, body included, before the server answers
   * 504 `Timeout: request did not complete within requested timeout - context deadline
   * exceeded` and closes the connection (kube-apiserver's `--request-timeout`). 0 = never.
   * Measured on `clock`.
   * @default 60000
   */
  readonly requestTimeoutMs?: number;
  /**
   * Time a client has to send the request line and headers before the connection is closed
   * (kube-apiserver's `ReadHeaderTimeout`; Node answers 408 before closing). Node's own timer.
   * @default 32000
   */
  readonly headersTimeoutMs?: number;
  /**
   * Create namespaces on the fly instead of answering 404 for objects in a missing one.
   * @default false
   */
  readonly autoCreateNamespaces?: boolean;
  /**
   * Run the built-in EndpointSlice controller (Services + Pods → EndpointSlices).
   * @default false
   */
  readonly endpointSliceController?: boolean;
  /**
   * Apply kube-apiserver's API defaulting and allocation (pod defaults, Service `type`,
   * `clusterIP` from the service CIDRs, NodePorts) on every create and update.
   * @default true
   */
  readonly apiDefaulting?: boolean;
  /**
   * kube-apiserver's `--service-cluster-ip-range` (IPv4): the default `kubernetes`
   * ServiceCIDR and the range `clusterIP`s come from.
   * @default '10.0.0.0/24'
   */
  readonly serviceClusterIpRange?: string;
  /**
   * Run the minimal scheduler (`scheduler.ts`): pods without `spec.nodeName` are bound to a
   * node that fits.
   * @default false
   */
  readonly schedule?: boolean;
  /**
   * Run the node lifecycle controller (`node-lifecycle-controller.ts`, kube-controller-manager's
   * `nodelifecycle`): a Node whose kubelet stops renewing its Lease and posting its Ready
   * condition goes `Unknown` (NotReady) after `nodeMonitorGracePeriodMs`, gets the
   * `node.kubernetes.io/unreachable` taints and its pods are marked not Ready; the taints go
   * once it is Ready again. Pods are never evicted (no taint eviction controller).
   * @default false
   */
  readonly nodeLifecycleController?: boolean;
  /**
   * How often the node lifecycle controller checks heartbeats (`--node-monitor-period`).
   * Minimum: 1.
   * @default 5000
   */
  readonly nodeMonitorPeriodMs?: number;
  /**
   * Time without a Node heartbeat (Ready `lastHeartbeatTime` or `kube-node-lease` Lease
   * `renewTime`) before its conditions go Unknown (`--node-monitor-grace-period`, 50 s since
   * Kubernetes 1.32). Minimum: 0.
   * @default 50000
   */
  readonly nodeMonitorGracePeriodMs?: number;
  /**
   * The same for a Node that never posted a Ready condition, from its creation
   * (`--node-startup-grace-period`). Minimum: 0.
   * @default 60000
   */
  readonly nodeStartupGracePeriodMs?: number;
  /**
   * The issuer of service account tokens (kube-apiserver's `--service-account-issuer`): the
   * `iss` of the tokens the `serviceaccounts/<name>/token` subresource issues, and the only
   * issuer accepted. Also the base of the `jwks_uri` in `/.well-known/openid-configuration`.
   * @default 'https://kubernetes.default.svc.cluster.local'
   */
  readonly serviceAccountIssuer?: string;
  /**
   * The API audiences (`--api-audiences`): the audiences of tokens requested without any, and
   * those a token must carry one of to authenticate a request to this server.
   * @default [serviceAccountIssuer]
   */
  readonly apiAudiences?: readonly string[];
  /**
   * PEM private key that signs service account tokens (`--service-account-signing-key-file`):
   * RSA (RS256) or EC P-256/P-384/P-521 (ES256/ES384/ES512).
   * @default an RSA 2048 key generated on first use
   */
  readonly serviceAccountSigningKey?: string;
  /**
   * `--service-account-extend-token-expiration`: a pod-bound token requested for 3607 s (what
   * the admission plugin puts in projected volumes) lives a year, with a `warnafter` claim at
   * the requested time.
   * @default true
   */
  readonly serviceAccountExtendTokenExpiration?: boolean;
  /**
   * Run pods created through the HTTP API through the ServiceAccount admission plugin: the
   * `default` service account when none is named, 403 when the named one does not exist, and
   * the projected `kube-api-access-<random>` token volume mounted in every container, as a
   * real cluster sends pods to nodes. Pods written through {@link MiniApiServer.store} are
   * stored as given (as objects written to etcd directly).
   * @default true
   */
  readonly serviceAccountAdmission?: boolean;
  /**
   * Keep a `default` ServiceAccount and a `kube-root-ca.crt` ConfigMap (the server's CA as
   * `ca.crt`; empty on plain HTTP) in every namespace, as kube-controller-manager's
   * `serviceaccount` and `root-ca-cert-publisher` controllers do.
   * @default true
   */
  readonly serviceAccountControllers?: boolean;
  /**
   * How many handled requests {@link MiniApiServer.requests} keeps.
   * @default 1000
   */
  readonly requestLogSize?: number;
  /**
   * How `pods/log`, `pods/exec`, `pods/attach` and `pods/portforward` reach the pod's kubelet
   * (client certificate, CA). Without it those subresources answer 400.
   * @default none
   */
  readonly kubeletClient?: KubeletClientOptions;
}

/** Default of {@link MiniApiServerOptions.requestTimeoutMs}: kube-apiserver's `--request-timeout` of 1 minute. */
export const DEFAULT_REQUEST_TIMEOUT_MS = 60_000;

/** Default of {@link MiniApiServerOptions.headersTimeoutMs}: kube-apiserver's `ReadHeaderTimeout` of 32 s. */
export const DEFAULT_HEADERS_TIMEOUT_MS = 32_000;

/** Default of {@link MiniApiServerOptions.maxRequestBodyBytes}: kube-apiserver's 3 MiB. */
export const DEFAULT_MAX_REQUEST_BODY_BYTES = 3 * 1024 * 1024;

/** A running mini API server. */
export interface MiniApiServer {
  /** Base URL, e.g. `http://127.0.0.1:40123` (`http://localhost` for a unix socket). */
  readonly url: string;
  /** TCP port (0 for a unix socket). */
  readonly port: number;
  /** The unix socket path, when listening on one. */
  readonly socketPath: string | undefined;
  /** Kubeconfig text pointing at this server (JSON, which is valid YAML). */
  readonly kubeconfig: string;
  /** Where the kubeconfig was written, when `kubeconfigPath` was given. */
  readonly kubeconfigPath: string | undefined;
  /**
   * Direct access to the objects, with the same watch events as the HTTP API. Objects are kept
   * as given, as a write to etcd would keep them: API defaulting
   * ({@link MiniApiServerOptions.apiDefaulting}) applies to clients' writes only, so a client's
   * later patch of such an object defaults it then.
   */
  readonly store: ObjectStore;
  /** Fault injection. */
  readonly faults: Faults;
  /** The EndpointSlice controller, when enabled. */
  readonly endpointSlices: EndpointSliceController | undefined;
  /** The minimal scheduler, when {@link MiniApiServerOptions.schedule} is on. */
  readonly scheduler: MiniScheduler | undefined;
  /** The node lifecycle controller, when {@link MiniApiServerOptions.nodeLifecycleController} is on. */
  readonly nodeLifecycle: NodeLifecycleController | undefined;
  /** The last handled requests, oldest first. */
  readonly requests: readonly RequestRecord[];
  /** Number of open watch connections. */
  readonly openWatches: number;
  /** How many watches were closed because their client did not keep up (buffer overflow). */
  readonly slowWatchesClosed: number;
  /**
   * Streaming sessions served by WebSocket→SPDY translation (`pods/exec`, `pods/attach` with
   * `v5.channel.k8s.io`) or by the port-forward WebSocket tunnel, counted by
   * `"<translated|tunneled> <code>"` — what kube-apiserver counts in
   * `apiserver_stream_translator_requests_total` and `apiserver_stream_tunnel_requests_total`.
   */
  readonly podStreamCounts: ReadonlyMap<string, number>;
  /** The TLS material in use (undefined for plain HTTP). */
  readonly tls: ServerTls | undefined;
  /** The accepted bearer tokens. */
  readonly tokens: readonly BearerToken[];
  /** Issues and verifies service account tokens (what the token subresource and TokenReview use). */
  readonly serviceAccountTokens: ServiceAccountTokens;
  /**
   * Replaces the accepted bearer tokens; the next request is checked against the new set
   * (open watches stay open, like the real server). The kubeconfig is not rewritten.
   * An empty set turns token checks off (anonymous access unless `requestCert`).
   */
  setTokens(tokens: ReadonlyArray<string | BearerToken>): void;
  /**
   * Issues a client certificate signed by the generated CA (`tls: 'self-signed'` only);
   * the server maps `commonName` to the user name.
   */
  issueClientCertificate(commonName: string, organizations?: readonly string[]): Promise<CertificateAndKey>;
  /** Ends every watch, closes every connection and stops listening. */
  stop(): Promise<void>;
}

/** The TLS material of a running server. */
export interface ServerTls {
  /** PEM CA that signed the server certificate (undefined when `tls.ca` was not given). */
  readonly ca: string | undefined;
  /** The server certificate and key (PEM). */
  readonly server: CertificateAndKey;
  /** The client certificate written to the kubeconfig, when there is one. */
  readonly clientCertificate: CertificateAndKey | undefined;
  /** Whether client certificates are requested and verified. */
  readonly requestCert: boolean;
}
