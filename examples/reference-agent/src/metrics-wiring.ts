/**
 * The agent's Prometheus registries, as the kubelet's server splits them: `/metrics` (the
 * legacy registry: every component's metrics — PLEG, pod workers, runtime manager and CRI
 * calls, status, eviction, image GC, informers and their `rest_client_*`, the work queue,
 * events, stats errors — plus `kubelet_node_name` and the process metrics) and
 * `/metrics/probes` (its own registry with `prober_probe_total`,
 * `prober_probe_duration_seconds` and `process_start_time_seconds`, as upstream's
 * `server.go` registers them). Components get {@link AgentMetrics.metrics} or
 * {@link AgentMetrics.probes}; the kubelet server serves the two texts.
 *
 * @module
 */
import type { MetricsOptions } from '@nodeagent/core';
import type { MetricsTextProvider } from '@nodeagent/kubelet-server';
import * as promClient from 'prom-client';

/** The two registries and what the kubelet server serves from them. */
export interface AgentMetrics {
  /** Components' metrics on the `/metrics` registry. */
  readonly metrics: MetricsOptions;
  /** The prober's metrics on the `/metrics/probes` registry. */
  readonly probes: MetricsOptions;
  /** `/metrics`. */
  readonly text: MetricsTextProvider;
  /** `/metrics/probes`. */
  readonly probeText: MetricsTextProvider;
}

/** Builds both registries; `kubelet_node_name{node}` is set to 1 as the kubelet does at start. */
export function createAgentMetrics(nodeName: string): AgentMetrics {
  const registry = new promClient.Registry();
  const probeRegistry = new promClient.Registry();
  // Upstream's legacy registry carries the process collector: prom-client's default metrics
  // give the same process_* names (plus nodejs_* where Go has go_*).
  promClient.collectDefaultMetrics({ register: registry });
  new promClient.Gauge({
    name: 'kubelet_node_name',
    help: "The node's name. The count is always 1.",
    labelNames: ['node'],
    registers: [registry],
  }).set({ node: nodeName }, 1);
  // compbasemetrics.RegisterProcessStartTime on the probes registry.
  const startSeconds = Math.round(Date.now() / 1000 - process.uptime());
  new promClient.Gauge({
    name: 'process_start_time_seconds',
    help: 'Start time of the process since unix epoch in seconds.',
    registers: [probeRegistry],
  }).set(startSeconds);
  const text = (r: promClient.Registry): MetricsTextProvider => ({
    contentType: r.contentType,
    metrics: () => r.metrics(),
  });
  return {
    metrics: { registry, promClient },
    probes: { registry: probeRegistry, promClient },
    text: text(registry),
    probeText: text(probeRegistry),
  };
}
