/**
 * `/metrics/cadvisor`: cAdvisor's Prometheus collector as the kubelet registers it (metric sets
 * cpu, memory, disk usage, network, process, OOM; per-CPU off, so CPU is `cpu="total"`), with
 * the kubelet's label function: `container`, `id`, `image`, `name`, `namespace`, `pod` on every
 * series (empty strings where unknown; pod cgroups get their pod's name and namespace).
 * HELP texts, types and timestamps as cAdvisor's `lib/metrics/prometheus.go`.
 *
 * @module
 */
import type { CgroupSample } from './cgroup-reader.js';
import { type PromFamily, type PromSample, renderFamilies } from './prom-text.js';
import type { CadvisorContainer, CadvisorSnapshot } from './stats-provider.js';
import type { PSIStats } from './summary-types.js';

type Kind = 'counter' | 'gauge';

interface Row {
  readonly extra?: readonly (readonly [string, string])[];
  readonly value: number;
}

interface StatMetric {
  readonly name: string;
  readonly help: string;
  readonly type: Kind;
  /** cAdvisor's `condition` on the spec. */
  readonly when?: (c: CadvisorContainer) => boolean;
  readonly rows: (s: CgroupSample, c: CadvisorContainer) => readonly Row[] | undefined;
}

const one = (v: number | undefined): Row[] | undefined => (v === undefined ? undefined : [{ value: v }]);
const hasQuota = (c: CadvisorContainer): boolean => (c.info.latest.cpuQuotaUs ?? 0) !== 0;
const hasCpu = (s: CgroupSample): boolean => s.cpuUsageNs !== undefined;
const hasMemory = (s: CgroupSample): boolean => s.memoryUsageBytes !== undefined;
const memory = (s: CgroupSample, v: number | undefined): Row[] | undefined =>
  hasMemory(s) ? [{ value: v ?? 0 }] : undefined;

type NetKey =
  | 'rxBytes'
  | 'rxErrors'
  | 'rxDropped'
  | 'rxPackets'
  | 'txBytes'
  | 'txErrors'
  | 'txDropped'
  | 'txPackets';
const net = (key: NetKey) => (_s: CgroupSample, c: CadvisorContainer) =>
  c.info.network?.map((i) => ({ extra: [['interface', i.name]] as const, value: i[key] }));

type FsKey = 'inodesFree' | 'inodes' | 'limitBytes' | 'usageBytes';
const fs = (key: FsKey) => (_s: CgroupSample, c: CadvisorContainer) =>
  c.filesystems.map((f) => ({ extra: [['device', f.device]] as const, value: f[key] }));

/** cAdvisor's PressureMetrics (`some` = waiting, `full` = stalled; totals µs → s). */
function pressure(
  resource: string,
  label: string,
  get: (s: CgroupSample) => PSIStats | undefined,
): StatMetric[] {
  return [
    {
      name: `container_pressure_${resource}_stalled_seconds_total`,
      help: `Total time duration no tasks in the container could make progress due to ${label} congestion.`,
      type: 'counter',
      rows: (s) => one(get(s) === undefined ? undefined : (get(s)?.full.total ?? 0) / 1e6),
    },
    {
      name: `container_pressure_${resource}_waiting_seconds_total`,
      help: `Total time duration tasks in the container have waited due to ${label} congestion.`,
      type: 'counter',
      rows: (s) => one(get(s) === undefined ? undefined : (get(s)?.some.total ?? 0) / 1e6),
    },
  ];
}

