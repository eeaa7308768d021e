/**
 * Options of {@link KubeletServer} and the small contracts it serves from: the pods it knows
 * (the pod manager), the CRI runtime (log paths, exec/attach/port-forward URLs) and the
 * metric and summary providers the agent injects.
 *
 * @module
 */
import type { Clock, Logger } from '@nodeagent/core';
import type { RuntimeServiceApi } from '@nodeagent/cri';
import type { SummaryProvider } from '@nodeagent/stats';
import type { RequestAuthenticator } from './authn.js';
import type { Authorizer } from './authz.js';
import type { HealthCheck } from './healthz.js';
import type { ServingCertificate } from './serving-cert.js';
import type { StreamingDialer } from './stream-proxy.js';

/** A container as the kubelet server reads it from a pod spec. */
export interface KubeletPodContainer {
  /** Container name. */
  readonly name: string;
  /** Image reference. */
  readonly image?: string;
}

/** A container status as the kubelet server reads it from a pod status. */
export interface KubeletPodContainerStatus {
  /** Container name. */
  readonly name: string;
  /** `<runtime>://<id>` of the current instance. */
  readonly containerID?: string;
  /** Current state. */
  readonly state?: {
    readonly running?: object;
    readonly terminated?: { readonly containerID?: string };
    readonly waiting?: { readonly reason?: string };
  };
  /** Previous instance's state. */
  readonly lastState?: { readonly terminated?: { readonly containerID?: string } };
}

/** The pod fields the kubelet server reads (a `V1Pod` fits). */
export interface KubeletPod {
  /** Object metadata. */
  readonly metadata?: { readonly name?: string; readonly namespace?: string; readonly uid?: string };
  /** Spec: the containers. */
  readonly spec?: {
    readonly containers?: readonly KubeletPodContainer[];
    readonly initContainers?: readonly KubeletPodContainer[];
    readonly ephemeralContainers?: readonly KubeletPodContainer[];
  };
  /** Status: the container statuses. */
  readonly status?: {
    readonly containerStatuses?: readonly KubeletPodContainerStatus[];
    readonly initContainerStatuses?: readonly KubeletPodContainerStatus[];
    readonly ephemeralContainerStatuses?: readonly KubeletPodContainerStatus[];
  };
}

/** The kubelet's view of its pods (its pod manager). */
export interface KubeletServerHost {
  /** Every pod bound to this node, as the API knows it (`/pods`). */
  getPods(): readonly KubeletPod[];
  /** One pod by namespace and name. */
  getPodByName(namespace: string, name: string): KubeletPod | undefined;
}

/** The CRI calls the server makes. */
export type KubeletServerRuntime = Pick<
  RuntimeServiceApi,
  'containerStatus' | 'exec' | 'attach' | 'portForward' | 'listPodSandbox' | 'listContainers'
>;

/** A source of Prometheus text (a prom-client `Registry` fits). */
export interface MetricsTextProvider {
  /** The exposition `Content-Type`. @default 'text/plain; version=0.0.4; charset=utf-8' */
  readonly contentType?: string;
  /** Renders the metrics. */
  metrics(): Promise<string>;
}

/** Options of {@link KubeletServer}. */
export interface KubeletServerOptions {
  /** This node's name (the `nodes/<name>` of authorization). */
  readonly nodeName: string;
  /** The pods. */
  readonly host: KubeletServerHost;
  /** The CRI runtime service. */
  readonly runtime: KubeletServerRuntime;
  /** `--address`. @default '0.0.0.0' */
  readonly address?: string;
  /**
   * Serve the authenticated API on `port` (the kubelet's `--enable-server`). False leaves only
   * the read-only and healthz servers, as the kubelet does. @default true
   */
  readonly enableServer?: boolean;
  /** `--port`; 0: any free port. @default 10250 */
  readonly port?: number;
  /** `--read-only-port`; `undefined` disables it (the kubelet's 0), 0 here picks any free port. @default disabled */
  readonly readOnlyPort?: number;
  /** `--healthz-port`; `undefined` disables it, 0 picks any free port. @default disabled */
  readonly healthzPort?: number;
  /** `--healthz-bind-address`. @default '127.0.0.1' */
  readonly healthzBindAddress?: string;
  /** Serving certificate (`--tls-cert-file`/`--tls-private-key-file`); generated self-signed when absent. */
  readonly tls?: ServingCertificate;
  /** `--cert-dir` for the generated certificate. @default none */
  readonly certDir?: string;
  /** `--client-ca-file` content (PEM): client certificates it signed authenticate. @default none */
  readonly clientCa?: string;
  /** Authentication. @default anonymous only (the kubelet's `--anonymous-auth=true` default), plus x509 with `clientCa` */
  readonly authenticator?: RequestAuthenticator;
  /** Authorization. @default AlwaysAllow (the kubelet's `--authorization-mode` default) */
  readonly authorizer?: Authorizer;
  /** `KubeletFineGrainedAuthz`: check `nodes/pods` / `nodes/healthz` / `nodes/configz` before `nodes/proxy`. @default true */
  readonly fineGrainedAuthz?: boolean;
  /** Extra `/healthz` checks besides `ping` and `log` (e.g. `syncloop`, `pleg`). @default none */
  readonly healthChecks?: Readonly<Record<string, HealthCheck>>;
  /** `/metrics`: the agent's registry. */
  readonly metrics?: MetricsTextProvider;
  /** `/metrics/cadvisor`. */
  readonly cadvisorMetrics?: MetricsTextProvider;
  /** `/metrics/resource`. */
  readonly resourceMetrics?: MetricsTextProvider;
  /** `/metrics/probes`. */
  readonly probeMetrics?: MetricsTextProvider;
  /** `/stats/summary`. */
  readonly summary?: SummaryProvider;
  /**
   * Opens connections to the runtime's streaming server (e.g. into another network
   * namespace). @default TCP/TLS to the URL's host and port
   */
  readonly streamingDialer?: StreamingDialer;
  /** How often a followed log is checked for new lines, ms. @default 250 */
  readonly logPollMs?: number;
  /** @default realClock */
  readonly clock?: Clock;
  /** @default noopLogger */
  readonly logger?: Logger;
}
