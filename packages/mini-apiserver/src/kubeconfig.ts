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
  const user: Record<string, string> = {};
  if (options.token !== undefined) user.token = options.token;
  const doc = {
    apiVersion: 'v1',
    kind: 'Config',
    // client-node refuses plain http with credentials unless skip-TLS-verify is set; there
    // is no TLS to verify on an http server, so the flag changes nothing else.
    clusters: [
      {
        name,
        cluster: options.server.startsWith('http:')
          ? { server: options.server, 'insecure-skip-tls-verify': true }
          : { server: options.server },
      },
    ],
    users: [{ name, user }],
    contexts: [{ name, context: { cluster: name, user: name, namespace: options.namespace ?? 'default' } }],
    'current-context': name,
    preferences: {},
  };
  return `${JSON.stringify(doc, null, 2)}\n`;
}
