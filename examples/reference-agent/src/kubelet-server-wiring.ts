/**
 * The agent's kubelet API (`@nodeagent/kubelet-server`): the kubelet's flags (`--port`,
 * `--read-only-port`, `--healthz-port`, `--healthz-bind-address`, `--address`,
 * `--tls-cert-file`, `--tls-private-key-file`, `--client-ca-file`,
 * `--authentication-token-webhook`, `--anonymous-auth`, `--authorization-mode`), the server
 * over the agent's pods (spec from the pod sources, status as the agent reports it) and CRI
 * runtime, and — for the embedded API server — the client certificate it uses to reach the
 * kubelet (signed by a CA the kubelet trusts as its client CA).
 *
 * @module
 */
import { readFileSync } from 'node:fs';
import type { KubeConfig, V1Pod, V1PodStatus } from '@kubernetes/client-node';
import type { Clock, Logger } from '@nodeagent/core';
import type { CriClient } from '@nodeagent/cri';
import {
  type ApiPoster,
  type ApiServerConnection,
  type Authorizer,
  alwaysAllowAuthorizer,
  createApiPoster,
  type HealthCheck,
  type KubeletPod,
  KubeletServer,
  type MetricsTextProvider,
  RequestAuthenticator,
  SubjectAccessReviewAuthorizer,
  TokenReviewAuthenticator,
} from '@nodeagent/kubelet-server';
import {
  createSelfSignedTls,
  issueClientCertificate,
  type KubeletClientOptions,
} from '@nodeagent/mini-apiserver';
import type { SummaryProvider } from '@nodeagent/stats';
import type { ApiClient } from './api-client.js';

/** The kubelet server flags, parsed. */
export interface KubeletServerSettings {
  /** `--address`. @default '0.0.0.0' */
  readonly address: string;
  /** `--port`. @default 10250 */
  readonly port: number;
  /** `--read-only-port` (0: off). @default 0 */
  readonly readOnlyPort: number;
  /** `--healthz-port` (0: off). @default 10248 */
  readonly healthzPort: number;
  /** `--healthz-bind-address`. @default '127.0.0.1' */
  readonly healthzBindAddress: string;
  /** `--tls-cert-file`. */
  readonly tlsCertFile: string | undefined;
  /** `--tls-private-key-file`. */
  readonly tlsPrivateKeyFile: string | undefined;
  /** `--client-ca-file`. */
  readonly clientCaFile: string | undefined;
  /** `--authentication-token-webhook`. @default false */
  readonly authenticationTokenWebhook: boolean;
  /** `--anonymous-auth`. @default true */
  readonly anonymousAuth: boolean;
  /** `--authorization-mode`. @default 'AlwaysAllow' */
  readonly authorizationMode: 'AlwaysAllow' | 'Webhook';
  /** `--enable-server`: the API on `port` (node-tuning-wiring.ts); false leaves the read-only and healthz ports. @default true */
  readonly enableServer?: boolean;
  /** When `--port` is taken, listen on a free port instead (embedded demo only). @default false */
  readonly fallbackToFreePort?: boolean;
}

/** The `parseArgs` options of the kubelet server flags (merged into the agent's). */
export const KUBELET_SERVER_FLAG_OPTIONS = {
  address: { type: 'string' },
  port: { type: 'string' },
  'read-only-port': { type: 'string' },
  'healthz-port': { type: 'string' },
  'healthz-bind-address': { type: 'string' },
  'tls-cert-file': { type: 'string' },
  'tls-private-key-file': { type: 'string' },
  'client-ca-file': { type: 'string' },
  'authentication-token-webhook': { type: 'string' },
  'anonymous-auth': { type: 'string' },
  'authorization-mode': { type: 'string' },
} as const;

/** Usage lines of the kubelet server flags. */
export const KUBELET_SERVER_USAGE = `  --address IP                   kubelet API bind address (default 0.0.0.0)
  --port PORT                    kubelet API HTTPS port (default 10250)
  --read-only-port PORT          unauthenticated read-only port (default 0: off)
  --healthz-port PORT            /healthz port (default 10248, 0: off)
  --healthz-bind-address IP      /healthz bind address (default 127.0.0.1)
  --tls-cert-file PATH           serving certificate (default: self-signed)
  --tls-private-key-file PATH    serving key
  --client-ca-file PATH          CA of the client certificates the kubelet API accepts
  --authentication-token-webhook[=true|false]
                                 authenticate bearer tokens with TokenReview (default false)
  --anonymous-auth=true|false    let unauthenticated requests in as system:anonymous (default true)
  --authorization-mode MODE      AlwaysAllow or Webhook (SubjectAccessReview) (default AlwaysAllow)
`;

function port(name: string, v: string | undefined, dflt: number): number {
  if (v === undefined) return dflt;
  const n = Number(v);
  if (v.trim() === '' || !Number.isInteger(n) || n < 0 || n > 65535) {
    throw new Error(`--${name}: expected a port 0-65535, got "${v}"`);
  }
  return n;
}

