/**
 * The node heartbeat Lease (upstream `component-helpers/apimachinery/lease`): a
 * `coordination.k8s.io/v1` Lease named after the node in `kube-node-lease`, holder = node,
 * duration 40 s, renewed every 0.25 × duration with up to 5 immediate retries, owned by the
 * Node once it exists.
 *
 * @module
 */
import type { V1Lease } from '@kubernetes/client-node';
import {
  type Clock,
  type Lifecycle,
  type Logger,
  noopLogger,
  realClock,
  StartOnce,
  type Timer,
} from '@nodeagent/core';
import { type ApiClient, ApiError } from './api-client.js';

/** Namespace of node leases. */
export const NODE_LEASE_NAMESPACE = 'kube-node-lease';
/** Default lease duration, seconds (kubelet `nodeLeaseDurationSeconds`). */
export const DEFAULT_LEASE_DURATION_SECONDS = 40;
/** Renew interval as a fraction of the duration (upstream `nodeLeaseRenewIntervalFraction`). */
export const LEASE_RENEW_INTERVAL_FRACTION = 0.25;
const MAX_UPDATE_RETRIES = 5;

/** Options of {@link NodeLease}. */
export interface NodeLeaseOptions {
  /** Where the lease lives. */
  readonly api: ApiClient;
  /** Lease name and holder identity. */
  readonly nodeName: string;
  /** @default 40 */
  readonly leaseDurationSeconds?: number;
  /** Renew period, ms. @default 0.25 × duration */
  readonly renewIntervalMs?: number;
  /** UID of the Node, for the owner reference (looked up when absent). */
  readonly nodeUid?: () => string | undefined;
  /** @default realClock */
  readonly clock?: Clock;
  /** @default noopLogger */
  readonly logger?: Logger;
}

/** `MicroTime` as the API writes it: RFC 3339 with microseconds. */
export function microTime(ms: number): string {
  return new Date(ms).toISOString().replace(/\.(\d{3})Z$/, '.$1000Z');
}

/** Keeps the node's Lease renewed. `start()` renews once and then every interval. */
export class NodeLease implements Lifecycle {
  readonly #once = new StartOnce('NodeLease');
  /** Successful renewals (creates included). */
  renewals = 0;
  /** The last error of a renewal round, cleared by a success. */
  lastError: Error | undefined;
  #timer: Timer | undefined;
  #current: V1Lease | undefined;
  #inFlight: Promise<void> | undefined;
  readonly #clock: Clock;
  readonly #log: Logger;
  readonly #durationSeconds: number;
  readonly #path: string;

  readonly #options: NodeLeaseOptions;

  /** @param options see {@link NodeLeaseOptions}. */
  constructor(options: NodeLeaseOptions) {
    this.#options = options;
    this.#clock = options.clock ?? realClock;
    this.#log = (options.logger ?? noopLogger).child({ component: 'node-lease' });
    this.#durationSeconds = options.leaseDurationSeconds ?? DEFAULT_LEASE_DURATION_SECONDS;
    this.#path = `/apis/coordination.k8s.io/v1/namespaces/${NODE_LEASE_NAMESPACE}/leases`;
  }

  /**
   * Renews now, then every renew interval until {@link NodeLease.stop}; resolves after the
   * first renewal round (which never throws: failures are in {@link NodeLease.lastError}).
   * `signal` bounds that wait only. A second call rejects.
   */
  start(signal?: AbortSignal): Promise<void> {
    return this.#once.run(
      signal,
      () => {
        const periodMs =
          this.#options.renewIntervalMs ?? this.#durationSeconds * 1000 * LEASE_RENEW_INTERVAL_FRACTION;
        this.#timer = this.#clock.setInterval(() => void this.renew(), periodMs);
        return this.renew();
      },
      () => this.stop(),
    );
  }

  /** Stops renewing and waits for a renewal in flight. */
  async stop(): Promise<void> {
    this.#timer?.cancel();
    this.#timer = undefined;
    await this.#inFlight;
  }

  /** One renewal round (create or update, up to 5 tries); never throws. */
  renew(): Promise<void> {
    this.#inFlight ??= this.#renewWithRetries().finally(() => {
      this.#inFlight = undefined;
    });
    return this.#inFlight;
  }

  async #renewWithRetries(): Promise<void> {
    for (let attempt = 1; attempt <= MAX_UPDATE_RETRIES; attempt++) {
      try {
        await this.#renewOnce();
        this.renewals++;
        this.lastError = undefined;
        return;
      } catch (err) {
        this.lastError = err instanceof Error ? err : new Error(String(err));
        // A conflict or a lost object: read it again on the next try.
        this.#current = undefined;
        this.#log.warn({ attempt, err: this.lastError.message }, 'failed to renew node lease');
      }
    }
  }

  async #renewOnce(): Promise<void> {
    const name = this.#options.nodeName;
    this.#current ??= await this.#options.api.get<V1Lease>(`${this.#path}/${name}`);
    const spec = {
      holderIdentity: name,
      leaseDurationSeconds: this.#durationSeconds,
      renewTime: microTime(this.#clock.now()) as unknown as Date,
    };
    const ownerUid = this.#options.nodeUid?.();
    const ownerReferences =
      ownerUid === undefined ? undefined : [{ apiVersion: 'v1', kind: 'Node', name, uid: ownerUid }];
    if (this.#current === undefined) {
      try {
        this.#current = await this.#options.api.create<V1Lease>(this.#path, {
          apiVersion: 'coordination.k8s.io/v1',
          kind: 'Lease',
          metadata: {
            name,
            namespace: NODE_LEASE_NAMESPACE,
            ...(ownerReferences ? { ownerReferences } : {}),
          },
          spec,
        });
        return;
      } catch (err) {
        if (!(err instanceof ApiError && err.code === 409)) throw err;
        this.#current = await this.#options.api.get<V1Lease>(`${this.#path}/${name}`);
        if (this.#current === undefined) throw err;
      }
    }
    const metadata = { ...this.#current.metadata };
    if (ownerReferences && !(metadata.ownerReferences ?? []).some((o) => o.uid === ownerUid)) {
      metadata.ownerReferences = ownerReferences;
    }
    this.#current = await this.#options.api.replace<V1Lease>(`${this.#path}/${name}`, {
      ...this.#current,
      metadata,
      spec: { ...this.#current.spec, ...spec },
    });
  }
}
