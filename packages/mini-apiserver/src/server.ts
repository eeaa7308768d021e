/**
 * `startMiniApiServer`: an embedded in-memory Kubernetes API server on loopback or a unix
 * socket, with a kubeconfig for clients, store access and fault injection for tests.
 *
 * @module
 */
import { writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { type Clock, type Logger, noopLogger, realClock } from '@nodeagent/core';
import { EndpointSliceController } from './endpointslice-controller.js';
import { Faults } from './faults.js';
import { handleRequest, type RequestRecord } from './handler.js';
import { renderKubeconfig } from './kubeconfig.js';
import { ObjectStore } from './store.js';
import type { WatchStream } from './watch-stream.js';

/** Options of {@link startMiniApiServer}. */
export interface MiniApiServerOptions {
  /**
   * TCP port on 127.0.0.1; 0 picks a free one.
   * @default 0
   */
  readonly port?: number;
  /**
   * Address to listen on.
   * @default '127.0.0.1'
   */
  readonly host?: string;
  /** Listen on this unix socket path instead of TCP. */
  readonly socketPath?: string;
  /** Require `Authorization: Bearer <token>` (401 otherwise); also written to the kubeconfig. */
  readonly token?: string;
  /** Also write the kubeconfig to this file. */
  readonly kubeconfigPath?: string;
  /**
   * Time source for timestamps, bookmark intervals, watch timeouts and injected latency.
   * @default realClock
   */
  readonly clock?: Clock;
  /** @default noopLogger */
  readonly logger?: Logger;
  /**
   * Interval between BOOKMARK events on watches that allow them, in milliseconds (0 = never).
   * @default 60000
   */
  readonly bookmarkIntervalMs?: number;
  /**
   * Server-side timeout of watches without `timeoutSeconds`; 0 = never. The real server
   * picks a random value between 30 and 60 minutes.
   * @default 0
   */
  readonly watchTimeoutSeconds?: number;
  /**
   * Events kept per resource type for watches from an older resourceVersion.
   * @default 10000
   */
  readonly historySize?: number;
  /**
   * Create namespaces on the fly instead of answering 404 for objects in a missing one.
   * @default false
   */
  readonly autoCreateNamespaces?: boolean;
  /**
   * Run the built-in EndpointSlice controller (Services + Pods → EndpointSlices).
   * @default false
   */
  readonly endpointSliceController?: boolean;
  /**
   * How many handled requests {@link MiniApiServer.requests} keeps.
   * @default 1000
   */
  readonly requestLogSize?: number;
}

/** A running mini API server. */
export interface MiniApiServer {
  /** Base URL, e.g. `http://127.0.0.1:40123` (`http://localhost` for a unix socket). */
  readonly url: string;
  /** TCP port (0 for a unix socket). */
  readonly port: number;
  /** The unix socket path, when listening on one. */
  readonly socketPath: string | undefined;
  /** Kubeconfig text pointing at this server (JSON, which is valid YAML). */
  readonly kubeconfig: string;
  /** Where the kubeconfig was written, when `kubeconfigPath` was given. */
  readonly kubeconfigPath: string | undefined;
  /** Direct access to the objects, with the same rules and watch events as the HTTP API. */
  readonly store: ObjectStore;
  /** Fault injection. */
  readonly faults: Faults;
  /** The EndpointSlice controller, when enabled. */
  readonly endpointSlices: EndpointSliceController | undefined;
  /** The last handled requests, oldest first. */
  readonly requests: readonly RequestRecord[];
  /** Number of open watch connections. */
  readonly openWatches: number;
  /** Ends every watch, closes every connection and stops listening. */
  stop(): Promise<void>;
}

class RunningServer implements MiniApiServer {
  readonly store: ObjectStore;
  readonly faults: Faults;
  readonly endpointSlices: EndpointSliceController | undefined;
  readonly watches = new Set<WatchStream>();
  private readonly log: RequestRecord[] = [];
  url = '';
  port = 0;
  kubeconfig = '';
  readonly socketPath: string | undefined;
  readonly kubeconfigPath: string | undefined;
  readonly http: Server;
  private stopped = false;

  constructor(readonly options: MiniApiServerOptions) {
    const clock = options.clock ?? realClock;
    this.socketPath = options.socketPath;
    this.kubeconfigPath = options.kubeconfigPath;
    const storeOptions: ConstructorParameters<typeof ObjectStore>[0] = {
      clock,
      ...(options.historySize !== undefined ? { historySize: options.historySize } : {}),
      ...(options.autoCreateNamespaces !== undefined
        ? { autoCreateNamespaces: options.autoCreateNamespaces }
        : {}),
    };
    this.store = new ObjectStore(storeOptions);
    this.faults = new Faults({
      dropWatches: () => this.eachWatch((w) => w.drop()),
      expireWatches: () =>
        this.eachWatch((w) =>
          w.fail({
            kind: 'Status',
            apiVersion: 'v1',
            metadata: {},
            status: 'Failure',
            message: `too old resource version: (${this.store.currentRv})`,
            reason: 'Expired',
            code: 410,
          }),
        ),
      stallWatches: () => this.eachWatch((w) => w.stall()),
      compact: () => this.store.compact(),
    });
    this.endpointSlices = options.endpointSliceController
      ? new EndpointSliceController(this.store)
      : undefined;
    const logSize = options.requestLogSize ?? 1000;
    const logger = options.logger ?? noopLogger;
    const ctx = {
      store: this.store,
      faults: this.faults,
      clock,
      log: logger,
      token: options.token,
      bookmarkIntervalMs: options.bookmarkIntervalMs ?? 60_000,
      watchTimeoutSeconds: () => options.watchTimeoutSeconds ?? 0,
      serverAddress: () => (this.port > 0 ? `${options.host ?? '127.0.0.1'}:${this.port}` : 'localhost'),
      watches: this.watches,
      record: (r: RequestRecord) => {
        if (logSize <= 0) return;
        this.log.push(r);
        if (this.log.length > logSize) this.log.splice(0, this.log.length - logSize);
      },
    };
    this.http = createServer((req, res) => {
      void handleRequest(ctx, req, res);
    });
    this.http.keepAliveTimeout = 65_000;
    this.http.requestTimeout = 0;
  }

  get requests(): readonly RequestRecord[] {
    return this.log;
  }

  get openWatches(): number {
    return this.watches.size;
  }

  private eachWatch(fn: (w: WatchStream) => void): number {
    const all = [...this.watches];
    for (const w of all) fn(w);
    return all.length;
  }

  async listen(): Promise<void> {
    const o = this.options;
    await new Promise<void>((resolve, reject) => {
      this.http.once('error', reject);
      const done = (): void => {
        this.http.off('error', reject);
        resolve();
      };
      if (o.socketPath !== undefined) this.http.listen(o.socketPath, done);
      else this.http.listen(o.port ?? 0, o.host ?? '127.0.0.1', done);
    });
    if (o.socketPath === undefined) {
      const addr = this.http.address() as AddressInfo;
      this.port = addr.port;
      const host = addr.family === 'IPv6' ? `[${addr.address}]` : addr.address;
      this.url = `http://${host}:${addr.port}`;
    } else {
      this.url = 'http://localhost';
    }
    this.kubeconfig = renderKubeconfig({
      server: this.url,
      ...(o.token !== undefined ? { token: o.token } : {}),
    });
    if (o.kubeconfigPath !== undefined) await writeFile(o.kubeconfigPath, this.kubeconfig, { mode: 0o600 });
    this.endpointSlices?.start();
  }

  async stop(): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    this.endpointSlices?.stop();
    for (const w of [...this.watches]) w.end();
    const closed = new Promise<void>((resolve) => this.http.close(() => resolve()));
    this.http.closeAllConnections();
    await closed;
  }
}

/**
 * Starts a mini API server and resolves once it listens.
 *
 * @example
 * ```ts
 * const server = await startMiniApiServer();
 * server.store.create('pods', { metadata: { name: 'web', namespace: 'default' }, spec: { containers: [{ name: 'c', image: 'nginx' }] } });
 * const res = await fetch(`${server.url}/api/v1/namespaces/default/pods`);
 * await server.stop();
 * ```
 */
export async function startMiniApiServer(options: MiniApiServerOptions = {}): Promise<MiniApiServer> {
  const server = new RunningServer(options);
  await server.listen();
  return server;
}
