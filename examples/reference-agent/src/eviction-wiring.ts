/**
 * The agent's node-pressure pieces: the eviction manager (`@nodeagent/eviction`) and the
 * container and image garbage collectors (`@nodeagent/kuberuntime`), with the kubelet's flags.
 * GC always runs (container GC every minute, image GC every 5 minutes). Eviction needs a
 * Summary source (`@nodeagent/stats`, see stats-wiring.ts); without one (`summaryProvider`
 * unset) it stays off, so no pressure is reported and no pod is evicted.
 *
 * @module
 */
import type { V1Pod, V1PodStatus } from '@kubernetes/client-node';
import type { PodAdmitHandler } from '@nodeagent/admission';
import {
  type Clock,
  definedFields,
  type Logger,
  type MetricsOptions,
  parseGoDuration,
  setPodCondition,
} from '@nodeagent/core';
import type { CriClient } from '@nodeagent/cri';
import {
  DEFAULT_EVICTION_HARD,
  EvictionManager,
  type EvictionStatus,
  parseLangleSeparatedMap,
  parseMapStringString,
  parseThresholdConfig,
  type ThresholdConfig,
} from '@nodeagent/eviction';
import {
  ContainerGC,
  type ContainerGCPolicy,
  ImageGCManager,
  type ImageGCPolicy,
  type PodStateProvider,
} from '@nodeagent/kuberuntime';
import type { SummaryProvider } from '@nodeagent/stats';
import type { NodePressureProvider } from '@nodeagent/status';

/** The eviction and GC settings from the command line (kubelet flag names). */
export interface EvictionSettings {
  /** `--eviction-hard`, `--eviction-soft`, `--eviction-soft-grace-period`, `--eviction-minimum-reclaim`. */
  readonly thresholds: ThresholdConfig;
  /** `--eviction-pressure-transition-period`, ms. */
  readonly pressureTransitionPeriodMs?: number;
  /** `--eviction-max-pod-grace-period`, s. */
  readonly maxPodGracePeriodSeconds?: number;
  /** `--minimum-container-ttl-duration`, `--maximum-dead-containers-per-container`, `--maximum-dead-containers`. */
  readonly containerGC: ContainerGCPolicy;
  /** `--image-gc-high-threshold`, `--image-gc-low-threshold`, `--minimum-image-ttl-duration`. */
  readonly imageGC: ImageGCPolicy;
  /** Eviction loop period, ms: the kubelet's fixed 10 s (no flag); shorter in tests. @default 10000 */
  readonly monitoringIntervalMs?: number;
  /** Container GC period, ms: the kubelet's fixed 1 min (no flag); shorter in tests. @default 60000 */
  readonly containerGCPeriodMs?: number;
}

/** `node:util` parseArgs specs of the flags (repeatable map flags accumulate, as the kubelet's). */
export const EVICTION_FLAG_OPTIONS = {
  'eviction-hard': { type: 'string', multiple: true },
  'eviction-soft': { type: 'string', multiple: true },
  'eviction-soft-grace-period': { type: 'string', multiple: true },
  'eviction-minimum-reclaim': { type: 'string', multiple: true },
  'eviction-pressure-transition-period': { type: 'string' },
  'eviction-max-pod-grace-period': { type: 'string' },
  'image-gc-high-threshold': { type: 'string' },
  'image-gc-low-threshold': { type: 'string' },
  'minimum-image-ttl-duration': { type: 'string' },
  'maximum-dead-containers-per-container': { type: 'string' },
  'maximum-dead-containers': { type: 'string' },
  'minimum-container-ttl-duration': { type: 'string' },
} as const;

/** `DEFAULT_EVICTION_HARD` as `signal<value` pairs, comma-separated, wrapped under the flag's text. */
function defaultEvictionHardLines(): string {
  const indent = ' '.repeat(33);
  const lines: string[] = [];
  let line = '';
  for (const [signal, value] of Object.entries(DEFAULT_EVICTION_HARD)) {
    const pair = `${signal}<${value}`;
    if (line !== '' && line.length + 1 + pair.length > 72) {
      lines.push(`${indent}${line},`);
      line = pair;
    } else line = line === '' ? pair : `${line},${pair}`;
  }
  lines.push(`${indent}${line}`);
  return lines.join('\n');
}