function bool(name: string, v: string | boolean | undefined, dflt: boolean): boolean {
  if (v === undefined) return dflt;
  if (v === true || v === '' || v === 'true') return true;
  if (v === false || v === 'false') return false;
  throw new Error(`--${name}: expected true or false, got "${String(v)}"`);
}

/** Go bool flags that may be given bare (`--anonymous-auth` = `--anonymous-auth=true`). */
export const KUBELET_SERVER_BOOL_FLAGS: readonly string[] = [
  '--authentication-token-webhook',
  '--anonymous-auth',
];

/** Reads the kubelet server flags from `parseArgs` values. @throws Error naming the bad flag */
export function parseKubeletServerFlags(
  values: Readonly<Record<string, string | boolean | undefined | string[]>>,
): KubeletServerSettings {
  const s = (name: string): string | undefined => {
    const v = values[name];
    return typeof v === 'string' ? v : undefined;
  };
  const mode = s('authorization-mode') ?? 'AlwaysAllow';
  if (mode !== 'AlwaysAllow' && mode !== 'Webhook') {
    throw new Error(`--authorization-mode: expected AlwaysAllow or Webhook, got "${mode}"`);
  }
  const cert = s('tls-cert-file');
  const key = s('tls-private-key-file');
  if ((cert === undefined) !== (key === undefined)) {
    throw new Error('--tls-cert-file and --tls-private-key-file go together');
  }
  return {
    address: s('address') ?? '0.0.0.0',
    port: port('port', s('port'), 10250),
    readOnlyPort: port('read-only-port', s('read-only-port'), 0),
    healthzPort: port('healthz-port', s('healthz-port'), 10248),
    healthzBindAddress: s('healthz-bind-address') ?? '127.0.0.1',
    tlsCertFile: cert,
    tlsPrivateKeyFile: key,
    clientCaFile: s('client-ca-file'),
    authenticationTokenWebhook: bool(
      'authentication-token-webhook',
      s('authentication-token-webhook'),
      false,
    ),
    anonymousAuth: bool('anonymous-auth', s('anonymous-auth'), true),
    authorizationMode: mode,
  };
}

/** The embedded API server's kubelet client: a throwaway CA (the kubelet's client CA) and a certificate it signed. */
export interface EmbeddedKubeletClient {
  /** For `startMiniApiServer({ kubeletClient })`. */
  readonly client: KubeletClientOptions;
  /** PEM CA for the kubelet server's `clientCa`. */
  readonly clientCa: string;
}

/** Makes {@link EmbeddedKubeletClient} (CN `kube-apiserver-kubelet-client`, as kubeadm names it). */
export async function createEmbeddedKubeletClient(): Promise<EmbeddedKubeletClient> {
  const ca = await createSelfSignedTls({ hosts: ['127.0.0.1'] });
  const cert = await issueClientCertificate(ca, { commonName: 'kube-apiserver-kubelet-client' });
  return { client: { cert: cert.cert, key: cert.key }, clientCa: ca.ca };
}

/** The API server connection of a kubeconfig's current context (token or client certificate). */
export function apiConnectionOf(kc: KubeConfig): ApiServerConnection {
  const cluster = kc.getCurrentCluster();
  const user = kc.getCurrentUser();
  if (!cluster) throw new Error('kubeconfig has no current cluster');
  const pem = (data: string | undefined, file: string | undefined): string | undefined =>
    data ? Buffer.from(data, 'base64').toString('utf8') : file ? readFileSync(file, 'utf8') : undefined;
  const ca = pem(cluster.caData, cluster.caFile);
  const cert = pem(user?.certData, user?.certFile);
  const key = pem(user?.keyData, user?.keyFile);
  return {
    server: cluster.server,
    ...(ca !== undefined ? { ca } : {}),
    ...(cert !== undefined ? { cert } : {}),
    ...(key !== undefined ? { key } : {}),
    ...(user?.token ? { token: user.token } : {}),
  };
}

/** What {@link startKubeletServer} needs from the agent. */
export interface KubeletServerDeps {
  readonly settings: KubeletServerSettings;
  readonly nodeName: string;
  readonly kubeConfig: KubeConfig;
  /**
   * The agent's API client: the webhook reviews (`TokenReview`, `SubjectAccessReview`) go
   * through it, so they take `--kube-api-qps` tokens and are counted in `rest_client_*`, as
   * the kubelet's go through its client. @default a poster of its own on `kubeConfig`
   */
  readonly api?: ApiClient | undefined;
  readonly cri: CriClient;
  /** The desired pods (pod sources). */
  readonly pods: () => readonly V1Pod[];
  /** The status the agent reports for a pod. */
  readonly podStatus: (uid: string) => V1PodStatus | undefined;
  /** `/healthz` checks besides ping and log. */
  readonly healthChecks: Readonly<Record<string, HealthCheck>>;
  /** The client CA when none is given by flag (the embedded API server's). */
  readonly clientCa?: string | undefined;
  /** `/metrics`. */
  readonly metrics?: MetricsTextProvider | undefined;
  /** `/metrics/probes`. */
  readonly probeMetrics?: MetricsTextProvider | undefined;
  /** `/stats/summary`. */
  readonly summary?: SummaryProvider | undefined;
  /** `/metrics/resource`. */
  readonly resourceMetrics?: MetricsTextProvider | undefined;
  /** `/metrics/cadvisor`. */
  readonly cadvisorMetrics?: MetricsTextProvider | undefined;
  readonly clock: Clock;
  readonly logger: Logger;
}

