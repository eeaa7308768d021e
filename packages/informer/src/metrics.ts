/**
 * Informer metrics on an injected prom-client `Registry` (never the global one).
 * prom-client is an optional peer dependency, loaded only when a registry is passed.
 *
 * @module
 */
import type { Registry } from 'prom-client';
import type { WatchEventType } from './types.js';

/** Why the reflector listed (again). */
export type RelistReason = 'initial' | 'expired' | 'continue-expired' | 'error' | 'watch-list-fallback';

/** Why a watch ended and was restarted. */
export type WatchRestartReason = 'closed' | 'short' | 'idle' | 'error' | 'decode' | 'expired';

/** What the informer reports; {@link noopInformerMetrics} when no registry is configured. */
export interface InformerMetrics {
  /** A list (all pages) finished, successfully or not. */
  observeList(seconds: number, ok: boolean): void;
  /** A watch ended after `seconds`. */
  observeWatch(seconds: number): void;
  /** A (re)list started. */
  relist(reason: RelistReason): void;
  /** A watch ended and will be restarted. */
  watchRestart(reason: WatchRestartReason): void;
  /** A watch event arrived. */
  event(type: WatchEventType): void;
  /** The last resource version the reflector saw. */
  lastResourceVersion(rv: string): void;
  /** A handler threw or rejected. */
  handlerError(handler: string): void;
  /** The informer synced (1) or stopped (0). */
  synced(value: boolean): void;
}

/** Metrics that record nothing. */
export const noopInformerMetrics: InformerMetrics = {
  observeList() {},
  observeWatch() {},
  relist() {},
  watchRestart() {},
  event() {},
  lastResourceVersion() {},
  handlerError() {},
  synced() {},
};

/** The metric names this package registers. */
export const INFORMER_METRIC_NAMES = [
  'informer_list_duration_seconds',
  'informer_watch_duration_seconds',
  'informer_relists_total',
  'informer_watch_restarts_total',
  'informer_events_total',
  'informer_last_resource_version',
  'informer_handler_errors_total',
  'informer_synced',
] as const;

type PromClient = typeof import('prom-client');

/**
 * Creates (or reuses, when another informer already registered them) the informer
 * metrics on `registry`, labelled with `name`.
 */
export async function createInformerMetrics(registry: Registry, name: string): Promise<InformerMetrics> {
  const prom: PromClient = await import('prom-client');
  const get = <M>(metricName: string, make: () => M): M =>
    (registry.getSingleMetric(metricName) as M | undefined) ?? make();
  const registers = [registry];
  const listDuration = get(
    'informer_list_duration_seconds',
    () =>
      new prom.Histogram({
        name: 'informer_list_duration_seconds',
        help: 'Duration of a complete (all pages) list, by outcome.',
        labelNames: ['name', 'outcome'],
        buckets: [0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60],
        registers,
      }),
  );
  const watchDuration = get(
    'informer_watch_duration_seconds',
    () =>
      new prom.Histogram({
        name: 'informer_watch_duration_seconds',
        help: 'How long each watch lasted.',
        labelNames: ['name'],
        buckets: [0.1, 1, 10, 60, 300, 600, 1200],
        registers,
      }),
  );
  const relists = get(
    'informer_relists_total',
    () =>
      new prom.Counter({
        name: 'informer_relists_total',
        help: 'Lists started, by reason (initial, expired, continue-expired, error, watch-list-fallback).',
        labelNames: ['name', 'reason'],
        registers,
      }),
  );
  const restarts = get(
    'informer_watch_restarts_total',
    () =>
      new prom.Counter({
        name: 'informer_watch_restarts_total',
        help: 'Watches that ended and were restarted, by reason (closed, short, idle, error, decode, expired).',
        labelNames: ['name', 'reason'],
        registers,
      }),
  );
  const events = get(
    'informer_events_total',
    () =>
      new prom.Counter({
        name: 'informer_events_total',
        help: 'Watch events received, by type.',
        labelNames: ['name', 'type'],
        registers,
      }),
  );
  const lastRv = get(
    'informer_last_resource_version',
    () =>
      new prom.Gauge({
        name: 'informer_last_resource_version',
        help: 'The last resource version seen (when numeric).',
        labelNames: ['name'],
        registers,
      }),
  );
  const handlerErrors = get(
    'informer_handler_errors_total',
    () =>
      new prom.Counter({
        name: 'informer_handler_errors_total',
        help: 'Handler calls that threw or rejected.',
        labelNames: ['name', 'handler'],
        registers,
      }),
  );
  const synced = get(
    'informer_synced',
    () =>
      new prom.Gauge({
        name: 'informer_synced',
        help: '1 when the informer has synced, 0 otherwise.',
        labelNames: ['name'],
        registers,
      }),
  );
  // Children are bound once: the per-event path must stay cheap.
  const eventChildren = new Map<string, { inc(): void }>();
  const rvChild = lastRv.labels({ name });
  return {
    observeList: (seconds, ok) => listDuration.observe({ name, outcome: ok ? 'success' : 'error' }, seconds),
    observeWatch: (seconds) => watchDuration.observe({ name }, seconds),
    relist: (reason) => relists.inc({ name, reason }),
    watchRestart: (reason) => restarts.inc({ name, reason }),
    event: (type) => {
      let child = eventChildren.get(type);
      if (!child) {
        child = events.labels({ name, type });
        eventChildren.set(type, child);
      }
      child.inc();
    },
    lastResourceVersion: (rv) => {
      const n = Number(rv);
      if (Number.isFinite(n)) rvChild.set(n);
    },
    handlerError: (handler) => handlerErrors.inc({ name, handler }),
    synced: (value) => synced.set({ name }, value ? 1 : 0),
  };
}
