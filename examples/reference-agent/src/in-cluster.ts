/**
 * In-cluster configuration, as client-go's `rest.InClusterConfig`: when the agent runs in a pod
 * (a DaemonSet) and no `--kubeconfig` is given, the API server is
 * `https://$KUBERNETES_SERVICE_HOST:$KUBERNETES_SERVICE_PORT`, the CA is the service account's
 * `ca.crt` and the credential its `token`, re-read from the file every minute (client-go's
 * cached token source; `@kubernetes/client-node`'s `tokenFile` auth provider has the same
 * period), so a rotated projected token is picked up.
 *
 * Upstream's kubelet itself never does this (without a kubeconfig it runs standalone); kube-proxy
 * does, and so does this agent, which is meant to run as a DaemonSet too.
 *
 * @module
 */
import { readFileSync } from 'node:fs';
import net from 'node:net';
import { join } from 'node:path';
import { KubeConfig } from '@kubernetes/client-node';
import { type Logger, noopLogger } from '@nodeagent/core';

/** Where a pod's service account token, CA and namespace are mounted. */
export const SERVICE_ACCOUNT_DIR = '/var/run/secrets/kubernetes.io/serviceaccount';

/** client-go's `ErrNotInCluster` message. */
export const NOT_IN_CLUSTER_MESSAGE =
  'unable to load in-cluster configuration, KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT must be defined';

/** The in-cluster configuration cannot be built: not in a pod, or no token. */
export class InClusterConfigError extends Error {
  override readonly name = 'InClusterConfigError';
}

/** Options of {@link inClusterKubeConfig}. */
export interface InClusterOptions {
  /** The environment. @default process.env */
  readonly env?: Readonly<Record<string, string | undefined>>;
  /** The service account directory (tests). @default {@link SERVICE_ACCOUNT_DIR} */
  readonly serviceAccountDir?: string;
  /** Where a CA that cannot be loaded is reported. @default noopLogger */
  readonly logger?: Logger;
}

/** Whether the environment names an in-cluster API server (both variables set and non-empty). */
export function isInCluster(env: Readonly<Record<string, string | undefined>> = process.env): boolean {
  return (env.KUBERNETES_SERVICE_HOST ?? '') !== '' && (env.KUBERNETES_SERVICE_PORT ?? '') !== '';
}

/**
 * The client configuration of `rest.InClusterConfig`: always HTTPS, the token file as bearer
 * token (read now, so a missing token fails at start, and again every minute), the CA file when
 * it loads (otherwise an error is logged and the system roots are used, as client-go does).
 * @throws InClusterConfigError
 */
export function inClusterKubeConfig(options: InClusterOptions = {}): KubeConfig {
  const env = options.env ?? process.env;
  const dir = options.serviceAccountDir ?? SERVICE_ACCOUNT_DIR;
  const log = options.logger ?? noopLogger;
  const host = env.KUBERNETES_SERVICE_HOST ?? '';
  const port = env.KUBERNETES_SERVICE_PORT ?? '';
  if (host === '' || port === '') throw new InClusterConfigError(NOT_IN_CLUSTER_MESSAGE);
  const tokenFile = join(dir, 'token');
  try {
    readFileSync(tokenFile);
  } catch (err) {
    throw new InClusterConfigError(
      `open ${tokenFile}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`,
    );
  }
  const caFile = join(dir, 'ca.crt');
  let caLoaded = false;
  try {
    caLoaded = /-----BEGIN CERTIFICATE-----/.test(readFileSync(caFile, 'utf8'));
    if (!caLoaded) throw new Error('data does not contain any valid RSA or ECDSA certificates');
  } catch (err) {
    log.error({ err, caFile }, `Expected to load root CA config from ${caFile}, but got err`);
  }
  const server = `https://${net.isIPv6(host) ? `[${host}]` : host}:${port}`;
  const kc = new KubeConfig();
  kc.loadFromClusterAndUser(
    { name: 'inCluster', server, skipTLSVerify: false, ...(caLoaded ? { caFile } : {}) },
    { name: 'inClusterUser', authProvider: { name: 'tokenFile', config: { tokenFile } } },
  );
  return kc;
}
