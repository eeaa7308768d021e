/**
 * What test authors need to run code against a mini API server: {@link startTestApiServer}
 * starts one on a free port with its kubeconfig written to a temp file (for `KUBECONFIG`
 * or `KubeConfig.loadFromFile`), and removes the file on {@link TestApiServer.stop}.
 *
 * @example
 * ```ts
 * import { startTestApiServer } from '@nodeagent/mini-apiserver/testing';
 *
 * const api = await startTestApiServer();
 * process.env.KUBECONFIG = api.kubeconfigPath; // or new KubeConfig().loadFromFile(api.kubeconfigPath)
 * api.server.store.create('pods', { metadata: { name: 'web', namespace: 'default' }, spec: { containers: [] } });
 * // … run the code under test …
 * await api.stop();
 * ```
 *
 * @packageDocumentation
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startMiniApiServer } from './server.js';
import type { MiniApiServer, MiniApiServerOptions } from './server-options.js';

/** A started mini API server with its kubeconfig on disk. */
export interface TestApiServer {
  /** The server (store, faults, request log, ...). */
  readonly server: MiniApiServer;
  /** Base URL, e.g. `http://127.0.0.1:40123`. */
  readonly url: string;
  /** The kubeconfig file (a temp file, removed by {@link TestApiServer.stop}). */
  readonly kubeconfigPath: string;
  /** The kubeconfig's text. */
  readonly kubeconfig: string;
  /** `{ KUBECONFIG: kubeconfigPath }`, to merge into a child process's environment. */
  readonly env: { readonly KUBECONFIG: string };
  /** Stops the server and removes the kubeconfig's temp directory. Idempotent. */
  stop(): Promise<void>;
}

/**
 * Starts a mini API server (any {@link MiniApiServerOptions} except `kubeconfigPath`,
 * which it chooses) and writes its kubeconfig to a fresh temp directory.
 */
export async function startTestApiServer(
  options: Omit<MiniApiServerOptions, 'kubeconfigPath'> = {},
): Promise<TestApiServer> {
  const dir = await mkdtemp(join(tmpdir(), 'mini-apiserver-'));
  const kubeconfigPath = join(dir, 'kubeconfig');
  let server: MiniApiServer;
  try {
    server = await startMiniApiServer({ ...options, kubeconfigPath });
  } catch (error) {
    await rm(dir, { recursive: true, force: true });
    throw error;
  }
  let stopped: Promise<void> | undefined;
  return {
    server,
    url: server.url,
    kubeconfigPath,
    kubeconfig: server.kubeconfig,
    env: { KUBECONFIG: kubeconfigPath },
    stop: () => {
      stopped ??= server.stop().finally(() => rm(dir, { recursive: true, force: true }));
      return stopped;
    },
  };
}
