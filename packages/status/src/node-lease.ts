/**
 * The node heartbeat Lease (upstream `component-helpers/apimachinery/lease`): a
 * `coordination.k8s.io/v1` Lease named after the node in `kube-node-lease`, holder = node,
 * duration 40 s, renewed every 0.25 × duration (+ up to 4 % jitter). A renewal updates the
 * last Lease it saw with up to 5 tries; on a conflict, or when there is none yet, it reads or
 * creates the Lease with backoff (waits of 200 ms, 400 ms, … 7 s). The owner reference to the Node is
 * added once the Node's UID is known.
 *
 * @module
 */
import type { V1Lease } from '@kubernetes/client-node';
import type { MetricsOptions } from '@nodeagent/core';
import {
  type Clock,
  type Lifecycle,
  type Logger,
  noopLogger,
  realClock,
  StartOnce,
  type Timer,
} from '@nodeagent/core';
import { apiErrorCode, errorMessage, type StatusApi } from './api.js';
import { countedCall, type StatusMetrics, statusMetrics } from './metrics.js';
import { microTime } from './time.js';

/** Namespace of node leases. */
export const NODE_LEASE_NAMESPACE = 'kube-node-lease';
/** Default lease duration, seconds (`nodeLeaseDurationSeconds`). */
export const DEFAULT_LEASE_DURATION_SECONDS = 40;
/** Renew interval as a fraction of the duration (`nodeLeaseRenewIntervalFraction`). */
export const LEASE_RENEW_INTERVAL_FRACTION = 0.25;
/** Upstream `maxUpdateRetries`. */
export const LEASE_MAX_UPDATE_RETRIES = 5;
/** Upstream `maxBackoff` of the ensure-lease loop, ms. */
export const LEASE_MAX_BACKOFF_MS = 7_000;
/** Jitter factor of the renew loop (`wait.JitterUntil` with 0.04). */
export const LEASE_RENEW_JITTER = 0.04;

/** Options of {@link NodeLease}. */
export interface NodeLeaseOptions {
  /** Where the Lease lives. */
  readonly api: StatusApi;
  /** Lease name and holder identity. */
  readonly nodeName: string;
  /** `spec.leaseDurationSeconds`. Minimum: 1. @default 40 */
  readonly leaseDurationSeconds?: number;
  /** Renew period, ms. @default 0.25 × duration */
  readonly renewIntervalMs?: number;
  /** The Node's UID for the owner reference; `undefined` until it is registered. @default none */
  readonly nodeUid?: () => string | undefined;
  /** Called when an update failed more than once in a round (the kubelet closes its connections). @default none */
  readonly onRepeatedHeartbeatFailure?: () => void;
  /** Random source in [0, 1) for the jitter. @default Math.random */
  readonly random?: () => number;
  /** @default realClock */
  readonly clock?: Clock;
  /** @default noopLogger */
  readonly logger?: Logger;
  /** Registers `nodeagent_status_api_requests_total`. @default none */
  readonly metrics?: MetricsOptions;
}

/** Keeps the node's Lease renewed. */
export class NodeLease implements Lifecycle {
  readonly #once = new StartOnce('NodeLease');
  readonly #stopping = new AbortController();
  readonly #options: NodeLeaseOptions;
  readonly #clock: Clock;
  readonly #log: Logger;
  readonly #metrics: StatusMetrics;
  readonly #durationSeconds: number;
  readonly #collection = `/apis/coordination.k8s.io/v1/namespaces/${NODE_LEASE_NAMESPACE}/leases`;
  #latest: V1Lease | undefined;
  #timer: Timer | undefined;
  #inFlight: Promise<void> | undefined;
  /** Successful renewals (creates included). */
  renewals = 0;
  /** The error of the last failed round, cleared by a success. */
  lastError: Error | undefined;

  /** @param options see {@link NodeLeaseOptions}. */
  constructor(options: NodeLeaseOptions) {
    this.#durationSeconds = options.leaseDurationSeconds ?? DEFAULT_LEASE_DURATION_SECONDS;
    if (!(this.#durationSeconds >= 1)) {
      throw new RangeError(`NodeLease: leaseDurationSeconds must be >= 1, got ${this.#durationSeconds}`);
    }
    this.#options = options;
    this.#clock = options.clock ?? realClock;
    this.#log = (options.logger ?? noopLogger).child({ component: 'node-lease' });
    this.#metrics = statusMetrics(options.metrics);
  }

  /** The renew period, ms (before jitter). */
  get renewIntervalMs(): number {
    return this.#options.renewIntervalMs ?? this.#durationSeconds * 1000 * LEASE_RENEW_INTERVAL_FRACTION;
  }

  /** The Lease as last written. */
  get lease(): V1Lease | undefined {
    return this.#latest;
  }

  /**
   * Renews once, then keeps renewing. Resolves after the first round — which retries the
   * Lease's creation with backoff while the API server is unreachable, so bound the wait with
   * `signal` if that matters (an abort before it resolves stops the Lease). A second call rejects.
   */
  start(signal?: AbortSignal): Promise<void> {
    return this.#once.run(
      signal,
      async () => {
        await this.renew();
        this.#schedule();
      },
      () => this.stop(),
    );
  }

