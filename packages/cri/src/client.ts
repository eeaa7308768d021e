/**
 * The CRI client: one gRPC channel to a runtime socket with a promise / async-iterator
 * method per RPC of `runtime.v1.RuntimeService` and `runtime.v1.ImageService`.
 *
 * @module
 */
import { type ChannelOptions, Client, credentials } from '@grpc/grpc-js';
import { abortReason, type Logger, noopLogger } from '@nodeagent/core';
import type { CallOptions } from './call-options.js';
import { type CallContext, type MethodSpec, streamCall, unaryCall } from './calls.js';
import { criChannelOptions } from './channel-options.js';
import { type CriEndpoint, grpcTarget, parseEndpoint } from './endpoint.js';
import { CriError } from './errors.js';
import {
  type ImageServiceApi,
  imageServiceMethods,
  type RuntimeServiceApi,
  runtimeServiceMethods,
} from './gen/facade.js';
import { type ListFallback, streamWithListFallback } from './list-fallback.js';
import { type CriClientMetricsOptions, createCallRecorder } from './metrics.js';

/** Options of {@link createCriClient}. */
export interface CriClientOptions {
  /**
   * Default deadline of every unary call and list stream, ms (the kubelet's
   * `runtimeRequestTimeout`). Per call: `options.timeoutMs`.
   * @default 120_000
   */
  readonly timeoutMs?: number;
  /**
   * Largest message sent or received, bytes. Minimum: 4 MiB.
   * @default 16 * 1024 * 1024
   */
  readonly maxMessageBytes?: number;
  /**
   * Longest wait between reconnect attempts while the runtime is down, ms. Calls made
   * meanwhile fail at once with UNAVAILABLE; this bounds how long after the runtime is back
   * they keep failing.
   * @default 5_000
   */
  readonly reconnectBackoffMaxMs?: number;
  /**
   * First wait between reconnect attempts, ms.
   * @default 250
   */
  readonly reconnectBackoffInitialMs?: number;
  /** Call metrics on a registry you own; none when omitted. */
  readonly metrics?: CriClientMetricsOptions;
  /** Logger (debug-level notes such as a list-stream fallback). @default noopLogger */
  readonly logger?: Logger;
  /** Extra @grpc/grpc-js channel options, applied last. */
  readonly channelOptions?: ChannelOptions;
}

/** Options of {@link CriClient.waitForReady}. */
export interface WaitForReadyOptions {
  /** Give up after this many ms. @default the client's `timeoutMs` */
  readonly timeoutMs?: number;
  /** Stops waiting (rejects with a CANCELLED {@link CriError}). */
  readonly signal?: AbortSignal;
}

/** A connection to one CRI runtime. Create with {@link createCriClient}. */
export interface CriClient {
  /** The validated endpoint. */
  readonly endpoint: CriEndpoint;
  /** `runtime.v1.RuntimeService`. */
  readonly runtime: RuntimeServiceApi;
  /** `runtime.v1.ImageService`. */
  readonly image: ImageServiceApi;
  /**
   * Resolves once the channel is connected. Calls never wait for a connection (they fail
   * fast with UNAVAILABLE); use this where waiting is what you want, e.g. at start-up.
   * Rejects with a DEADLINE_EXCEEDED {@link CriError} after `timeoutMs`.
   */
  waitForReady(options?: WaitForReadyOptions): Promise<void>;
  /**
   * Closes the channel. Calls in flight fail with CANCELLED, streams end with a CANCELLED
   * error, later calls reject at once. Leaves nothing that keeps the process alive. Idempotent.
   */
  close(): void;
}

const MIB = 1024 * 1024;

const RUNTIME_LIST_FALLBACKS: Readonly<Record<string, ListFallback>> = {
  streamPodSandboxes: {
    list: runtimeServiceMethods.listPodSandbox,
    listField: 'items',
    streamField: 'podSandboxes',
  },
  streamContainers: {
    list: runtimeServiceMethods.listContainers,
    listField: 'containers',
    streamField: 'containers',
  },
  streamContainerStats: {
    list: runtimeServiceMethods.listContainerStats,
    listField: 'stats',
    streamField: 'containerStats',
  },
  streamPodSandboxStats: {
    list: runtimeServiceMethods.listPodSandboxStats,
    listField: 'stats',
    streamField: 'podSandboxStats',
  },
  streamPodSandboxMetrics: {
    list: runtimeServiceMethods.listPodSandboxMetrics,
    listField: 'podMetrics',
    streamField: 'podSandboxMetrics',
  },
};