/** The per-sample metrics, in cAdvisor's order. */
const STAT_METRICS: readonly StatMetric[] = [
  {
    name: 'container_cpu_user_seconds_total',
    help: 'Cumulative user cpu time consumed in seconds.',
    type: 'counter',
    rows: (s) => (hasCpu(s) ? one((s.cpuUserNs ?? 0) / 1e9) : undefined),
  },
  {
    name: 'container_cpu_system_seconds_total',
    help: 'Cumulative system cpu time consumed in seconds.',
    type: 'counter',
    rows: (s) => (hasCpu(s) ? one((s.cpuSystemNs ?? 0) / 1e9) : undefined),
  },
  {
    name: 'container_cpu_usage_seconds_total',
    help: 'Cumulative cpu time consumed in seconds.',
    type: 'counter',
    rows: (s) =>
      s.cpuUsageNs !== undefined && s.cpuUsageNs > 0
        ? [{ extra: [['cpu', 'total']], value: s.cpuUsageNs / 1e9 }]
        : undefined,
  },
  {
    name: 'container_cpu_cfs_periods_total',
    help: 'Number of elapsed enforcement period intervals.',
    type: 'counter',
    when: hasQuota,
    rows: (s) => (hasCpu(s) ? one(s.cfsPeriods ?? 0) : undefined),
  },
  {
    name: 'container_cpu_cfs_throttled_periods_total',
    help: 'Number of throttled period intervals.',
    type: 'counter',
    when: hasQuota,
    rows: (s) => (hasCpu(s) ? one(s.cfsThrottledPeriods ?? 0) : undefined),
  },
  {
    name: 'container_cpu_cfs_throttled_seconds_total',
    help: 'Total time duration the container has been throttled.',
    type: 'counter',
    when: hasQuota,
    rows: (s) => (hasCpu(s) ? one((s.cfsThrottledNs ?? 0) / 1e9) : undefined),
  },
  {
    name: 'container_memory_cache',
    help: 'Number of bytes of page cache memory.',
    type: 'gauge',
    rows: (s) => memory(s, s.cacheBytes),
  },
  {
    name: 'container_memory_rss',
    help: 'Size of RSS in bytes.',
    type: 'gauge',
    rows: (s) => memory(s, s.rssBytes),
  },
  {
    name: 'container_memory_kernel_usage',
    help: 'Size of kernel memory allocated in bytes.',
    type: 'gauge',
    rows: (s) => memory(s, s.kernelBytes),
  },
  {
    name: 'container_memory_mapped_file',
    help: 'Size of memory mapped files in bytes.',
    type: 'gauge',
    rows: (s) => memory(s, s.mappedFileBytes),
  },
  {
    name: 'container_memory_swap',
    help: 'Container swap usage in bytes.',
    type: 'gauge',
    rows: (s) => memory(s, s.swapBytes),
  },
  {
    name: 'container_memory_failcnt',
    help: 'Number of memory usage hits limits',
    type: 'counter',
    rows: (s) => memory(s, s.memoryFailcnt),
  },
  {
    name: 'container_memory_usage_bytes',
    help: 'Current memory usage in bytes, including all memory regardless of when it was accessed',
    type: 'gauge',
    rows: (s) => memory(s, s.memoryUsageBytes),
  },
  {
    name: 'container_memory_max_usage_bytes',
    help: 'Maximum memory usage recorded in bytes',
    type: 'gauge',
    rows: (s) => memory(s, s.memoryMaxUsageBytes),
  },
  {
    name: 'container_memory_working_set_bytes',
    help: 'Current working set in bytes.',
    type: 'gauge',
    rows: (s) => memory(s, s.workingSetBytes),
  },
  {
    name: 'container_memory_total_active_file_bytes',
    help: 'Current total active file in bytes.',
    type: 'gauge',
    rows: (s) => memory(s, s.activeFileBytes),
  },
  {
    name: 'container_memory_total_inactive_file_bytes',
    help: 'Current total inactive file in bytes.',
    type: 'gauge',
    rows: (s) => memory(s, s.inactiveFileBytes),
  },
  {
    name: 'container_memory_failures_total',
    help: 'Cumulative count of memory allocation failures.',
    type: 'counter',
    rows: (s) =>
      hasMemory(s)
        ? [
            {
              extra: [
                ['failure_type', 'pgfault'],
                ['scope', 'container'],
              ],
              value: s.pgfaultContainer ?? 0,
            },
            {
              extra: [
                ['failure_type', 'pgmajfault'],
                ['scope', 'container'],
              ],
              value: s.pgmajfaultContainer ?? 0,
            },
            {
              extra: [
                ['failure_type', 'pgfault'],
                ['scope', 'hierarchy'],
              ],
              value: s.pgfault ?? 0,
            },
            {
              extra: [
                ['failure_type', 'pgmajfault'],
                ['scope', 'hierarchy'],
              ],
              value: s.pgmajfault ?? 0,
            },
          ]
        : undefined,
  },
  {
    name: 'container_fs_inodes_free',
    help: 'Number of available Inodes',
    type: 'gauge',
    rows: fs('inodesFree'),
  },
  { name: 'container_fs_inodes_total', help: 'Number of Inodes', type: 'gauge', rows: fs('inodes') },
  {
    name: 'container_fs_limit_bytes',
    help: 'Number of bytes that can be consumed by the container on this filesystem.',
    type: 'gauge',
    rows: fs('limitBytes'),
  },
  {
    name: 'container_fs_usage_bytes',
    help: 'Number of bytes that are consumed by the container on this filesystem.',
    type: 'gauge',
    rows: fs('usageBytes'),
  },
  {
    name: 'container_network_receive_bytes_total',
    help: 'Cumulative count of bytes received',
    type: 'counter',
    rows: net('rxBytes'),
  },
  {
    name: 'container_network_receive_packets_total',
    help: 'Cumulative count of packets received',
    type: 'counter',
    rows: net('rxPackets'),
  },
  {
    name: 'container_network_receive_packets_dropped_total',
    help: 'Cumulative count of packets dropped while receiving',
    type: 'counter',
    rows: net('rxDropped'),
  },
  {
    name: 'container_network_receive_errors_total',
    help: 'Cumulative count of errors encountered while receiving',
    type: 'counter',
    rows: net('rxErrors'),
  },
  {
    name: 'container_network_transmit_bytes_total',
    help: 'Cumulative count of bytes transmitted',
    type: 'counter',
    rows: net('txBytes'),
  },
  {
    name: 'container_network_transmit_packets_total',
    help: 'Cumulative count of packets transmitted',
    type: 'counter',
    rows: net('txPackets'),
  },
  {
    name: 'container_network_transmit_packets_dropped_total',
    help: 'Cumulative count of packets dropped while transmitting',
    type: 'counter',
    rows: net('txDropped'),
  },
  {
    name: 'container_network_transmit_errors_total',
    help: 'Cumulative count of errors encountered while transmitting',
    type: 'counter',
    rows: net('txErrors'),
  },
  {
    name: 'container_threads',
    help: 'Number of threads running inside the container',
    type: 'gauge',
    rows: (s) => one(s.pids),
  },
  {
    name: 'container_threads_max',
    help: 'Maximum number of threads allowed inside the container, infinity if value is zero',
    type: 'gauge',
    rows: (s) => (s.pids === undefined ? undefined : one(s.pidsMax ?? 0)),
  },
  ...pressure('cpu', 'CPU', (s) => s.cpuPressure),
  ...pressure('memory', 'memory', (s) => s.memoryPressure),
  ...pressure('io', 'IO', (s) => s.ioPressure),
  {
    name: 'container_oom_events_total',
    help: 'Count of out of memory events observed for the container',
    type: 'counter',
    rows: (s) => one(s.oomKills ?? 0),
  },
];

