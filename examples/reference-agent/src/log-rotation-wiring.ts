/**
 * Container log rotation in the agent: the kubelet's container log manager
 * (`ContainerLogManager` of `@nodeagent/kuberuntime`) over the agent's CRI runtime, with the
 * kubelet's flags and defaults — `--container-log-max-size` (10Mi),
 * `--container-log-max-files` (5), `--container-log-monitor-interval` (10s),
 * `--container-log-max-workers` (1) — and the kubelet's start-up validation of them. A
 * running container's log past the size is renamed and reopened by the runtime (CRI
 * `ReopenContainerLog`); the kubelet API's `/containerLogs` (and `kubectl logs`) reads
 * across rotations.
 *
 * @module
 */
import { type Clock, type Logger, parseGoDuration, quantityValue } from '@nodeagent/core';
import type { CriClient } from '@nodeagent/cri';
import {
  ContainerLogManager,
  DEFAULT_CONTAINER_LOG_MAX_FILES,
  DEFAULT_CONTAINER_LOG_MAX_SIZE,
  DEFAULT_CONTAINER_LOG_MAX_WORKERS,
  DEFAULT_CONTAINER_LOG_MONITOR_INTERVAL_MS,
} from '@nodeagent/kuberuntime';

/** The log rotation settings from the command line (kubelet configuration names). */
export interface LogRotationSettings {
  /** `--container-log-max-size`: a quantity (`10Mi`). */
  readonly containerLogMaxSize: string;
  /** `--container-log-max-files`. */
  readonly containerLogMaxFiles: number;
  /** `--container-log-monitor-interval`, ms. */
  readonly containerLogMonitorIntervalMs: number;
  /** `--container-log-max-workers`. */
  readonly containerLogMaxWorkers: number;
}

/** The kubelet's defaults. */
export const DEFAULT_LOG_ROTATION: LogRotationSettings = {
  containerLogMaxSize: DEFAULT_CONTAINER_LOG_MAX_SIZE,
  containerLogMaxFiles: DEFAULT_CONTAINER_LOG_MAX_FILES,
  containerLogMonitorIntervalMs: DEFAULT_CONTAINER_LOG_MONITOR_INTERVAL_MS,
  containerLogMaxWorkers: DEFAULT_CONTAINER_LOG_MAX_WORKERS,
};

/** `node:util` parseArgs specs of the flags. */
export const LOG_ROTATION_FLAG_OPTIONS = {
  'container-log-max-size': { type: 'string' },
  'container-log-max-files': { type: 'string' },
  'container-log-monitor-interval': { type: 'string' },
  'container-log-max-workers': { type: 'string' },
} as const;

/** Usage lines of the flags. */
export const LOG_ROTATION_USAGE = `  --container-log-max-size QUANTITY     rotate a container's log past this size (default 10Mi)
  --container-log-max-files N           log files kept per container, the live one included (default 5)
  --container-log-monitor-interval DURATION   how often logs are checked, >= 3s (default 10s)
  --container-log-max-workers N         containers rotated concurrently (default 1)
`;

/**
 * Reads the flags from `parseArgs` values, validated as the kubelet validates its
 * configuration (`invalid configuration: containerLogMaxFiles (--container-log-max-files) 1
 * must be greater than 1`, ...).
 * @throws Error whose message names the flag
 */
export function parseLogRotationFlags(values: Readonly<Record<string, unknown>>): LogRotationSettings {
  const one = (name: string): string | undefined => values[name] as string | undefined;
  const int = (name: string, fallback: number): number => {
    const t = one(name);
    if (t === undefined) return fallback;
    const n = Number(t);
    if (t.trim() === '' || !Number.isInteger(n)) {
      throw new Error(`--${name}: expected an integer, got "${t}"`);
    }
    return n;
  };
  const size = one('container-log-max-size') ?? DEFAULT_CONTAINER_LOG_MAX_SIZE;
  let bytes: bigint;
  try {
    bytes = quantityValue(size);
  } catch (err) {
    throw new Error(`--container-log-max-size: ${(err as Error).message}`);
  }
  if (bytes < 0n) {
    throw new Error(
      `invalid configuration: containerLogMaxSize (--container-log-max-size) ${size} must be a positive quantity`,
    );
  }
  const files = int('container-log-max-files', DEFAULT_CONTAINER_LOG_MAX_FILES);
  if (files <= 1) {
    throw new Error(
      `invalid configuration: containerLogMaxFiles (--container-log-max-files) ${files} must be greater than 1`,
    );
  }
  const workers = int('container-log-max-workers', DEFAULT_CONTAINER_LOG_MAX_WORKERS);
  if (workers < 1) {
    throw new Error(
      `invalid configuration: containerLogMaxWorkers (--container-log-max-workers) ${workers} must be greater than or equal to 1`,
    );
  }
  const intervalText = one('container-log-monitor-interval');
  let interval = DEFAULT_CONTAINER_LOG_MONITOR_INTERVAL_MS;
  if (intervalText !== undefined) {
    try {
      interval = parseGoDuration(intervalText);
    } catch (err) {
      throw new Error(`--container-log-monitor-interval: ${(err as Error).message}`);
    }
    if (interval < 3000) {
      throw new Error(
        `invalid configuration: containerLogMonitorInterval (--container-log-monitor-interval) ${intervalText} must be a positive time duration greater than or equal to 3s`,
      );
    }
  }
  return {
    containerLogMaxSize: size,
    containerLogMaxFiles: files,
    containerLogMonitorIntervalMs: interval,
    containerLogMaxWorkers: workers,
  };
}

/** What the log manager needs from the agent. */
export interface LogRotationDeps {
  /** The settings; the kubelet's defaults when undefined. */
  readonly settings: LogRotationSettings | undefined;
  readonly cri: CriClient;
  readonly clock: Clock;
  readonly logger: Logger;
}

/** The agent's container log manager, not started. */
export function createLogRotation(deps: LogRotationDeps): ContainerLogManager {
  const s = deps.settings ?? DEFAULT_LOG_ROTATION;
  return new ContainerLogManager({
    runtime: deps.cri.runtime,
    containerLogMaxSize: s.containerLogMaxSize,
    containerLogMaxFiles: s.containerLogMaxFiles,
    containerLogMonitorIntervalMs: s.containerLogMonitorIntervalMs,
    containerLogMaxWorkers: s.containerLogMaxWorkers,
    clock: deps.clock,
    logger: deps.logger,
  });
}
