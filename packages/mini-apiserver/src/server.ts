/**
 * `startMiniApiServer`: an embedded in-memory Kubernetes API server on loopback or a unix
 * socket, with a kubeconfig for clients, store access and fault injection for tests.
 *
 * @module
 */

import { writeFile } from 'node:fs/promises';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import type { Duplex } from 'node:stream';
import { definedFields, InvalidOptionsError, noopLogger, realClock, StartOnce } from '@nodeagent/core';
import { Authenticator, type BearerToken } from './auth.js';
import { EndpointSliceController } from './endpointslice-controller.js';
import { Faults } from './faults.js';
import { handleRequest, handleUpgrade, type RequestRecord } from './handler.js';
import { renderKubeconfig } from './kubeconfig.js';
import { NodeLifecycleController } from './node-lifecycle-controller.js';
import { nodeLifecycleSettings } from './node-lifecycle-options.js';
import type { KubeObject } from './object.js';
import type { PodStreamMode } from './pod-node-proxy.js';
import { RbacAuthorizer } from './rbac.js';
import { bootstrapPolicy } from './rbac-bootstrap.js';
import { MiniScheduler } from './scheduler.js';
import {
  DEFAULT_HEADERS_TIMEOUT_MS,
  DEFAULT_MAX_REQUEST_BODY_BYTES,
  DEFAULT_REQUEST_TIMEOUT_MS,
  type MiniApiServer,
  type MiniApiServerOptions,
  type ServerTls,
} from './server-options.js';
import { ApiDefaulting } from './service-allocation.js';
import { DEFAULT_SERVICE_ACCOUNT_ISSUER, ServiceAccountTokens } from './serviceaccount-token.js';
import { ServiceAccountsController } from './serviceaccounts-controller.js';
import { ObjectStore } from './store.js';
import {
  type CertificateAndKey,
  createSelfSignedTls,
  issueClientCertificate,
  type SelfSignedTls,
  type TlsMaterial,
} from './tls.js';
import type { WatchStream } from './watch-stream.js';

class RunningServer implements MiniApiServer {
  readonly store: ObjectStore;
  readonly faults: Faults;
  readonly endpointSlices: EndpointSliceController | undefined;
  /** The minimal scheduler, when `schedule` is on. */
  readonly scheduler: MiniScheduler | undefined;
  /** The node lifecycle controller, when `nodeLifecycleController` is on. */
  readonly nodeLifecycle: NodeLifecycleController | undefined;
  #defaulting: ApiDefaulting | undefined;
  readonly watches = new Set<WatchStream>();
  readonly #log: RequestRecord[] = [];
  #url = '';
  #port = 0;
  #kubeconfig = '';
  readonly socketPath: string | undefined;
  readonly kubeconfigPath: string | undefined;
  readonly http: Server;
  readonly tls: ServerTls | undefined;
  readonly #auth: Authenticator;
  readonly serviceAccountTokens: ServiceAccountTokens;
  readonly #saController: ServiceAccountsController | undefined;
  readonly #once = new StartOnce('MiniApiServer');
  readonly #generated: SelfSignedTls | undefined;
  #slowClosed = 0;
  readonly #streamCounts = new Map<string, number>();
  /** Upgraded (exec/attach/port-forward) connections, detached from `http`: closed by stop(). */
  readonly #upgraded = new Set<Duplex>();
  #stopped = false;

