/**
 * The foundation every `@nodeagent` package builds on: an injected {@link Logger}, an
 * injected {@link Clock} (with `FakeClock` in `@nodeagent/core/testing`), a jittered
 * exponential {@link Backoff}, and a client-go grade {@link WorkQueue} with rate limiters
 * and metrics.
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
export { abortReason, type Clock, realClock, type Timer } from './clock.js';
export {
  type ConsoleLoggerOptions,
  consoleLogger,
  type LogFn,
  type Logger,
  type LogLevel,
  noopLogger,
} from './logger.js';
export {
  createPromMetricsProvider,
  MetricRegistrationError,
  type PromClientModule,
  type PromMetricsProviderOptions,
  type PromRegistry,
} from './prom-work-queue-metrics.js';
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
  InvalidWorkQueueOptionsError,
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
