/**
 * Kubeconfig generation for clients of the mini API server.
 *
 * @module
 */

/** Inputs of {@link renderKubeconfig}. */
export interface KubeconfigOptions {
  /** Server URL, e.g. `http://127.0.0.1:6443`. */
  readonly server: string;
  /** Bearer token for the user entry (omitted when undefined). */
  readonly token?: string;
  /** PEM CA certificate(s) of an https server, written as `certificate-authority-data`. */
  readonly certificateAuthority?: string;
  /** PEM client certificate and key, written as `client-certificate-data` / `client-key-data`. */
  readonly clientCertificate?: { readonly cert: string; readonly key: string };
  /**
   * Name of the cluster, user and context entries.
   * @default 'mini-apiserver'
   */
  readonly name?: string;
  /**
   * Namespace of the context.
   * @default 'default'
   */
  readonly namespace?: string;
}

/** Renders a kubeconfig (YAML-compatible JSON, which kubectl and client-node both read). */
export function renderKubeconfig(options: KubeconfigOptions): string {
  const name = options.name ?? 'mini-apiserver';
  const b64 = (pem: string): string => Buffer.from(pem, 'utf8').toString('base64');
  const user: Record<string, string> = {};
  if (options.token !== undefined) user.token = options.token;
  if (options.clientCertificate !== undefined) {
    user['client-certificate-data'] = b64(options.clientCertificate.cert);
    user['client-key-data'] = b64(options.clientCertificate.key);
  }
  const cluster: Record<string, string | boolean> = { server: options.server };
  // client-node refuses plain http with credentials unless skip-TLS-verify is set; there
  // is no TLS to verify on an http server, so the flag changes nothing else. An https
  // server is always verified.
  if (options.server.startsWith('http:')) cluster['insecure-skip-tls-verify'] = true;
  if (options.certificateAuthority !== undefined)
    cluster['certificate-authority-data'] = b64(options.certificateAuthority);
  const doc = {
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [{ name, cluster }],
    users: [{ name, user }],
    contexts: [{ name, context: { cluster: name, user: name, namespace: options.namespace ?? 'default' } }],
    'current-context': name,
    preferences: {},
  };
  return `${JSON.stringify(doc, null, 2)}\n`;
}