  /** Stops renewing and waits for a round in flight. Idempotent. */
  async stop(): Promise<void> {
    this.#stopping.abort();
    this.#timer?.cancel();
    this.#timer = undefined;
    await this.#inFlight;
  }

  #schedule(): void {
    if (this.#stopping.signal.aborted) return;
    const random = this.#options.random ?? Math.random;
    const delay = this.renewIntervalMs * (1 + random() * LEASE_RENEW_JITTER);
    this.#timer = this.#clock.setTimeout(() => {
      void this.renew().then(() => this.#schedule());
    }, delay);
  }

  /** One renewal round (upstream `sync`); never throws. */
  renew(): Promise<void> {
    this.#inFlight ??= this.#sync()
      .catch((err: unknown) => {
        this.lastError = err instanceof Error ? err : new Error(String(err));
      })
      .finally(() => {
        this.#inFlight = undefined;
      });
    return this.#inFlight;
  }

  async #sync(): Promise<void> {
    if (this.#latest !== undefined) {
      try {
        await this.#retryUpdate(this.#latest);
        return;
      } catch (err) {
        this.#log.info(
          { err: errorMessage(err) },
          'failed to update lease using latest lease, fallback to ensure lease',
        );
      }
    }
    const { lease, created } = await this.#backoffEnsure();
    this.#latest = lease;
    if (!created) await this.#retryUpdate(lease);
  }

  #leaseFrom(base: V1Lease | undefined): V1Lease {
    const name = this.#options.nodeName;
    const lease: V1Lease = base
      ? structuredClone(base)
      : {
          apiVersion: 'coordination.k8s.io/v1',
          kind: 'Lease',
          metadata: { name, namespace: NODE_LEASE_NAMESPACE },
          spec: { holderIdentity: name, leaseDurationSeconds: this.#durationSeconds },
        };
    lease.spec = { ...lease.spec, renewTime: microTime(this.#clock.now()) as unknown as Date };
    const uid = this.#options.nodeUid?.();
    lease.metadata ??= {};
    const meta = lease.metadata;
    if (uid !== undefined && (meta.ownerReferences ?? []).length === 0) {
      meta.ownerReferences = [{ apiVersion: 'v1', kind: 'Node', name, uid }];
    }
    return lease;
  }

  async #backoffEnsure(): Promise<{ lease: V1Lease; created: boolean }> {
    let sleepMs = 100;
    for (;;) {
      try {
        return await this.#ensure();
      } catch (err) {
        sleepMs = Math.min(2 * sleepMs, LEASE_MAX_BACKOFF_MS);
        this.#log.warn(
          { err: errorMessage(err), retryInMs: sleepMs },
          'failed to ensure lease exists, will retry',
        );
        await this.#clock.sleep(sleepMs, this.#stopping.signal);
      }
    }
  }

  async #ensure(): Promise<{ lease: V1Lease; created: boolean }> {
    const path = `${this.#collection}/${this.#options.nodeName}`;
    const existing = await countedCall(this.#metrics, 'leases', 'get', () =>
      this.#options.api.get<V1Lease>(path),
    );
    if (existing !== undefined) return { lease: existing, created: false };
    const lease = await countedCall(this.#metrics, 'leases', 'create', () =>
      this.#options.api.create<V1Lease>(this.#collection, this.#leaseFrom(undefined)),
    );
    this.renewals++;
    this.lastError = undefined;
    return { lease, created: true };
  }

  async #retryUpdate(base: V1Lease): Promise<void> {
    const path = `${this.#collection}/${this.#options.nodeName}`;
    let current = base;
    for (let i = 0; i < LEASE_MAX_UPDATE_RETRIES; i++) {
      if (this.#stopping.signal.aborted) return;
      try {
        this.#latest = await countedCall(this.#metrics, 'leases', 'update', () =>
          this.#options.api.replace<V1Lease>(path, this.#leaseFrom(current)),
        );
        this.renewals++;
        this.lastError = undefined;
        return;
      } catch (err) {
        this.lastError = err instanceof Error ? err : new Error(String(err));
        this.#log.warn({ attempt: i + 1, err: this.lastError.message }, 'failed to update lease');
        if (apiErrorCode(err) === 409) {
          current = (await this.#backoffEnsure()).lease;
          continue;
        }
        if (i > 0) this.#options.onRepeatedHeartbeatFailure?.();
      }
    }
    throw new Error(`failed ${LEASE_MAX_UPDATE_RETRIES} attempts to update lease`);
  }
}
