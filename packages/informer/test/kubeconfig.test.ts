/**
 * kubeconfig features a user expects, through client-node's `KubeConfig` loaded from YAML as
 * `kubectl` would read it, against the HTTPS mini-apiserver: an exec credential plugin (a
 * script printing an ExecCredential), token files, and `proxy-url` through a local HTTP
 * CONNECT proxy started by the test.
 */
import { chmod, mkdtemp, rm, writeFile } from 'node:fs/promises';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { KubeConfig } from '@kubernetes/client-node';
import { afterEach, beforeEach, describe, expect, test } from 'vitest';
import { type MiniApiServer, startMiniApiServer } from '../../mini-apiserver/src/index.js';
import { RestListerWatcher, SharedInformer } from '../src/index.js';

let dir: string;
let server: MiniApiServer | undefined;
let informer: SharedInformer | undefined;
let lw: RestListerWatcher | undefined;
let proxy: http.Server | undefined;
/** The proxy's tunnel sockets: a CONNECT socket is no longer the HTTP server's to close. */
const tunnelSockets = new Set<net.Socket>();

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'informer-kubeconfig-'));
});
afterEach(async () => {
  await informer?.stop();
  informer = undefined;
  lw?.close();
  lw = undefined;
  await server?.stop();
  server = undefined;
  if (proxy) {
    proxy.closeAllConnections();
    for (const socket of tunnelSockets) socket.destroy();
    tunnelSockets.clear();
    await new Promise<void>((r) => proxy?.close(() => r()));
    proxy = undefined;
  }
  await rm(dir, { recursive: true, force: true });
});

async function startServer(token: string, user: string): Promise<MiniApiServer> {
  const s = await startMiniApiServer({ tls: 'self-signed', tokens: [{ token, user }] });
  s.store.create('pods', {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: 'web', namespace: 'default' },
    spec: { containers: [{ name: 'c', image: 'busybox' }] },
  } as never);
  return s;
}

/** A kubeconfig as kubectl reads it: the cluster with its CA and `extra` cluster fields, and `userYaml`. */
function kubeconfigYaml(s: MiniApiServer, userYaml: string, clusterExtra = ''): string {
  const ca = Buffer.from(s.tls?.ca ?? '').toString('base64');
  return [
    'apiVersion: v1',
    'kind: Config',
    'clusters:',
    '- name: mini',
    '  cluster:',
    `    server: ${s.url}`,
    `    certificate-authority-data: ${ca}`,
    ...(clusterExtra ? [`    ${clusterExtra}`] : []),
    'users:',
    '- name: me',
    '  user:',
    ...userYaml.split('\n').map((l) => `    ${l}`),
    'contexts:',
    '- name: ctx',
    '  context: { cluster: mini, user: me }',
    'current-context: ctx',
    '',
  ].join('\n');
}

async function syncWith(kc: KubeConfig): Promise<SharedInformer> {
  lw = new RestListerWatcher({ kubeConfig: kc, path: '/api/v1/pods' });
  informer = new SharedInformer(lw, { backoff: { initialMs: 50, capMs: 400, resetAfterMs: 5000 } });
  const errors: Error[] = [];
  informer.on('watchError', (e) => errors.push(e));
  await informer.start(AbortSignal.timeout(15_000)).catch((err: unknown) => {
    throw new Error(`did not sync: ${String(err)}; watch errors: ${errors.map(String).join('; ')}`);
  });
  return informer;
}

