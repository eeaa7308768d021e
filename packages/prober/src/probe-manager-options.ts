/**
 * Options of {@link ProbeManager}.
 *
 * @module
 */
import type { Clock, Logger, MetricsOptions } from '@nodeagent/core';
import type { CommandRunner } from './command-runner.js';
import type { ProbeEventRecorder } from './event-recorder.js';
import type { PodStatusProvider } from './pod-status-provider.js';

/** The Kubernetes minor the default `User-Agent` names: the latest release line, v1.36. */
export const DEFAULT_USER_AGENT = 'kube-probe/1.36';

/** Options of {@link ProbeManager}. */
export interface ProbeManagerOptions {
  /**
   * Where workers read pod IPs, container IDs and states (upstream: the status manager).
   * Required.
   */
  readonly statusProvider: PodStatusProvider;
  /**
   * Runs exec probes in containers; {@link criCommandRunner} adapts a CRI client. Without it an
   * exec probe is a probe error (`exec probes need a commandRunner`) for that container only.
   * @default none
   */
  readonly commandRunner?: CommandRunner;
  /** Receives the kubelet's probe events (`Warning Unhealthy ...`). @default none (no events) */
  readonly recorder?: ProbeEventRecorder;
  /**
   * `User-Agent` of HTTP and gRPC probes unless the probe sets one:
   * `kube-probe/<major>.<minor>` of the Kubernetes release the agent follows.
   * @default 'kube-probe/1.36'
   */
  readonly userAgent?: string;
  /**
   * Added to an exec probe's timeout before the prober stops waiting for a runner that does not
   * answer (the kubelet's ExecSync deadline is the probe timeout plus its runtime request
   * timeout). Minimum: 0.
   * @default 120_000 (the kubelet's `runtimeRequestTimeout`, 2 minutes)
   */
  readonly runtimeRequestTimeoutMs?: number;
  /** Time and timers. @default realClock */
  readonly clock?: Clock;
  /** Logger. @default noopLogger */
  readonly logger?: Logger;
  /** Registry for `prober_probe_total` and `prober_probe_duration_seconds`. @default none (no metrics) */
  readonly metrics?: MetricsOptions;
  /**
   * Source of the first-probe jitter (a number in [0, 1)), applied only to workers created less
   * than one period after `start` (the agent restarted: spread the probes out).
   * @default Math.random
   */
  readonly random?: () => number;
}