function withReportedStatus(deps: KubeletServerDeps): () => KubeletPod[] {
  return () =>
    deps.pods().map((p) => {
      const status = deps.podStatus(p.metadata?.uid ?? '');
      return (status === undefined ? p : { ...p, status }) as KubeletPod;
    });
}

/** Builds and starts the kubelet server; resolves once it listens. */
export async function startKubeletServer(deps: KubeletServerDeps): Promise<KubeletServer> {
  const { settings } = deps;
  const clientCa =
    settings.clientCaFile !== undefined ? readFileSync(settings.clientCaFile, 'utf8') : deps.clientCa;
  const needsApi = settings.authenticationTokenWebhook || settings.authorizationMode === 'Webhook';
  const api = deps.api;
  const post: ApiPoster | undefined = !needsApi
    ? undefined
    : api !== undefined
      ? (path, body, signal) =>
          // createApiPoster's 10 s bound; unlike client-go's, it includes the rate limiter's wait.
          api.create(
            path,
            body,
            signal ? AbortSignal.any([signal, AbortSignal.timeout(10_000)]) : AbortSignal.timeout(10_000),
          )
      : createApiPoster(apiConnectionOf(deps.kubeConfig));
  const authorizer: Authorizer =
    settings.authorizationMode === 'Webhook' && post !== undefined
      ? new SubjectAccessReviewAuthorizer({ post, clock: deps.clock })
      : alwaysAllowAuthorizer;
  const authenticator = new RequestAuthenticator({
    x509: clientCa !== undefined,
    anonymous: settings.anonymousAuth,
    ...(settings.authenticationTokenWebhook && post !== undefined
      ? { tokens: new TokenReviewAuthenticator({ post, clock: deps.clock }) }
      : {}),
  });
  if (
    settings.anonymousAuth &&
    settings.authorizationMode === 'AlwaysAllow' &&
    !/^127\./.test(settings.address)
  ) {
    deps.logger.warn(
      { address: settings.address, port: settings.port },
      'Kubelet API: anonymous requests are allowed everything (--anonymous-auth=true, --authorization-mode=AlwaysAllow, the kubelet flag defaults): anyone who reaches this address can read logs and exec into containers',
    );
  }
  const pods = withReportedStatus(deps);
  const make = (free: boolean): KubeletServer =>
    new KubeletServer({
      nodeName: deps.nodeName,
      host: {
        getPods: pods,
        getPodByName: (ns, name) =>
          pods().find((x) => x.metadata?.namespace === ns && x.metadata?.name === name),
      },
      runtime: deps.cri.runtime,
      address: settings.address,
      ...(settings.enableServer === false ? { enableServer: false } : {}),
      port: free ? 0 : settings.port,
      ...(settings.readOnlyPort > 0 ? { readOnlyPort: free ? 0 : settings.readOnlyPort } : {}),
      ...(settings.healthzPort > 0 ? { healthzPort: free ? 0 : settings.healthzPort } : {}),
      healthzBindAddress: settings.healthzBindAddress,
      ...(settings.tlsCertFile !== undefined && settings.tlsPrivateKeyFile !== undefined
        ? {
            tls: {
              cert: readFileSync(settings.tlsCertFile, 'utf8'),
              key: readFileSync(settings.tlsPrivateKeyFile, 'utf8'),
            },
          }
        : {}),
      ...(clientCa !== undefined ? { clientCa } : {}),
      authenticator,
      authorizer,
      healthChecks: deps.healthChecks,
      ...(deps.metrics !== undefined ? { metrics: deps.metrics } : {}),
      ...(deps.probeMetrics !== undefined ? { probeMetrics: deps.probeMetrics } : {}),
      ...(deps.summary !== undefined ? { summary: deps.summary } : {}),
      ...(deps.resourceMetrics !== undefined ? { resourceMetrics: deps.resourceMetrics } : {}),
      ...(deps.cadvisorMetrics !== undefined ? { cadvisorMetrics: deps.cadvisorMetrics } : {}),
      clock: deps.clock,
      logger: deps.logger,
    });
  let server = make(false);
  try {
    await server.start();
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EADDRINUSE' || settings.fallbackToFreePort !== true)
      throw err;
    deps.logger.warn(
      { port: settings.port },
      'Kubelet ports in use: the embedded demo listens on free ports instead',
    );
    await server.stop();
    server = make(true);
    await server.start();
  }
  return server;
}
