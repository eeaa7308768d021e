/**
 * The kubelet's knobs of rates, capacity and runtime calls, as its flags (and `--config`
 * fields): `--kube-api-qps`/`--kube-api-burst` (the API client's token bucket, shared by the
 * informers and every write but events; `restClientRateLimiter` of `@nodeagent/informer`),
 * `--event-qps`/`--event-burst` (`@nodeagent/events`), `--node-status-max-images`,
 * `--pods-per-core` and `--register-node` (`@nodeagent/status`), `--pod-max-pids`
 * (`@nodeagent/cgroups`), `--runtime-request-timeout` (the CRI client, kuberuntime, prober),
 * `--serialize-image-pulls` with the config-only `maxParallelImagePulls` (kuberuntime's image
 * puller) and `--enable-server` (`@nodeagent/kubelet-server`). Defaults and validation texts
 * are the kubelet's (`pkg/kubelet/apis/config/validation/validation.go`).
 *
 * @module
 */
import { parseGoDuration } from '@nodeagent/core';

/** The parsed knobs, each with the kubelet's default when not given. */
export interface NodeTuningSettings {
  /**
   * `--kube-api-qps` (`kubeAPIQPS`): requests per second to the API server, for the informers'
   * lists and every write but events (those follow `eventQps`). 0 means client-go's default
   * (5), as in the kubelet. @default 50
   */
  readonly kubeApiQps: number;
  /** `--kube-api-burst` (`kubeAPIBurst`): requests at once before `kubeApiQps` applies; 0: client-go's 10. @default 100 */
  readonly kubeApiBurst: number;
  /** `--event-qps` (`eventRecordQPS`): event writes per second; 0 means the default. @default 50 */
  readonly eventQps: number;
  /** `--event-burst` (`eventBurst`): event writes at once before the QPS applies; 0 means the default. @default 100 */
  readonly eventBurst: number;
  /** `--node-status-max-images` (`nodeStatusMaxImages`): images in `status.images`; -1: all. @default 50 */
  readonly nodeStatusMaxImages: number;
  /** `--pods-per-core` (`podsPerCore`): capacity pods = min(maxPods, this × cores); 0: no such cap. @default 0 */
  readonly podsPerCore: number;
  /** `--register-node` (`registerNode`): create the Node at start. @default true */
  readonly registerNode: boolean;
  /** `--pod-max-pids` (`podPidsLimit`): `pids.max` of each pod cgroup; -1: none. @default -1 */
  readonly podMaxPids: number;
  /** `--runtime-request-timeout` (`runtimeRequestTimeout`), ms: deadline of CRI calls but pulls. @default 120_000 */
  readonly runtimeRequestTimeoutMs: number;
  /** `--serialize-image-pulls` (`serializeImagePulls`): one image pull at a time. @default true */
  readonly serializeImagePulls: boolean;
  /** `maxParallelImagePulls` (config file only, as in the kubelet): pulls at once when not serialized. @default unlimited */
  readonly maxParallelImagePulls: number | undefined;
  /** `--enable-server` (`enableServer`): the kubelet API on `--port`. @default true */
  readonly enableServer: boolean;
}

/** The kubelet's defaults. */
export const DEFAULT_NODE_TUNING: NodeTuningSettings = {
  kubeApiQps: 50,
  kubeApiBurst: 100,
  eventQps: 50,
  eventBurst: 100,
  nodeStatusMaxImages: 50,
  podsPerCore: 0,
  registerNode: true,
  podMaxPids: -1,
  runtimeRequestTimeoutMs: 120_000,
  serializeImagePulls: true,
  maxParallelImagePulls: undefined,
  enableServer: true,
};

/** `node:util` parseArgs specs of the flags. */
export const NODE_TUNING_FLAG_OPTIONS = {
  'kube-api-qps': { type: 'string' },
  'kube-api-burst': { type: 'string' },
  'event-qps': { type: 'string' },
  'event-burst': { type: 'string' },
  'node-status-max-images': { type: 'string' },
  'pods-per-core': { type: 'string' },
  'register-node': { type: 'string' },
  'pod-max-pids': { type: 'string' },
  'runtime-request-timeout': { type: 'string' },
  'serialize-image-pulls': { type: 'string' },
  'enable-server': { type: 'string' },
} as const;

/** Go bool flags of this group that may be given bare. */
export const NODE_TUNING_BOOL_FLAGS: readonly string[] = [
  '--register-node',
  '--serialize-image-pulls',
  '--enable-server',
];

/** Usage lines of the flags. */
export const NODE_TUNING_USAGE = `  --kube-api-qps N               QPS to use while talking with the API server (default 50; 0: client-go's 5);
                                 events follow --event-qps instead
  --kube-api-burst N             burst to use while talking with the API server (default 100; 0: client-go's 10)
  --event-qps N                  event writes per second to the API server (default 50; 0: the default)
  --event-burst N                event writes at once before --event-qps applies (default 100; 0: the default)
  --node-status-max-images N     images reported in the node status (default 50; -1: all)
  --pods-per-core N              pods per core, capacity pods = min(--max-pods, N x cores) (default 0: off)
  --register-node[=BOOL]         create the Node at start; false: the Node must exist (default true)
  --pod-max-pids N               pids.max of each pod cgroup, real runtimes (default -1: none)
  --runtime-request-timeout DURATION
                                 deadline of CRI calls other than image pulls (default 2m0s)
  --serialize-image-pulls[=BOOL] pull one image at a time (default true; false: up to the config
                                 file's maxParallelImagePulls, else no limit)
  --enable-server[=BOOL]         serve the kubelet API on --port (default true; the read-only
                                 and healthz ports do not depend on it)
`;

