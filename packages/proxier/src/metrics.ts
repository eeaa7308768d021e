/**
 * kube-proxy's `kubeproxy_*` metrics on an injected prom-client registry (never the global
 * one), through core's {@link MetricsOptions}.
 *
 * @module
 */
import { createMetricFactory, type Logger, type MetricsOptions } from '@nodeagent/core';
import { type ChangeCounts, type IPFamily, ipFamilyName } from '@nodeagent/proxy-state';

/**
 * kube-proxy's nfacct counter names (upstream defines them in `pkg/proxy/metrics`, next to the
 * metrics that read them; `@nodeagent/iptables` writes the same names into its rules). Kept here
 * so the metrics load without the optional `@nodeagent/iptables`.
 */
const NFACCT_CT_STATE_INVALID_DROPPED = 'ct_state_invalid_dropped_pkts';
const NFACCT_LOCALHOST_NODEPORTS_ACCEPTED = 'localhost_nps_accepted_pkts';

/**
 * Where the nfacct metrics read their counts: `SpawnNfacctClient` (or any `NfacctClient`) from
 * `@nodeagent/iptables` fits.
 */
export interface NfacctCounterSource {
  /** Every accounting object with its packet count. */
  list(): Promise<readonly { readonly name: string; readonly packets: bigint | number }[]>;
}

/** What the proxier reports; {@link noopProxierMetrics} without a registry. */
export interface ProxierMetrics {
  /** A successful sync of one family took `seconds` (full or partial). */
  syncDuration(family: IPFamily, full: boolean, seconds: number): void;
  /** A family synced successfully at `epochSeconds`. */
  lastSyncTimestamp(family: IPFamily, epochSeconds: number): void;
  /** A sync was queued at `epochSeconds`. */
  lastQueuedTimestamp(epochSeconds: number): void;
  /** One endpoint change reached the data plane `seconds` after its trigger time. */
  networkProgramming(seconds: number): void;
  /** The proxy-state change counters (pending gauges and totals). */
  changes(counts: ChangeCounts): void;
  /** iptables rules owned per table after a sync. */
  iptablesRules(family: IPFamily, table: string, count: number): void;
  /** iptables rules written per table by the last sync. */
  iptablesRulesWritten(family: IPFamily, table: string, count: number): void;
  /** Deleting stale nftables chains failed. */
  nftablesCleanupFailure(family: IPFamily): void;
  /** Service ports without local endpoints for a Local policy, after a sync. */
  noLocalEndpoints(family: IPFamily, policy: 'internal' | 'external', count: number): void;
  /** A sync failed in `kind`'s tool; `partial` when it was a partial sync. */
  syncFailure(family: IPFamily, kind: 'iptables' | 'nftables' | 'ipvs', partial: boolean): void;
  /** A `/healthz` or `/livez` request was answered with `code`. */
  healthRequest(endpoint: 'healthz' | 'livez', code: number): void;
}

/** Metrics that record nothing. */
export const noopProxierMetrics: ProxierMetrics = {
  syncDuration() {},
  lastSyncTimestamp() {},
  lastQueuedTimestamp() {},
  networkProgramming() {},
  changes() {},
  iptablesRules() {},
  iptablesRulesWritten() {},
  nftablesCleanupFailure() {},
  noLocalEndpoints() {},
  syncFailure() {},
  healthRequest() {},
};

/** Every metric name this package registers. */
export const PROXIER_METRIC_NAMES = [
  'kubeproxy_sync_proxy_rules_duration_seconds',
  'kubeproxy_sync_full_proxy_rules_duration_seconds',
  'kubeproxy_sync_partial_proxy_rules_duration_seconds',
  'kubeproxy_sync_proxy_rules_last_timestamp_seconds',
  'kubeproxy_sync_proxy_rules_last_queued_timestamp_seconds',
  'kubeproxy_network_programming_duration_seconds',
  'kubeproxy_sync_proxy_rules_endpoint_changes_pending',
  'kubeproxy_sync_proxy_rules_endpoint_changes_total',
  'kubeproxy_sync_proxy_rules_service_changes_pending',
  'kubeproxy_sync_proxy_rules_service_changes_total',
  'kubeproxy_sync_proxy_rules_iptables_total',
  'kubeproxy_sync_proxy_rules_iptables_last',
  'kubeproxy_sync_proxy_rules_iptables_restore_failures_total',
  'kubeproxy_sync_proxy_rules_iptables_partial_restore_failures_total',
  'kubeproxy_sync_proxy_rules_nftables_sync_failures_total',
  'kubeproxy_sync_proxy_rules_nftables_cleanup_failures_total',
  'kubeproxy_sync_proxy_rules_no_local_endpoints_total',
  'kubeproxy_proxy_healthz_total',
  'kubeproxy_proxy_livez_total',
] as const;

