/**
 * kube-proxy's healthz server (`pkg/proxy/healthcheck/proxy_health.go`): per IP family it
 * remembers the oldest queued-but-unsynced update and the last successful sync; a family is
 * unhealthy once an update has waited longer than `healthTimeoutMs` (2 × syncPeriod). `/healthz`
 * additionally fails while the Node is being deleted or carries the cluster autoscaler's
 * `ToBeDeletedByClusterAutoscaler` taint; `/livez` ignores the Node.
 *
 * @module
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { V1Node } from '@kubernetes/client-node';
import { type Clock, type Lifecycle, type Logger, noopLogger, realClock, StartOnce } from '@nodeagent/core';
import { type IPFamily, ipFamilyName } from '@nodeagent/proxy-state';
import { type BindAddress, closeServer, goTime, listen, parseBindAddress } from './http-util.js';
import { noopProxierMetrics, type ProxierMetrics } from './metrics.js';

/** The taint the cluster autoscaler puts on nodes it is about to delete. */
export const TO_BE_DELETED_TAINT = 'ToBeDeletedByClusterAutoscaler';

/** kube-proxy's default healthz port. */
export const DEFAULT_HEALTHZ_PORT = 10256;

/** Options of {@link ProxyHealthServer}. */
export interface ProxyHealthServerOptions {
  /**
   * Where to listen (`host:port`, `[v6]:port`, `:port`); port 0 picks a free one.
   * @default '0.0.0.0:10256'
   */
  readonly bindAddress?: string;
  /**
   * How long a queued update may wait for a successful sync before the proxy is unhealthy:
   * kube-proxy uses 2 × syncPeriod.
   * @default 60000
   */
  readonly healthTimeoutMs?: number;
  /** @default realClock */
  readonly clock?: Clock;
  /** @default noopLogger */
  readonly logger?: Logger;
  /** `kubeproxy_proxy_healthz_total` / `_livez_total`. @default no metrics */
  readonly metrics?: ProxierMetrics;
}

/** Health of one family in the JSON body. */
export interface FamilyHealth {
  /** When this family last synced successfully (Go RFC 3339; zero time when never). */
  readonly lastUpdated: string;
  /** False when an update has been queued for longer than the health timeout. */
  readonly healthy: boolean;
}

/** The JSON body of `/healthz` and `/livez`. */
export interface ProxyHealthBody {
  /** The most recent successful sync (or `currentTime` when healthy, as upstream keeps for compatibility). */
  readonly lastUpdated: string;
  /** The server's time. */
  readonly currentTime: string;
  /** `/healthz` only: false before the Node was seen and while it is being deleted or tainted for deletion. */
  readonly nodeEligible?: boolean;
  /** The overall verdict behind the status code. */
  readonly healthy: boolean;
  /** Per family (`IPv4`, `IPv6`); left out when no family has synced or queued anything (upstream's `omitempty`). */
  readonly status?: Readonly<Record<string, FamilyHealth>>;
}

/** The health bookkeeping plus its HTTP endpoint. Nothing listens before {@link start}. */
export class ProxyHealthServer implements Lifecycle {
  readonly #clock: Clock;
  readonly #log: Logger;
  readonly #timeoutMs: number;
  readonly #address: BindAddress;
  readonly #metrics: ProxierMetrics;
  readonly #lastUpdated = new Map<IPFamily, number>();
  readonly #oldestQueued = new Map<IPFamily, number>();
  // Current upstream's NodeEligible: no Node seen yet is not eligible.
  #nodeEligible = false;
  readonly #once = new StartOnce('ProxyHealthServer');
  #server: Server | undefined;
  #port: number | undefined;
  #stopped = false;

