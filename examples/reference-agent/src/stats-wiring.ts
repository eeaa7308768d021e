/**
 * The node's resource statistics (`@nodeagent/stats`) for the parts that consume them: the
 * eviction manager's Summary, and the kubelet server's `/stats/summary`, `/metrics/resource`
 * and `/metrics/cadvisor`. On a real runtime the provider reads the cgroups of the pods (under
 * `kubepods` below `--cgroup-root`, with either driver's names), `/proc`, statfs and the CRI
 * stats; on the embedded fake runtime it builds the Summary from CRI stats and `/proc` alone.
 *
 * @module
 */
import { posix } from 'node:path';
import type { Clock, Logger, MetricsOptions } from '@nodeagent/core';
import type { CriClient } from '@nodeagent/cri';
import type { MetricsTextProvider } from '@nodeagent/kubelet-server';
import {
  createStatsProvider,
  type MeasuredVolume,
  type PodVolumeLister,
  renderCadvisorMetrics,
  renderResourceMetrics,
  type StatsProvider,
} from '@nodeagent/stats';
import {
  CONFIG_MAP_PLUGIN_NAME,
  DOWNWARD_API_PLUGIN_NAME,
  EMPTY_DIR_PLUGIN_NAME,
  PROJECTED_PLUGIN_NAME,
  SECRET_PLUGIN_NAME,
  type VolumeManager,
} from '@nodeagent/volumes';

/** What {@link createAgentStats} needs. */
export interface AgentStatsDeps {
  readonly nodeName: string;
  readonly cri: CriClient;
  /** True on the embedded fake runtime (no cgroups of its own). */
  readonly embedded: boolean;
  /** `--cgroup-root` (where `kubepods` lives). @default '/' */
  readonly cgroupRoot: string | undefined;
  /** The pod log directory. */
  readonly podLogsRoot: string;
  /** The kubelet root directory (nodefs), when known. */
  readonly rootDir: string | undefined;
  /** The pods' volumes for `pods[].volume` (see {@link podVolumeLister}). @default none */
  readonly volumes?: PodVolumeLister | undefined;
  /** How often volumes are measured (`volumeStatsAggPeriod`), ms; ≤ 0 turns volume stats off. @default 60_000 */
  readonly volumeStatsAggPeriodMs?: number | undefined;
  /** The agent's `/metrics` registry (metrics-wiring.ts). @default none */
  readonly metrics?: MetricsOptions | undefined;
  readonly clock: Clock;
  readonly logger: Logger;
}

/** The provider and the kubelet server's text renderings of it. */
export interface AgentStats {
  readonly provider: StatsProvider;
  /** `/metrics/resource` (what metrics-server scrapes). */
  readonly resourceMetrics: MetricsTextProvider;
  /** `/metrics/cadvisor`. */
  readonly cadvisorMetrics: MetricsTextProvider;
}

/** Builds the stats provider (not started) and its metrics renderings. */
export function createAgentStats(deps: AgentStatsDeps): AgentStats {
  const root = posix.join('/', deps.cgroupRoot ?? '/').replace(/^\/+/, '');
  const under = (name: string) => (root === '' ? name : posix.join(root, name));
  const provider = createStatsProvider({
    nodeName: deps.nodeName,
    cri: deps.cri,
    embedded: deps.embedded,
    podLogsDirectory: deps.podLogsRoot,
    podsCgroupRoots: [under('kubepods'), under('kubepods.slice')],
    ...(deps.rootDir !== undefined ? { rootDirectory: deps.rootDir } : {}),
    ...(deps.metrics !== undefined ? { metrics: deps.metrics } : {}),
    ...(deps.volumes !== undefined && (deps.volumeStatsAggPeriodMs ?? 1) > 0
      ? {
          volumes: deps.volumes,
          ...(deps.volumeStatsAggPeriodMs === undefined
            ? {}
            : { volumeStatsAggPeriodMs: deps.volumeStatsAggPeriodMs }),
        }
      : {}),
    clock: deps.clock,
    logger: deps.logger.child({ component: 'stats' }),
  });
  return {
    provider,
    resourceMetrics: { metrics: async () => renderResourceMetrics(await provider.getCpuAndMemory()) },
    cadvisorMetrics: { metrics: async () => renderCadvisorMetrics(await provider.cadvisorSnapshot()) },
  };
}

/**
 * Plugins whose volumes report usage, and whether it is measured once (upstream: emptyDir
 * `MetricsDu`; configMap, secret, downwardAPI, projected `CachedMetrics(MetricsDu)`; hostPath
 * none).
 */
const MEASURED_PLUGINS: ReadonlyMap<string, boolean> = new Map([
  [EMPTY_DIR_PLUGIN_NAME, false],
  [CONFIG_MAP_PLUGIN_NAME, true],
  [SECRET_PLUGIN_NAME, true],
  [DOWNWARD_API_PLUGIN_NAME, true],
  [PROJECTED_PLUGIN_NAME, true],
]);

/** The stats' view of the volume manager: the pods' mounted volumes that report usage. */
export function podVolumeLister(
  manager: () => Pick<VolumeManager, 'getMountedVolumesForPod'> | undefined,
  podUids: () => readonly string[],
): PodVolumeLister {
  return {
    podUids,
    volumesForPod(uid) {
      const out: MeasuredVolume[] = [];
      for (const v of manager()?.getMountedVolumesForPod(uid).values() ?? []) {
        const cached = MEASURED_PLUGINS.get(v.pluginName);
        if (cached !== undefined) out.push({ name: v.name, path: v.hostPath, cached });
      }
      return out;
    },
  };
}
