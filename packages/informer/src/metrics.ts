/**
 * Informer metrics on the caller's registry ({@link MetricsOptions}: the registry and the
 * prom-client module). prom-client is an optional peer dependency that this package never
 * imports, so neither the code nor the declarations need it installed.
 *
 * @module
 */
import { createMetricFactory, type MetricsOptions } from '@nodeagent/core';
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
  /** A handler's undelivered notifications changed to `pending`. */
  handlerPending(handler: string, pending: number): void;
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
  handlerPending() {},
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
  'informer_handler_pending',
  'informer_synced',
] as const;

/**
 * Creates (or reuses, when another informer already registered them) the informer
 * metrics on `metrics.registry`, labelled with `name`.
 */
export function createInformerMetrics(metrics: MetricsOptions, name: string): InformerMetrics {
  const factory = createMetricFactory(metrics);
  const listDuration = factory.histogram({
    name: 'informer_list_duration_seconds',
    help: 'Duration of a complete (all pages) list, by outcome.',
    labelNames: ['name', 'outcome'],
    buckets: [0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60],
  });
  const watchDuration = factory.histogram({
    name: 'informer_watch_duration_seconds',
    help: 'How long each watch lasted.',
    labelNames: ['name'],
    buckets: [0.1, 1, 10, 60, 300, 600, 1200],
  });
  const relists = factory.counter({
    name: 'informer_relists_total',
    help: 'Lists started, by reason (initial, expired, continue-expired, error, watch-list-fallback).',
    labelNames: ['name', 'reason'],
  });
  const restarts = factory.counter({
    name: 'informer_watch_restarts_total',
    help: 'Watches that ended and were restarted, by reason (closed, short, idle, error, decode, expired).',
    labelNames: ['name', 'reason'],
  });
  const events = factory.counter({
    name: 'informer_events_total',
    help: 'Watch events received, by type.',
    labelNames: ['name', 'type'],
  });
  const lastRv = factory.gauge({
    name: 'informer_last_resource_version',
    help: 'The last resource version seen (when numeric).',
    labelNames: ['name'],
  });
  const handlerErrors = factory.counter({
    name: 'informer_handler_errors_total',
    help: 'Handler calls that threw or rejected.',
    labelNames: ['name', 'handler'],
  });
  const handlerPending = factory.gauge({
    name: 'informer_handler_pending',
    help: 'Notifications queued for a handler and not yet processed.',
    labelNames: ['name', 'handler'],
  });
  const pendingLabels = new Map<string, { readonly name: string; readonly handler: string }>();
  const synced = factory.gauge({
    name: 'informer_synced',
    help: '1 when the informer has synced, 0 otherwise.',
    labelNames: ['name'],
  });
  // Label objects are built once: the per-event path must stay cheap.
  const eventLabels = new Map<string, { readonly name: string; readonly type: string }>();
  const nameLabel = { name };
  return {
    observeList: (seconds, ok) => listDuration.observe({ name, outcome: ok ? 'success' : 'error' }, seconds),
    observeWatch: (seconds) => watchDuration.observe(nameLabel, seconds),
    relist: (reason) => relists.inc({ name, reason }),
    watchRestart: (reason) => restarts.inc({ name, reason }),
    event: (type) => {
      let labels = eventLabels.get(type);
      if (!labels) {
        labels = { name, type };
        eventLabels.set(type, labels);
      }
      events.inc(labels);
    },
    lastResourceVersion: (rv) => {
      const n = Number(rv);
      if (Number.isFinite(n)) lastRv.set(nameLabel, n);
    },
    handlerError: (handler) => handlerErrors.inc({ name, handler }),
    handlerPending: (handler, pending) => {
      let labels = pendingLabels.get(handler);
      if (!labels) {
        labels = { name, handler };
        pendingLabels.set(handler, labels);
      }
      handlerPending.set(labels, pending);
    },
    synced: (value) => synced.set(nameLabel, value ? 1 : 0),
  };
}