/** Options of {@link createProxierMetrics}: core's {@link MetricsOptions}. */
export type ProxierMetricsOptions = MetricsOptions;

/** kube-proxy's sync-duration buckets: 1 ms doubling 15 times. */
const SYNC_BUCKETS = Array.from({ length: 15 }, (_, i) => 0.001 * 2 ** i);

/** kube-proxy's network-programming buckets: 0.25 s, 0.5 s, 1–59 s, 60–115 s by 5, 120–300 s by 30. */
const NETWORK_PROGRAMMING_BUCKETS = [
  0.25,
  0.5,
  ...Array.from({ length: 59 }, (_, i) => i + 1),
  ...Array.from({ length: 12 }, (_, i) => 60 + 5 * i),
  ...Array.from({ length: 7 }, (_, i) => 120 + 30 * i),
];

/**
 * Creates (or reuses, when already on the registry) the `kubeproxy_*` metrics. Metrics that
 * are per family carry the `ip_family` label (`IPv4`/`IPv6`), as recent kube-proxy does.
 */
export function createProxierMetrics(options: ProxierMetricsOptions): ProxierMetrics {
  const factory = createMetricFactory(options);
  const histogram = (name: string, help: string, buckets: readonly number[], labelNames: readonly string[]) =>
    factory.histogram({ name, help, buckets, labelNames });
  const gauge = (name: string, help: string, labelNames: readonly string[] = []) =>
    factory.gauge({ name, help, labelNames });
  const counter = (name: string, help: string, labelNames: readonly string[] = []) =>
    factory.counter({ name, help, labelNames });
  const fam = ['ip_family'];
  const sync = histogram(
    'kubeproxy_sync_proxy_rules_duration_seconds',
    'SyncProxyRules latency in seconds',
    SYNC_BUCKETS,
    fam,
  );
  const syncFull = histogram(
    'kubeproxy_sync_full_proxy_rules_duration_seconds',
    'SyncProxyRules latency in seconds for full resyncs',
    SYNC_BUCKETS,
    fam,
  );
  const syncPartial = histogram(
    'kubeproxy_sync_partial_proxy_rules_duration_seconds',
    'SyncProxyRules latency in seconds for partial resyncs',
    SYNC_BUCKETS,
    fam,
  );
  const lastSync = gauge(
    'kubeproxy_sync_proxy_rules_last_timestamp_seconds',
    'The last time proxy rules were successfully synced',
    fam,
  );
  const lastQueued = gauge(
    'kubeproxy_sync_proxy_rules_last_queued_timestamp_seconds',
    'The last time a sync of proxy rules was queued',
  );
  const programming = histogram(
    'kubeproxy_network_programming_duration_seconds',
    'In Cluster Network Programming Latency in seconds',
    NETWORK_PROGRAMMING_BUCKETS,
    [],
  );
  const epPending = gauge(
    'kubeproxy_sync_proxy_rules_endpoint_changes_pending',
    'Pending proxy rules Endpoint changes',
  );
  const epTotal = counter(
    'kubeproxy_sync_proxy_rules_endpoint_changes_total',
    'Cumulative proxy rules Endpoint changes',
  );
  const svcPending = gauge(
    'kubeproxy_sync_proxy_rules_service_changes_pending',
    'Pending proxy rules Service changes',
  );
  const svcTotal = counter(
    'kubeproxy_sync_proxy_rules_service_changes_total',
    'Cumulative proxy rules Service changes',
  );
  const iptTotal = gauge(
    'kubeproxy_sync_proxy_rules_iptables_total',
    'Total number of iptables rules owned by kube-proxy',
    ['table', 'ip_family'],
  );
  const iptLast = gauge(
    'kubeproxy_sync_proxy_rules_iptables_last',
    'Number of iptables rules written by kube-proxy in last sync',
    ['table', 'ip_family'],
  );
  const restoreFailures = counter(
    'kubeproxy_sync_proxy_rules_iptables_restore_failures_total',
    'Cumulative proxy iptables restore failures',
    fam,
  );
  const partialFailures = counter(
    'kubeproxy_sync_proxy_rules_iptables_partial_restore_failures_total',
    'Cumulative proxy iptables partial restore failures',
    fam,
  );
  const nftFailures = counter(
    'kubeproxy_sync_proxy_rules_nftables_sync_failures_total',
    'Cumulative proxy nftables sync failures',
    fam,
  );
  const nftCleanupFailures = counter(
    'kubeproxy_sync_proxy_rules_nftables_cleanup_failures_total',
    'Cumulative proxy nftables cleanup failures',
    fam,
  );
  const noLocal = gauge(
    'kubeproxy_sync_proxy_rules_no_local_endpoints_total',
    'Number of services with a Local traffic policy and no endpoints',
    ['traffic_policy', 'ip_family'],
  );
  const healthz = counter('kubeproxy_proxy_healthz_total', 'Cumulative proxy healthz HTTP status', ['code']);
  const livez = counter('kubeproxy_proxy_livez_total', 'Cumulative proxy livez HTTP status', ['code']);
  let seenService = 0;
  let seenEndpoint = 0;
  return {
    syncDuration(family, full, seconds) {
      const labels = { ip_family: ipFamilyName(family) };
      sync.observe(labels, seconds);
      (full ? syncFull : syncPartial).observe(labels, seconds);
    },
    lastSyncTimestamp(family, epochSeconds) {
      lastSync.set({ ip_family: ipFamilyName(family) }, epochSeconds);
    },
    lastQueuedTimestamp(epochSeconds) {
      lastQueued.set(epochSeconds);
    },
    networkProgramming(seconds) {
      programming.observe(seconds);
    },
    changes(counts) {
      epPending.set(counts.endpointsPending);
      svcPending.set(counts.servicesPending);
      if (counts.endpointChangesTotal > seenEndpoint) epTotal.inc(counts.endpointChangesTotal - seenEndpoint);
      if (counts.serviceChangesTotal > seenService) svcTotal.inc(counts.serviceChangesTotal - seenService);
      seenEndpoint = Math.max(seenEndpoint, counts.endpointChangesTotal);
      seenService = Math.max(seenService, counts.serviceChangesTotal);
    },
    iptablesRules(family, table, count) {
      iptTotal.set({ table, ip_family: ipFamilyName(family) }, count);
    },
    iptablesRulesWritten(family, table, count) {
      iptLast.set({ table, ip_family: ipFamilyName(family) }, count);
    },
    nftablesCleanupFailure(family) {
      nftCleanupFailures.inc({ ip_family: ipFamilyName(family) });
    },
    noLocalEndpoints(family, policy, count) {
      noLocal.set({ traffic_policy: policy, ip_family: ipFamilyName(family) }, count);
    },
    syncFailure(family, kind, partial) {
      const labels = { ip_family: ipFamilyName(family) };
      if (kind === 'nftables') nftFailures.inc(labels);
      else if (kind === 'iptables') {
        restoreFailures.inc(labels);
        if (partial) partialFailures.inc(labels);
      }
    },
    healthRequest(endpoint, code) {
      (endpoint === 'healthz' ? healthz : livez).inc({ code: String(code) });
    },
  };
}