/** Usage lines of the flags. */
export const EVICTION_USAGE = `  --eviction-hard LIST           hard thresholds (signal<value,...); default the kubelet's:
${defaultEvictionHardLines()}
  --eviction-soft LIST           soft thresholds (signal<value), each with --eviction-soft-grace-period
  --eviction-soft-grace-period LIST   signal=duration pairs, e.g. memory.available=1m30s
  --eviction-minimum-reclaim LIST     signal=quantity pairs, e.g. memory.available=500Mi
  --eviction-pressure-transition-period DURATION   (default 5m0s)
  --eviction-max-pod-grace-period SECONDS          for soft evictions (default 0)
  --image-gc-high-threshold PERCENT     (default 85)
  --image-gc-low-threshold PERCENT      (default 80)
  --minimum-image-ttl-duration DURATION (default 2m0s)
  --maximum-dead-containers-per-container N   (default 1)
  --maximum-dead-containers N           (default -1: unlimited)
  --minimum-container-ttl-duration DURATION   (default 0s)
`;

/**
 * Reads the flags from `parseArgs` values. The threshold settings are validated as the
 * kubelet does at start-up.
 * @throws Error whose message starts with the flag's name
 */
export function parseEvictionFlags(values: Readonly<Record<string, unknown>>): EvictionSettings {
  const list = (name: string): string[] | undefined => values[name] as string[] | undefined;
  const one = (name: string): string | undefined => values[name] as string | undefined;
  const flag = <T>(name: string, fn: (text: string) => T): T => {
    try {
      return fn(one(name) as string);
    } catch (err) {
      throw new Error(`--${name}: ${(err as Error).message}`);
    }
  };
  const map = (
    name: string,
    parse: (v: string) => Record<string, string>,
  ): Record<string, string> | undefined => {
    const items = list(name);
    if (items === undefined) return undefined;
    const out: Record<string, string> = {};
    for (const v of items) {
      try {
        Object.assign(out, parse(v));
      } catch (err) {
        throw new Error(`--${name}: ${(err as Error).message}`);
      }
    }
    return out;
  };
  const int = (name: string, min: number, max = Number.MAX_SAFE_INTEGER): number | undefined => {
    if (one(name) === undefined) return undefined;
    return flag(name, (t) => {
      const n = Number(t);
      if (t.trim() === '' || !Number.isInteger(n) || n < min || n > max) {
        throw new Error(
          `expected an integer in [${min}, ${max === Number.MAX_SAFE_INTEGER ? '∞' : max}], got "${t}"`,
        );
      }
      return n;
    });
  };
  const duration = (name: string): number | undefined =>
    one(name) === undefined ? undefined : flag(name, parseGoDuration);
  const thresholds: ThresholdConfig = Object.fromEntries(
    Object.entries({
      evictionHard: map('eviction-hard', parseLangleSeparatedMap),
      evictionSoft: map('eviction-soft', parseLangleSeparatedMap),
      evictionSoftGracePeriod: map('eviction-soft-grace-period', parseMapStringString),
      evictionMinimumReclaim: map('eviction-minimum-reclaim', parseMapStringString),
    }).filter(([, v]) => v !== undefined),
  );
  try {
    parseThresholdConfig(thresholds);
  } catch (err) {
    throw new Error(`--eviction-*: ${(err as Error).message}`);
  }
  return {
    thresholds,
    ...definedFields({
      pressureTransitionPeriodMs: duration('eviction-pressure-transition-period'),
      maxPodGracePeriodSeconds: int('eviction-max-pod-grace-period', 0),
    }),
    containerGC: definedFields({
      minAgeMs: duration('minimum-container-ttl-duration'),
      maxPerPodContainer: int('maximum-dead-containers-per-container', Number.MIN_SAFE_INTEGER),
      maxContainers: int('maximum-dead-containers', Number.MIN_SAFE_INTEGER),
    }),
    imageGC: definedFields({
      highThresholdPercent: int('image-gc-high-threshold', 0, 100),
      lowThresholdPercent: int('image-gc-low-threshold', 0, 100),
      minAgeMs: duration('minimum-image-ttl-duration'),
    }),
  };
}

/** What the eviction and GC pieces need from the agent. */
export interface EvictionWiringDeps {
  readonly settings: EvictionSettings | undefined;
  /** The Summary source; eviction is off without one. */
  readonly summaryProvider: SummaryProvider | undefined;
  readonly cri: CriClient;
  readonly podLogsRoot: string;
  readonly nodeName: string;
  /** The pods that may be evicted (admitted and not finished). */
  readonly activePods: () => readonly V1Pod[];
  /** Kills a pod and waits (pod workers' `killPodAndWait`). */
  readonly killPodAndWait: (
    pod: V1Pod,
    graceSeconds: number,
    status: (s: V1PodStatus) => void,
  ) => Promise<void>;
  /** Which pods are gone (the pod workers). */
  readonly podState: PodStateProvider;
  /** Whether every pod source has synced. */
  readonly allSourcesReady: () => boolean;
  /** Records a node event (ContainerGCFailed, ImageGCFailed, FreeDiskSpaceFailed, EvictionThresholdMet). */
  readonly recordNodeEvent: (type: 'Normal' | 'Warning', reason: string, message: string) => void;
  /** Records a pod event (Evicted). */
  readonly recordPodEvent: (
    pod: V1Pod,
    type: 'Normal' | 'Warning',
    reason: string,
    message: string,
    annotations?: Readonly<Record<string, string>>,
  ) => void;
  /** The agent's `/metrics` registry (metrics-wiring.ts). @default none */
  readonly metrics?: MetricsOptions | undefined;
  readonly clock: Clock;
  readonly logger: Logger;
}