function integer(flag: string, field: string, text: string | undefined, min: number, dflt: number): number {
  if (text === undefined) return dflt;
  const n = Number(text);
  if (text.trim() === '' || !Number.isInteger(n)) {
    throw new Error(`--${flag}: expected an integer, got "${text}"`);
  }
  if (n < min) {
    throw new Error(
      min === 0
        ? `invalid configuration: ${field} (--${flag}) ${n} must not be a negative number`
        : `invalid configuration: ${field} (--${flag}) ${n} must be ${min} or greater`,
    );
  }
  return n;
}

function bool(flag: string, text: string | undefined, dflt: boolean): boolean {
  if (text === undefined) return dflt;
  if (text === 'true') return true;
  if (text === 'false') return false;
  throw new Error(`--${flag}: expected true or false, got "${text}"`);
}

/**
 * Reads the flags from `parseArgs` values, with `maxParallelImagePulls` from the config file,
 * and validates them together as the kubelet validates its configuration.
 * @throws Error naming the flag or field, in the kubelet's words
 */
export function parseNodeTuningFlags(
  values: Readonly<Record<string, unknown>>,
  maxParallelImagePulls: number | undefined,
): NodeTuningSettings {
  const s = (k: string) => (typeof values[k] === 'string' ? (values[k] as string) : undefined);
  const d = DEFAULT_NODE_TUNING;
  // 0 means the default (the kubelet's help: "If 0 will use default QPS (50)").
  // 0 is passed on: client-go's RESTClientFor turns it into its defaults (5 / 10), as in the kubelet.
  const kubeApiQps = integer('kube-api-qps', 'kubeAPIQPS', s('kube-api-qps'), 0, d.kubeApiQps);
  const kubeApiBurst = integer('kube-api-burst', 'kubeAPIBurst', s('kube-api-burst'), 0, d.kubeApiBurst);
  const eventQps = integer('event-qps', 'eventRecordQPS', s('event-qps'), 0, d.eventQps) || d.eventQps;
  const eventBurst = integer('event-burst', 'eventBurst', s('event-burst'), 0, d.eventBurst) || d.eventBurst;
  const timeoutText = s('runtime-request-timeout');
  let runtimeRequestTimeoutMs = d.runtimeRequestTimeoutMs;
  if (timeoutText !== undefined) {
    try {
      runtimeRequestTimeoutMs = parseGoDuration(timeoutText);
    } catch (err) {
      throw new Error(`--runtime-request-timeout: ${(err as Error).message}`);
    }
    if (!(runtimeRequestTimeoutMs > 0)) {
      throw new Error(`--runtime-request-timeout: expected a positive duration, got "${timeoutText}"`);
    }
  }
  const serializeImagePulls = bool(
    'serialize-image-pulls',
    s('serialize-image-pulls'),
    d.serializeImagePulls,
  );
  if (maxParallelImagePulls !== undefined && maxParallelImagePulls < 1) {
    throw new Error(
      `invalid configuration: maxParallelImagePulls ${maxParallelImagePulls} must be a positive number`,
    );
  }
  if (serializeImagePulls && maxParallelImagePulls !== undefined && maxParallelImagePulls > 1) {
    throw new Error(
      'invalid configuration: maxParallelImagePulls cannot be larger than 1 unless SerializeImagePulls (--serialize-image-pulls) is set to false',
    );
  }
  return {
    kubeApiQps,
    kubeApiBurst,
    eventQps,
    eventBurst,
    nodeStatusMaxImages: integer(
      'node-status-max-images',
      'nodeStatusMaxImages',
      s('node-status-max-images'),
      -1,
      d.nodeStatusMaxImages,
    ),
    podsPerCore: integer('pods-per-core', 'podsPerCore', s('pods-per-core'), 0, d.podsPerCore),
    registerNode: bool('register-node', s('register-node'), d.registerNode),
    podMaxPids: integer(
      'pod-max-pids',
      'podPidsLimit',
      s('pod-max-pids'),
      Number.MIN_SAFE_INTEGER,
      d.podMaxPids,
    ),
    runtimeRequestTimeoutMs,
    serializeImagePulls,
    maxParallelImagePulls,
    enableServer: bool('enable-server', s('enable-server'), d.enableServer),
  };
}

/**
 * `status.capacity.pods` as the kubelet's MachineInfo setter computes it: with `podsPerCore`
 * > 0, min(cores × podsPerCore, maxPods); else maxPods.
 */
export function podCapacity(maxPods: number, podsPerCore: number, cores: number): number {
  return podsPerCore > 0 ? Math.min(cores * podsPerCore, maxPods) : maxPods;
}

/** The image puller's limit: 1 when serialized, else `maxParallelImagePulls` (undefined: none). */
export function imagePullLimit(t: Pick<NodeTuningSettings, 'serializeImagePulls' | 'maxParallelImagePulls'>) {
  return t.serializeImagePulls ? 1 : t.maxParallelImagePulls;
}