/** kube-proxy's two nfacct-backed metrics and the accounting object each reads. */
export const NFACCT_METRICS: readonly {
  readonly name: string;
  readonly help: string;
  readonly counter: string;
}[] = [
  {
    name: 'kubeproxy_iptables_ct_state_invalid_dropped_packets_total',
    help: 'packets dropped by iptables to work around conntrack problems',
    counter: NFACCT_CT_STATE_INVALID_DROPPED,
  },
  {
    name: 'kubeproxy_iptables_localhost_nodeports_accepted_packets_total',
    help: 'Number of packets accepted on nodeports of loopback interface',
    counter: NFACCT_LOCALHOST_NODEPORTS_ACCEPTED,
  },
];

/**
 * Registers kube-proxy's nfacct collectors on `options.registry`: each scrape reads the
 * accounting objects through `client` and exposes their packet counts as counters (nothing
 * for a counter that does not exist or cannot be read, as kube-proxy's custom collector).
 * A collector already registered under the name is left as it is.
 */
export function registerNfacctCollectors(
  options: MetricsOptions,
  client: NfacctCounterSource,
  logger?: Logger,
): void {
  for (const m of NFACCT_METRICS) {
    if (options.registry.getSingleMetric(m.name) !== undefined) continue;
    options.registry.registerMetric({
      name: m.name,
      help: m.help,
      type: 'counter',
      aggregator: 'sum',
      reset() {},
      async get() {
        let values: { value: number; labels: Record<string, string> }[] = [];
        try {
          const found = (await client.list()).find((c) => c.name === m.counter);
          if (found) values = [{ value: Number(found.packets), labels: {} }];
        } catch (err) {
          logger?.error({ err, counter: m.counter }, 'failed to read the nfacct counter');
        }
        return { name: m.name, help: m.help, type: 'counter', aggregator: 'sum', values };
      },
    });
  }
}