/** The pieces, not started. */
export interface EvictionParts {
  readonly containerGC: ContainerGC;
  readonly imageGC: ImageGCManager;
  /** Undefined when eviction is off. */
  readonly manager: EvictionManager | undefined;
  /** The pressure for the node conditions; undefined when eviction is off. */
  readonly pressure: NodePressureProvider | undefined;
  /** The admission handler under pressure; undefined when eviction is off. */
  readonly admitHandler: PodAdmitHandler | undefined;
  start(signal?: AbortSignal): Promise<void>;
  stop(): Promise<void>;
}

/** Applies the eviction status to the pod's final status (upstream `UpdatePodCondition` for the condition). */
export function applyEvictionStatus(status: V1PodStatus, e: EvictionStatus): void {
  status.phase = e.phase;
  status.reason = e.reason;
  status.message = e.message;
  status.conditions = [...(status.conditions ?? [])];
  setPodCondition(status.conditions, e.condition);
}

/** Builds container GC, image GC and (with a summary source) the eviction manager. */
export function createEvictionParts(d: EvictionWiringDeps): EvictionParts {
  const settings = d.settings ?? { thresholds: {}, containerGC: {}, imageGC: {} };
  const containerGC = new ContainerGC({
    runtime: d.cri.runtime,
    podState: d.podState,
    allSourcesReady: d.allSourcesReady,
    podLogsRoot: d.podLogsRoot,
    onError: (e) => d.recordNodeEvent('Warning', 'ContainerGCFailed', e.message),
    clock: d.clock,
    logger: d.logger,
    ...settings.containerGC,
    ...(settings.containerGCPeriodMs === undefined ? {} : { periodMs: settings.containerGCPeriodMs }),
  });
  const summary = d.summaryProvider;
  const imageGC = new ImageGCManager({
    cri: d.cri,
    onError: (e, previousFailed) => {
      if (previousFailed) d.recordNodeEvent('Warning', 'ImageGCFailed', e.message);
    },
    onWarning: (reason, message) => d.recordNodeEvent('Warning', reason, message),
    clock: d.clock,
    logger: d.logger,
    ...definedFields({ metrics: d.metrics }),
    ...settings.imageGC,
    ...(summary === undefined
      ? {}
      : {
          imageFsStats: {
            async imageFsStats() {
              const fs = (await summary.get(false, { pods: false })).node.runtime?.imageFs;
              if (fs?.capacityBytes === undefined || fs.availableBytes === undefined) return undefined;
              return { capacityBytes: fs.capacityBytes, availableBytes: fs.availableBytes };
            },
          },
        }),
  });
  const manager =
    summary === undefined
      ? undefined
      : new EvictionManager({
          thresholds: parseThresholdConfig(settings.thresholds),
          summaryProvider: summary,
          activePods: d.activePods,
          podKiller: {
            killPod: (pod, grace, status) =>
              d.killPodAndWait(pod, grace, (s) => applyEvictionStatus(s, status)),
          },
          containerGC,
          imageGC,
          nodeName: d.nodeName,
          recorder: {
            event: (target, type, reason, message, annotations) => {
              if (typeof target === 'object' && 'metadata' in target) {
                d.recordPodEvent(target as V1Pod, type, reason, message, annotations);
              } else d.recordNodeEvent(type, reason, message);
            },
          },
          clock: d.clock,
          logger: d.logger,
          ...definedFields({ metrics: d.metrics }),
          ...(settings.pressureTransitionPeriodMs === undefined
            ? {}
            : { pressureTransitionPeriodMs: settings.pressureTransitionPeriodMs }),
          ...(settings.monitoringIntervalMs === undefined
            ? {}
            : { monitoringIntervalMs: settings.monitoringIntervalMs }),
          ...(settings.maxPodGracePeriodSeconds === undefined
            ? {}
            : { maxPodGracePeriodSeconds: settings.maxPodGracePeriodSeconds }),
        });
  return {
    containerGC,
    imageGC,
    manager,
    pressure: manager,
    admitHandler: manager,
    async start(signal) {
      await containerGC.start(signal);
      await imageGC.start(signal);
      await manager?.start(signal);
    },
    async stop() {
      await manager?.stop();
      await imageGC.stop();
      await containerGC.stop();
    },
  };
}