  constructor(
    readonly options: MiniApiServerOptions,
    tls: TlsMaterial | SelfSignedTls | undefined,
  ) {
    const clock = options.clock ?? realClock;
    this.socketPath = options.socketPath;
    this.kubeconfigPath = options.kubeconfigPath;
    const storeOptions: ConstructorParameters<typeof ObjectStore>[0] = {
      clock,
      ...definedFields({
        historySize: options.historySize,
        historyMaxBytes: options.historyMaxBytes,
        maxObjectBytes: options.maxObjectBytes,
        autoCreateNamespaces: options.autoCreateNamespaces,
      }),
      ...(options.apiDefaulting === false
        ? {}
        : {
            admit: (r: string, o: KubeObject, old: KubeObject | undefined) =>
              this.#defaulting?.apply(r, o, old),
          }),
    };
    this.store = new ObjectStore(storeOptions);
    // --- API defaulting and allocation, scheduler (service-allocation.ts, scheduler.ts) ---
    if (options.apiDefaulting !== false) {
      this.#defaulting = new ApiDefaulting(
        this.store,
        definedFields({ serviceClusterIpRange: options.serviceClusterIpRange }),
      );
      this.store.create('servicecidrs', this.#defaulting.defaultServiceCidr(new Date(clock.now())));
    }
    this.scheduler = options.schedule === true ? new MiniScheduler({ store: this.store, clock }) : undefined;
    const nodeLifecycle = definedFields({
      nodeMonitorPeriodMs: options.nodeMonitorPeriodMs,
      nodeMonitorGracePeriodMs: options.nodeMonitorGracePeriodMs,
      nodeStartupGracePeriodMs: options.nodeStartupGracePeriodMs,
    });
    nodeLifecycleSettings(nodeLifecycle); // bad values are refused even with the controller off
    this.nodeLifecycle =
      options.nodeLifecycleController === true
        ? new NodeLifecycleController({
            store: this.store,
            clock,
            ...nodeLifecycle,
            ...definedFields({ logger: options.logger }),
          })
        : undefined;
    // --- end ---
    this.faults = new Faults({
      dropWatches: () => this.#eachWatch((w) => w.drop()),
      expireWatches: () =>
        this.#eachWatch((w) =>
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
      stallWatches: () => this.#eachWatch((w) => w.stall()),
      compact: () => this.store.compact(),
    });
    this.endpointSlices = options.endpointSliceController
      ? new EndpointSliceController(this.store)
      : undefined;
    const logSize = options.requestLogSize ?? 1000;
    const logger = options.logger ?? noopLogger;
    const requestCert = options.requestCert === true;
    const issuer = options.serviceAccountIssuer ?? DEFAULT_SERVICE_ACCOUNT_ISSUER;
    if (issuer === '')
      throw new InvalidOptionsError('MiniApiServer', 'serviceAccountIssuer must not be empty');
    this.serviceAccountTokens = new ServiceAccountTokens({
      store: this.store,
      clock,
      issuer,
      apiAudiences: [...(options.apiAudiences ?? [issuer])],
      signingKey: options.serviceAccountSigningKey,
      extendExpiration: options.serviceAccountExtendTokenExpiration ?? true,
    });
    this.#auth = new Authenticator(
      [...(options.token !== undefined ? [options.token] : []), ...(options.tokens ?? [])],
      requestCert,
      this.serviceAccountTokens,
    );
    this.#generated = tls && 'caKey' in tls ? tls : undefined;
    this.tls = tls && {
      ca: tls.ca,
      server: { cert: tls.cert, key: tls.key },
      clientCertificate: requestCert ? tls.clientCertificate : undefined,
      requestCert,
    };
    const authorization = options.authorization ?? 'AlwaysAllow';
    if (authorization !== 'AlwaysAllow' && authorization !== 'RBAC') {
      throw new InvalidOptionsError(
        'MiniApiServer',
        `authorization must be 'AlwaysAllow' or 'RBAC', got ${JSON.stringify(authorization)}`,
      );
    }
    if (authorization === 'RBAC') {
      const policy = bootstrapPolicy();
      for (const r of policy.clusterRoles) this.store.create('clusterroles', r);
      for (const b of policy.clusterRoleBindings) this.store.create('clusterrolebindings', b);
    }
    this.#saController =
      options.serviceAccountControllers === false
        ? undefined
        : new ServiceAccountsController(this.store, tls?.ca ?? '', logger);
    this.#saController?.start();
    const ctx = {
      serviceAccountTokens: this.serviceAccountTokens,
      serviceAccountAdmission: options.serviceAccountAdmission ?? true,
      authorizer: authorization === 'RBAC' ? new RbacAuthorizer(this.store) : undefined,
      store: this.store,
      faults: this.faults,
      clock,
      log: logger,
      auth: this.#auth,
      watchBuffer: {
        maxEvents: options.watchBufferMaxEvents ?? 10_000,
        maxBytes: options.watchBufferMaxBytes ?? 64 * 1024 * 1024,
        onOverflow: () => {
          this.#slowClosed++;
          logger.warn({}, 'mini-apiserver: closed a watch whose client does not keep up');
        },
      },
      bookmarkIntervalMs: options.bookmarkIntervalMs ?? 60_000,
      maxRequestBodyBytes: options.maxRequestBodyBytes ?? DEFAULT_MAX_REQUEST_BODY_BYTES,
      requestTimeoutMs: nonNegative(
        'requestTimeoutMs',
        options.requestTimeoutMs ?? DEFAULT_REQUEST_TIMEOUT_MS,
      ),
      watchTimeoutSeconds: () => options.watchTimeoutSeconds ?? 0,
      kubeletClient: options.kubeletClient,
      onPodStream: (mode: PodStreamMode, code: number) => {
        const key = `${mode} ${code}`;
        this.#streamCounts.set(key, (this.#streamCounts.get(key) ?? 0) + 1);
      },
      serverAddress: () => (this.#port > 0 ? `${options.host ?? '127.0.0.1'}:${this.#port}` : 'localhost'),
      watches: this.watches,
      record: (r: RequestRecord) => {
        if (logSize <= 0) return;
        this.#log.push(r);
        if (this.#log.length > logSize) this.#log.splice(0, this.#log.length - logSize);
      },
    };
    const headersTimeout = nonNegative(
      'headersTimeoutMs',
      options.headersTimeoutMs ?? DEFAULT_HEADERS_TIMEOUT_MS,
    );
    // Node checks its header timer every `connectionsCheckingInterval`; a short timeout needs
    // a short interval to be honoured on time.
    const serverOptions = {
      headersTimeout,
      requestTimeout: 0,
      connectionsCheckingInterval: Math.max(10, Math.min(30_000, Math.floor(headersTimeout / 4) || 30_000)),
    };
    const onRequest = (req: IncomingMessage, res: ServerResponse): void => {
      void handleRequest(ctx, req, res);
    };
    this.http = tls
      ? createHttpsServer(
          {
            ...serverOptions,
            cert: tls.cert,
            key: tls.key,
            // Certificates are verified by the handshake but checked per request, so a
            // client without one can still authenticate with a token (like the real server).
            ...(requestCert ? { requestCert: true, rejectUnauthorized: false, ca: tls.ca } : {}),
          },
          onRequest,
        )
      : createServer(serverOptions, onRequest);
    this.http.keepAliveTimeout = 65_000;
    // pods/exec, pods/attach, pods/portforward (pod-node-proxy.ts).
    this.http.on('upgrade', (req: IncomingMessage, socket: Duplex, head: Buffer) => {
      this.#upgraded.add(socket);
      socket.once('close', () => this.#upgraded.delete(socket));
      void handleUpgrade(ctx, req, socket, head);
    });
  }

  get url(): string {
    return this.#url;
  }

  get port(): number {
    return this.#port;
  }

  get kubeconfig(): string {
    return this.#kubeconfig;
  }

  get requests(): readonly RequestRecord[] {
    return this.#log;
  }

  /**
   * Streaming sessions served by translation or tunnelling, counted by `"<mode> <code>"`
   * (`translated 200`, `tunneled 101`, …) — what upstream counts in
   * `apiserver_stream_translator_requests_total` / `apiserver_stream_tunnel_requests_total`.
   */
  get podStreamCounts(): ReadonlyMap<string, number> {
    return this.#streamCounts;
  }

  get openWatches(): number {
    return this.watches.size;
  }

  get slowWatchesClosed(): number {
    return this.#slowClosed;
  }

  get tokens(): readonly BearerToken[] {
    return this.#auth.tokenList;
  }

  setTokens(tokens: ReadonlyArray<string | BearerToken>): void {
    this.#auth.setTokens(tokens);
  }

  issueClientCertificate(
    commonName: string,
    organizations: readonly string[] = [],
  ): Promise<CertificateAndKey> {
    if (!this.#generated) {
      return Promise.reject(
        new InvalidOptionsError(
          'MiniApiServer',
          "issueClientCertificate needs tls: 'self-signed' (the CA key)",
        ),
      );
    }
    return issueClientCertificate(this.#generated, {
      commonName,
      organizations,
      ...definedFields({ opensslPath: this.options.opensslPath }),
    });
  }

  #eachWatch(fn: (w: WatchStream) => void): number {
    const all = [...this.watches];
    for (const w of all) fn(w);
    return all.length;
  }