function baseLabels(c: CadvisorContainer): [string, string][] {
  return [
    ['container', c.container],
    ['id', c.id],
    ['image', c.image],
    ['name', c.name],
    ['namespace', c.namespace],
    ['pod', c.pod],
  ];
}

/** Renders `/metrics/cadvisor` from {@link StatsProvider.cadvisorSnapshot}. */
export function renderCadvisorMetrics(snapshot: CadvisorSnapshot, nowMs: number = snapshot.timeMs): string {
  const families = new Map<string, PromFamily>();
  const add = (name: string, help: string, type: Kind, sample: PromSample): void => {
    let f = families.get(name);
    if (f === undefined) {
      f = { name, help, type, samples: [] };
      families.set(name, f);
    }
    f.samples.push(sample);
  };
  const nowSeconds = Math.floor(nowMs / 1000);
  for (const c of snapshot.containers) {
    const labels = baseLabels(c);
    const s = c.info.latest;
    add('container_creation_time_seconds', 'Container creation time since unix epoch in seconds.', 'gauge', {
      labels,
      value: Math.floor(c.startTimeMs / 1000),
    });
    add('container_start_time_seconds', 'Start time of the container since unix epoch in seconds.', 'gauge', {
      labels,
      value: Math.floor(c.startTimeMs / 1000),
    });
    if (s.cpuShares !== undefined || s.cpuPeriodUs !== undefined) {
      add('container_spec_cpu_period', 'CPU period of the container.', 'gauge', {
        labels,
        value: s.cpuPeriodUs ?? 0,
      });
      if ((s.cpuQuotaUs ?? 0) !== 0) {
        add('container_spec_cpu_quota', 'CPU quota of the container.', 'gauge', {
          labels,
          value: s.cpuQuotaUs ?? 0,
        });
      }
      add('container_spec_cpu_shares', 'CPU share of the container.', 'gauge', {
        labels,
        value: s.cpuShares ?? 0,
      });
    }
    if (s.memoryUsageBytes !== undefined && c.id !== '/') {
      add('container_spec_memory_limit_bytes', 'Memory limit for the container.', 'gauge', {
        labels,
        value: s.memoryLimitBytes ?? 0,
      });
      add('container_spec_memory_swap_limit_bytes', 'Memory swap limit for the container.', 'gauge', {
        labels,
        value: s.memorySwapLimitBytes ?? 0,
      });
      add(
        'container_spec_memory_reservation_limit_bytes',
        'Memory reservation limit for the container.',
        'gauge',
        {
          labels,
          value: s.memoryReservationBytes ?? 0,
        },
      );
    }
    add('container_last_seen', 'Last time a container was seen by the exporter', 'gauge', {
      labels,
      value: nowSeconds,
      timestampMs: nowMs,
    });
    for (const m of STAT_METRICS) {
      if (m.when !== undefined && !m.when(c)) continue;
      for (const row of m.rows(s, c) ?? []) {
        add(m.name, m.help, m.type, {
          labels: row.extra === undefined ? labels : [...labels, ...row.extra],
          value: row.value,
          timestampMs: s.timeMs,
        });
      }
    }
  }
  add(
    'container_scrape_error',
    '1 if there was an error while getting container metrics, 0 otherwise',
    'gauge',
    {
      labels: [],
      value: snapshot.scrapeError ? 1 : 0,
    },
  );
  return renderFamilies([...families.values()]);
}
