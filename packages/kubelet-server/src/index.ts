/**
 * The kubelet's HTTP API (upstream `pkg/kubelet/server`): {@link KubeletServer} serves
 * `/healthz`, `/pods`, `/runningpods/`, `/metrics*`, `/stats/summary`,
 * `/containerLogs/{ns}/{pod}/{container}` and `/exec`, `/attach`, `/portForward` (proxied to
 * the runtime's CRI streaming server) on the authenticated HTTPS port, the read-only port and
 * the healthz port, with the kubelet's authentication (client certificates, `TokenReview`,
 * anonymous) and authorization (`SubjectAccessReview` on `nodes/<subresource>`, or AlwaysAllow).
 *
 * @example
 * ```ts
 * import { KubeletServer } from '@nodeagent/kubelet-server';
 *
 * const server = new KubeletServer({ nodeName: 'n1', host: podManager, runtime: cri.runtime, port: 0, healthzPort: 0 });
 * await server.start();
 * console.log(await (await fetch(`${server.healthzUrl}/healthz`)).text()); // "ok"
 * await server.stop();
 * ```
 *
 * @packageDocumentation
 */
export { type ApiPoster, ApiReviewError, type ApiServerConnection, createApiPoster } from './api-poster.js';
export {
  ANONYMOUS_USER,
  type AuthenticationResult,
  DEFAULT_TOKEN_WEBHOOK_CACHE_TTL_MS,
  RequestAuthenticator,
  type RequestAuthenticatorOptions,
  type TokenAuthenticator,
  TokenReviewAuthenticator,
  type TokenReviewAuthenticatorOptions,
  TokenReviewError,
} from './authn.js';
export {
  type AuthorizationDecision,
  type Authorizer,
  alwaysAllowAuthorizer,
  DEFAULT_AUTHORIZED_TTL_MS,
  DEFAULT_UNAUTHORIZED_TTL_MS,
  SubjectAccessReviewAuthorizer,
  type SubjectAccessReviewAuthorizerOptions,
} from './authz.js';
export {
  formatLogTimestamp,
  type ReadContainerLogDeps,
  type ReadContainerLogOptions,
  readContainerLog,
} from './container-log-reader.js';
export type { LogStreamInfo } from './container-logs-handler.js';
export {
  type HealthCheck,
  type HealthzResponse,
  logHealthz,
  pingHealthz,
  renderHealthz,
  serveHealthz,
} from './healthz.js';
export { HealthzServer, type HealthzServerOptions } from './healthz-server.js';
export { KubeletServer } from './kubelet-server.js';
export type {
  KubeletPod,
  KubeletPodContainer,
  KubeletPodContainerStatus,
  KubeletServerHost,
  KubeletServerOptions,
  KubeletServerRuntime,
  MetricsTextProvider,
} from './kubelet-server-options.js';
export { KubeletRequestError } from './pod-containers.js';
export {
  type PodLogOptions,
  PodLogOptionsDecodeError,
  parsePodLogOptions,
  rfc3339ToNs,
  validatePodLogOptions,
} from './pod-log-options.js';
export {
  apiVerbOf,
  isSubpath,
  type RequestAttributes,
  requestAttributes,
  type UserInfo,
} from './request-attributes.js';
export {
  loadOrGenerateServingCertificate,
  type ServingCertificate,
  ServingCertificateError,
  type ServingCertificateOptions,
} from './serving-cert.js';
export {
  dialStreamingServer,
  isUpgradeRequest,
  proxyUpgrade,
  type StreamingDialer,
  upgradeRequestHead,
} from './stream-proxy.js';
export { type StreamingKind, type StreamOptions, streamOptionsOf } from './streaming-handler.js';