describe('kubeconfig through client-node', () => {
  test('an exec credential plugin: the token of the ExecCredential it prints authenticates', async () => {
    server = await startServer('exec-token', 'exec-user');
    const plugin = join(dir, 'credential-plugin.sh');
    await writeFile(
      plugin,
      [
        '#!/bin/sh',
        // The plugin sees KUBERNETES_EXEC_INFO and the env entries of the kubeconfig.
        'test "$PLUGIN_MODE" = test || exit 3',
        'printf \'{"apiVersion":"client.authentication.k8s.io/v1","kind":"ExecCredential","status":{"token":"%s"}}\' exec-token',
        '',
      ].join('\n'),
    );
    await chmod(plugin, 0o755);
    const kc = new KubeConfig();
    kc.loadFromString(
      kubeconfigYaml(
        server,
        [
          'exec:',
          '  apiVersion: client.authentication.k8s.io/v1',
          `  command: ${plugin}`,
          '  env: [{ name: PLUGIN_MODE, value: test }]',
          '  interactiveMode: Never',
        ].join('\n'),
      ),
    );
    const inf = await syncWith(kc);
    expect(inf.lister.list().map((p) => p.metadata?.name)).toEqual(['web']);
    const s = server;
    expect(s.requests.filter((r) => !r.rejected).every((r) => r.user === 'exec-user')).toBe(true);
    expect(s.requests.some((r) => r.rejected)).toBe(false);
  });

  test('an exec plugin whose cached token the server stops accepting is re-run after the 401', async () => {
    server = await startServer('old-token', 'exec-user');
    const tokenFile = join(dir, 'current-token');
    await writeFile(tokenFile, 'old-token');
    const plugin = join(dir, 'rotating-plugin.sh');
    // The token is valid for an hour: client-node would keep it that long without the 401 rule.
    const expires = new Date(Date.now() + 3_600_000).toISOString();
    await writeFile(
      plugin,
      [
        '#!/bin/sh',
        `printf '{"apiVersion":"client.authentication.k8s.io/v1","kind":"ExecCredential","status":{"token":"%s","expirationTimestamp":"${expires}"}}' "$(cat ${tokenFile})"`,
        '',
      ].join('\n'),
    );
    await chmod(plugin, 0o755);
    const kc = new KubeConfig();
    kc.loadFromString(
      kubeconfigYaml(
        server,
        ['exec:', '  apiVersion: client.authentication.k8s.io/v1', `  command: ${plugin}`].join('\n'),
      ),
    );
    const inf = await syncWith(kc);
    const s = server;
    for (let i = 0; i < 500 && s.openWatches === 0; i++) await new Promise((r) => setTimeout(r, 10));
    expect(s.requests.at(-1)).toMatchObject({ watch: true, user: 'exec-user' });
    s.setTokens([{ token: 'new-token', user: 'exec-user-2' }]);
    await writeFile(tokenFile, 'new-token');
    const mark = s.requests.length;
    s.faults.dropWatches();
    const deadline = Date.now() + 10_000;
    while (!s.requests.slice(mark).some((r) => r.user === 'exec-user-2') && Date.now() < deadline)
      await new Promise((r) => setTimeout(r, 20));
    const after = s.requests.slice(mark);
    expect(after.some((r) => r.rejected === 401)).toBe(true);
    expect(after.some((r) => r.user === 'exec-user-2')).toBe(true);
    expect(inf.isStopped).toBe(false);
  });

  test("a token file: client-node's `token-file` user field (read once at load)", async () => {
    server = await startServer('file-token', 'file-user');
    const tokenFile = join(dir, 'token');
    await writeFile(tokenFile, 'file-token\n');
    const kc = new KubeConfig();
    kc.loadFromString(kubeconfigYaml(server, `token-file: ${tokenFile}`));
    await syncWith(kc);
    expect(server.requests.at(-1)).toMatchObject({ user: 'file-user' });
  });

  test('a token file: the tokenFile auth provider (what loadFromCluster builds) from a kubeconfig file', async () => {
    server = await startServer('provider-token', 'provider-user');
    const tokenFile = join(dir, 'token');
    await writeFile(tokenFile, 'provider-token\n');
    const kc = new KubeConfig();
    const path = join(dir, 'kubeconfig');
    await writeFile(
      path,
      kubeconfigYaml(
        server,
        ['auth-provider:', '  name: tokenFile', `  config: { tokenFile: ${tokenFile} }`].join('\n'),
      ),
    );
    kc.loadFromFile(path);
    await syncWith(kc);
    expect(server.requests.at(-1)).toMatchObject({ user: 'provider-user' });
  });

  test('proxy-url: every request goes through the HTTP CONNECT proxy', async () => {
    server = await startServer('proxied-token', 'proxied-user');
    const tunnels: string[] = [];
    proxy = http.createServer((_req, res) => {
      res.writeHead(405);
      res.end();
    });
    proxy.on('connect', (req: http.IncomingMessage, client: net.Socket, head: Buffer) => {
      tunnels.push(req.url ?? '');
      tunnelSockets.add(client);
      const [host, port] = (req.url ?? '').split(':');
      const upstream = net.connect(Number(port), host, () => {
        tunnelSockets.add(upstream);
        client.write('HTTP/1.1 200 Connection Established\r\n\r\n');
        upstream.write(head);
        upstream.pipe(client);
        client.pipe(upstream);
      });
      upstream.on('error', () => client.destroy());
      client.on('error', () => upstream.destroy());
    });
    await new Promise<void>((r) => proxy?.listen(0, '127.0.0.1', () => r()));
    const proxyUrl = `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`;
    const kc = new KubeConfig();
    kc.loadFromString(kubeconfigYaml(server, 'token: proxied-token', `proxy-url: ${proxyUrl}`));
    expect(kc.getCurrentCluster()?.proxyUrl).toBe(proxyUrl);
    await syncWith(kc);
    const s = server;
    await new Promise((r) => setTimeout(r, 50)); // the watch, after the list
    expect(tunnels.length).toBeGreaterThanOrEqual(1);
    expect(tunnels.every((t) => t === new URL(s.url).host)).toBe(true);
    expect(s.requests.every((r) => r.user === 'proxied-user')).toBe(true);
  });
});