  /** @param options - Address, timeout, clock. @throws InvalidBindAddressError */
  constructor(options: ProxyHealthServerOptions = {}) {
    this.#clock = options.clock ?? realClock;
    this.#log = (options.logger ?? noopLogger).child({ component: 'proxy-healthz' });
    this.#timeoutMs = options.healthTimeoutMs ?? 60_000;
    this.#address = parseBindAddress(
      options.bindAddress ?? `0.0.0.0:${DEFAULT_HEALTHZ_PORT}`,
      DEFAULT_HEALTHZ_PORT,
    );
    this.#metrics = options.metrics ?? noopProxierMetrics;
  }

  /** The port listened on once {@link start} resolved (the bound one when `bindAddress` asks for port 0); undefined before. */
  get port(): number | undefined {
    return this.#port;
  }

  /** A change for `family` was received and not yet programmed (only the oldest is kept). */
  queuedUpdate(family: IPFamily): void {
    if (!this.#oldestQueued.has(family)) this.#oldestQueued.set(family, this.#clock.now());
  }

  /** `family`'s rules were synced successfully. */
  updated(family: IPFamily): void {
    this.#oldestQueued.delete(family);
    this.#lastUpdated.set(family, this.#clock.now());
  }

  /** Takes node eligibility from this proxy's Node: not deleted, not tainted for deletion. */
  syncNode(node: V1Node): void {
    const deleting = node.metadata?.deletionTimestamp != null;
    const tainted = (node.spec?.taints ?? []).some((t) => t.key === TO_BE_DELETED_TAINT);
    this.#nodeEligible = !deleting && !tainted;
  }

  /**
   * Whether this proxy's Node was seen and is neither being deleted nor tainted for deletion.
   * False until the first {@link syncNode} (current kube-proxy: no Node is not eligible).
   */
  get nodeEligible(): boolean {
    return this.#nodeEligible;
  }

  /** The proxy's own health, ignoring the Node (what health-check node ports report). */
  isHealthy(): boolean {
    return this.body(false).healthy;
  }

  /**
   * The body `/livez` (`withNode` false) or `/healthz` (true) would answer now. A family with
   * a queued update counts even before its first sync (upstream only looks at families that
   * synced once, so a proxy that never manages a first sync would look healthy forever).
   */
  body(withNode: boolean): ProxyHealthBody {
    const now = this.#clock.now();
    const families = new Set<IPFamily>([...this.#lastUpdated.keys(), ...this.#oldestQueued.keys()]);
    const status: Record<string, FamilyHealth> = {};
    let healthy = true;
    let lastUpdated: number | undefined;
    let lastUnhealthy: number | undefined;
    for (const f of [...families].sort()) {
      const updatedAt = this.#lastUpdated.get(f);
      const queuedAt = this.#oldestQueued.get(f);
      const ok = queuedAt === undefined || now - queuedAt < this.#timeoutMs;
      if (updatedAt !== undefined && (lastUpdated === undefined || updatedAt > lastUpdated))
        lastUpdated = updatedAt;
      if (!ok) {
        healthy = false;
        lastUnhealthy ??= updatedAt;
      }
      status[ipFamilyName(f)] = { lastUpdated: goTime(updatedAt), healthy: ok };
    }
    const verdict = withNode ? healthy && this.#nodeEligible : healthy;
    return {
      // As upstream: a healthy answer reports "now", an unhealthy one the failing family's last sync.
      lastUpdated: goTime(verdict ? now : healthy ? lastUpdated : lastUnhealthy),
      currentTime: goTime(now),
      ...(withNode ? { nodeEligible: this.#nodeEligible } : {}),
      healthy: verdict,
      ...(Object.keys(status).length > 0 ? { status } : {}),
    };
  }

  /**
   * Starts listening; resolves once the server listens (then {@link port} is set). `signal`
   * bounds only that wait. A second `start` rejects.
   */
  start(signal?: AbortSignal): Promise<void> {
    return this.#once.run(
      signal,
      async () => {
        if (this.#stopped) return;
        const server = createServer((req, res) => this.#handle(req, res));
        this.#server = server;
        const port = await listen(server, this.#address);
        if (this.#server !== server) return; // stopped meanwhile
        this.#port = port;
        this.#log.info({ address: this.#address.host, port }, 'healthz server listening');
      },
      () => this.stop(),
    );
  }

  /** Stops listening. Idempotent; safe before `start`. */
  async stop(): Promise<void> {
    this.#stopped = true;
    const s = this.#server;
    this.#server = undefined;
    if (s) await closeServer(s);
  }

  #handle(req: IncomingMessage, res: ServerResponse): void {
    const path = (req.url ?? '/').split('?')[0];
    if (path !== '/healthz' && path !== '/livez') {
      res.writeHead(404, {
        'Content-Type': 'text/plain; charset=utf-8',
        'X-Content-Type-Options': 'nosniff',
      });
      res.end('404 page not found\n');
      return;
    }
    const endpoint = path === '/healthz' ? 'healthz' : 'livez';
    const body = this.body(endpoint === 'healthz');
    const code = body.healthy ? 200 : 503;
    this.#metrics.healthRequest(endpoint, code);
    res.writeHead(code, { 'Content-Type': 'application/json', 'X-Content-Type-Options': 'nosniff' });
    res.end(JSON.stringify(body));
  }
}