  /** Listens; resolves once it does (`signal` bounds that wait). Called once by {@link startMiniApiServer}. */
  start(signal?: AbortSignal): Promise<void> {
    return this.#once.run(
      signal,
      () => this.#listen(),
      () => this.stop(),
    );
  }

  async #listen(): Promise<void> {
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
      this.#port = addr.port;
      const host = addr.family === 'IPv6' ? `[${addr.address}]` : addr.address;
      this.#url = `${this.tls ? 'https' : 'http'}://${host}:${addr.port}`;
    } else {
      this.#url = this.tls ? 'https://localhost' : 'http://localhost';
    }
    const token = o.token ?? this.#auth.tokenList[0]?.token;
    this.#kubeconfig = renderKubeconfig({
      server: this.#url,
      ...definedFields({
        token,
        certificateAuthority: this.tls?.ca,
        clientCertificate: this.tls?.clientCertificate,
      }),
    });
    if (o.kubeconfigPath !== undefined) await writeFile(o.kubeconfigPath, this.#kubeconfig, { mode: 0o600 });
    await this.endpointSlices?.start();
    this.scheduler?.start();
    this.nodeLifecycle?.start();
  }

  async stop(): Promise<void> {
    if (this.#stopped) return;
    this.#stopped = true;
    await this.endpointSlices?.stop();
    this.scheduler?.stop();
    this.nodeLifecycle?.stop();
    this.#saController?.stop();
    for (const w of [...this.watches]) w.end();
    for (const s of this.#upgraded) s.destroy();
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
  const server = new RunningServer(options, await resolveTls(options));
  await server.start();
  return server;
}

function nonNegative(field: string, value: number): number {
  if (!Number.isFinite(value) || value < 0) {
    throw new InvalidOptionsError('MiniApiServer', `${field} must be a finite number >= 0, got ${value}`);
  }
  return value;
}

const WILDCARD_HOSTS = new Set(['0.0.0.0', '::', '']);

async function resolveTls(o: MiniApiServerOptions): Promise<TlsMaterial | SelfSignedTls | undefined> {
  if (o.tls === undefined) {
    if (o.requestCert) throw new InvalidOptionsError('MiniApiServer', 'requestCert needs tls');
    return undefined;
  }
  if (o.tls !== 'self-signed') {
    if (typeof o.tls.cert !== 'string' || typeof o.tls.key !== 'string')
      throw new InvalidOptionsError(
        'MiniApiServer',
        'tls needs PEM strings { cert, key } or the value "self-signed"',
      );
    if (o.requestCert && o.tls.ca === undefined)
      throw new InvalidOptionsError(
        'MiniApiServer',
        'requestCert needs tls.ca to verify client certificates',
      );
    return o.tls;
  }
  const hosts = ['127.0.0.1', '::1', 'localhost'];
  if (o.host !== undefined && !WILDCARD_HOSTS.has(o.host) && !hosts.includes(o.host)) hosts.push(o.host);
  return createSelfSignedTls({
    hosts,
    ...definedFields({
      clientCommonName: o.requestCert ? (o.clientCertificateUser ?? 'mini-apiserver-admin') : undefined,
      opensslPath: o.opensslPath,
    }),
  });
}
