/**
 * The foundation every `@nodeagent` package builds on: an injected {@link Logger}, an
 * injected {@link Clock} (with `FakeClock` in `@nodeagent/core/testing`), a jittered
 * exponential {@link Backoff} and a per-key {@link KeyedBackoff}, a client-go grade
 * {@link WorkQueue} with rate limiters, and the shapes every package shares: the
 * {@link Lifecycle} (`start(signal?)` / `stop()`), {@link MetricsOptions}, the async
 * {@link Channel}, {@link InvalidOptionsError}, IP/CIDR parsing ({@link parseIP}, the one parser every
 * package uses), {@link joinHostPort} and Go
 * durations ({@link formatGoDuration}, {@link parseGoDuration}), and the pod conditions the kubelet
 * owns ({@link podConditionByKubelet}, {@link setPodCondition}).
 *
 * @example
 * ```ts
 * import { Backoff, consoleLogger, realClock } from '@nodeagent/core';
 *
 * const log = consoleLogger().child({ component: 'my-agent' });
 * const backoff = new Backoff({ initialMs: 800, capMs: 30_000, clock: realClock });
 * log.info({ delayMs: backoff.next() }, 'retrying');
 * ```
 *
 * @packageDocumentation
 */
export { Backoff, type BackoffOptions } from './backoff.js';
export { Channel, ChannelClosedError, type ChannelOptions } from './channel.js';
export { abortReason, type Clock, realClock, type Timer } from './clock.js';
export { formatGoDuration, InvalidDurationError, parseGoDuration } from './go-duration.js';
export { joinHostPort } from './host-port.js';
export {
  type CIDRValue,
  cidrContains,
  cidrValueContains,
  formatIPValue,
  InvalidIPError,
  type IPFamily,
  type IPValue,
  type IPValueOptions,
  ipFamilyOf,
  isLoopbackIP,
  mustParseCIDR,
  mustParseIP,
  type ParsedCIDR,
  type ParsedIP,
  parseCIDR,
  parseCIDROrHostValue,
  parseCIDRValue,
  parseIP,
  parseIPValue,
} from './ip.js';
export { KeyedBackoff, type KeyedBackoffOptions } from './keyed-backoff.js';
export { AlreadyStartedError, type Lifecycle, raceAbort, StartOnce } from './lifecycle.js';
export {
  type ConsoleLoggerOptions,
  consoleLogger,
  type LogFn,
  type Logger,
  type LogLevel,
  noopLogger,
} from './logger.js';
export {
  type CounterLike,
  createMetricFactory,
  type GaugeLike,
  type HistogramLike,
  type MetricConfig,
  type MetricFactory,
  type MetricLabels,
  MetricRegistrationError,
  type MetricsOptions,
  type MetricsRegistry,
  type PromClientModule,
} from './metrics.js';
export { type Defined, definedFields, type UndefinedKeys } from './optional.js';
export { InvalidOptionsError } from './options-error.js';
export {
  POD_CONDITIONS_BY_KUBELET,
  podConditionByKubelet,
  podConditionSharedByKubelet,
  setPodCondition,
} from './pod-conditions.js';
export { createPromMetricsProvider } from './prom-work-queue-metrics.js';
export { InvalidQuantityError, isValidQuantity, milliValue, quantityValue } from './quantity.js';
export {
  BucketRateLimiter,
  defaultControllerRateLimiter,
  ItemExponentialFailureRateLimiter,
  ItemFastSlowRateLimiter,
  MaxOfRateLimiter,
  type RateLimiter,
  WithMaxWaitRateLimiter,
} from './rate-limiters.js';
export {
  CommandError,
  commandArgv,
  type RunCommandOptions,
  type RunCommandResult,
  runCommand,
} from './run-command.js';
export {
  decodeSpdyHeaderBlock,
  encodeSpdyHeaderBlock,
  SPDY_FLAG_FIN,
  SPDY_HEADER_DICTIONARY,
  SpdyConnection,
  type SpdyConnectionOptions,
  SpdyFrameReader,
  SpdyFrameType,
  SpdyHeaderCompressor,
  SpdyHeaderDecompressor,
  type SpdyHeaders,
  SpdyProtocolError,
  type SpdyRawFrame,
  SpdyRstStatus,
  SpdyStream,
  spdyControlFrame,
  spdyDataFrame,
} from './spdy.js';
export {
  RateLimiterWaitError,
  type RequestRateLimiter,
  TokenBucketRateLimiter,
} from './token-bucket-rate-limiter.js';
export {
  WorkQueue,
  type WorkQueueItem,
  type WorkQueueKey,
  type WorkQueueKeyItem,
  type WorkQueueOptions,
  type WorkQueueShutdownItem,
} from './work-queue.js';
export {
  type CounterMetric,
  type GaugeMetric,
  type HistogramMetric,
  noopWorkQueueMetricsProvider,
  type WorkQueueMetricsProvider,
} from './work-queue-metrics.js';
