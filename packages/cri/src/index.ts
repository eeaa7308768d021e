/**
 * A typed client for the Kubernetes Container Runtime Interface (CRI v1, `runtime.v1`)
 * over @grpc/grpc-js: every RPC of `RuntimeService` and `ImageService` as a promise or an
 * async iterable, with per-call deadlines (2 min default, like the kubelet), AbortSignal,
 * 16 MiB messages, typed {@link CriError}s, fail-fast UNAVAILABLE and automatic
 * reconnection. int64 fields (nanosecond timestamps, byte sizes) are exact `bigint`s.
 * A fake runtime for tests lives in `@nodeagent/cri/testing`; the `nodeagent-crictl` CLI
 * ships in the same package.
 *
 * @example
 * ```ts
 * import { ContainerState, createCriClient } from '@nodeagent/cri';
 *
 * const cri = createCriClient('unix:///run/containerd/containerd.sock');
 * const { containers } = await cri.runtime.listContainers({
 *   filter: { state: { state: ContainerState.CONTAINER_RUNNING } },
 * });
 * for (const c of containers) console.log(c.id.slice(0, 13), c.metadata?.name);
 * cri.close();
 * ```
 *
 * @packageDocumentation
 */
export type { CallOptions, PartialMessage } from './call-options.js';
export {
  type CriClient,
  type CriClientOptions,
  createCriClient,
  type WaitForReadyOptions,
} from './client.js';
export {
  type CriLogEntry,
  type CriLogLine,
  InvalidCriLogLineError,
  type ParseCriLogOptions,
  parseCriLog,
  parseCriLogEntry,
} from './cri-log.js';
export {
  type CriEndpoint,
  DEFAULT_CRI_ENDPOINT,
  formatEndpoint,
  InvalidEndpointError,
  parseEndpoint,
} from './endpoint.js';
export {
  CriError,
  type CriErrorCode,
  type CriErrorOptions,
  grpcCodeName,
  hasCriCode,
  isCancelled,
  isDeadlineExceeded,
  isNotFound,
  isUnavailable,
  isUnimplemented,
} from './errors.js';
export type { ImageServiceApi, ImageServiceRpc, RuntimeServiceApi, RuntimeServiceRpc } from './gen/facade.js';
export * from './gen/protocol.js';
export type { CriClientMetricsOptions } from './metrics.js';