const IMAGE_LIST_FALLBACKS: Readonly<Record<string, ListFallback>> = {
  streamImages: { list: imageServiceMethods.listImages, listField: 'images', streamField: 'images' },
};

type Method = (request?: unknown, options?: CallOptions) => unknown;

function buildApi(
  ctx: CallContext,
  table: Readonly<Record<string, MethodSpec>>,
  fallbacks: Readonly<Record<string, ListFallback>>,
): Record<string, Method> {
  const unimplemented = new Set<string>();
  const api: Record<string, Method> = {};
  for (const [name, spec] of Object.entries(table)) {
    const fallback = fallbacks[name];
    if (spec.kind === 'unary') api[name] = (request, options) => unaryCall(ctx, spec, request, options);
    else if (fallback !== undefined) {
      api[name] = (request, options) =>
        streamWithListFallback(ctx, spec, fallback, unimplemented, request, options);
    } else api[name] = (request, options) => streamCall(ctx, spec, request, options);
  }
  return api;
}

/**
 * Connects to a CRI runtime. Nothing is dialled until the first call (or
 * {@link CriClient.waitForReady}).
 *
 * @param endpoint `unix:///absolute/path` or `tcp://host:port`.
 * @throws {@link InvalidEndpointError} for any other endpoint.
 *
 * @example
 * ```ts
 * const cri = createCriClient('unix:///run/containerd/containerd.sock');
 * const { runtimeName, runtimeVersion } = await cri.runtime.version({ version: 'v1' });
 * const { containers } = await cri.runtime.listContainers({}, { timeoutMs: 10_000 });
 * cri.close();
 * ```
 */
export function createCriClient(endpoint: string | CriEndpoint, options: CriClientOptions = {}): CriClient {
  const parsed = typeof endpoint === 'string' ? parseEndpoint(endpoint) : endpoint;
  const maxMessageBytes = Math.max(options.maxMessageBytes ?? 16 * MIB, 4 * MIB);
  const channel = new Client(grpcTarget(parsed), credentials.createInsecure(), {
    ...criChannelOptions(parsed, {
      maxMessageBytes,
      reconnectBackoffInitialMs: options.reconnectBackoffInitialMs ?? 250,
      reconnectBackoffMaxMs: options.reconnectBackoffMaxMs ?? 5_000,
    }),
    ...options.channelOptions,
  });
  const log = (options.logger ?? noopLogger).child({ component: 'cri-client' });
  let closed = false;
  const ctx: CallContext = {
    channel,
    timeoutMs: options.timeoutMs ?? 120_000,
    recorder: options.metrics === undefined ? undefined : createCallRecorder(options.metrics),
    isClosed: () => closed,
    inFlight: new Set(),
  };
  const runtime = buildApi(
    ctx,
    runtimeServiceMethods,
    RUNTIME_LIST_FALLBACKS,
  ) as unknown as RuntimeServiceApi;
  const image = buildApi(ctx, imageServiceMethods, IMAGE_LIST_FALLBACKS) as unknown as ImageServiceApi;
  log.debug({ endpoint: typeof endpoint === 'string' ? endpoint : parsed }, 'CRI client created');

  return {
    endpoint: parsed,
    runtime,
    image,
    waitForReady(waitOptions = {}) {
      const rpc = 'waitForReady';
      if (closed) return Promise.reject(new CriError(rpc, 'CANCELLED', 'the CRI client is closed'));
      const signal = waitOptions.signal;
      if (signal?.aborted) {
        return Promise.reject(
          new CriError(rpc, 'CANCELLED', 'aborted by the caller', { cause: abortReason(signal) }),
        );
      }
      const timeoutMs = waitOptions.timeoutMs ?? ctx.timeoutMs;
      return new Promise<void>((resolve, reject) => {
        let settled = false;
        const onAbort = (): void => {
          if (settled) return;
          settled = true;
          reject(
            new CriError(rpc, 'CANCELLED', 'aborted by the caller', {
              cause: abortReason(signal as AbortSignal),
            }),
          );
        };
        signal?.addEventListener('abort', onAbort, { once: true });
        channel.waitForReady(Date.now() + timeoutMs, (error) => {
          signal?.removeEventListener('abort', onAbort);
          if (settled) return;
          settled = true;
          if (error === undefined || error === null) resolve();
          else
            reject(
              new CriError(rpc, closed ? 'CANCELLED' : 'DEADLINE_EXCEEDED', error.message, { cause: error }),
            );
        });
      });
    },
    close() {
      if (closed) return;
      closed = true;
      for (const call of [...ctx.inFlight]) call.cancel();
      channel.close();
    },
  };
}
