/**
 * In-cluster token rotation. client-node's `loadFromCluster()` reads fixed paths under
 * /var/run/secrets, so the KubeConfig is built the same way with `loadFromOptions`: the CA
 * as a file, and a user with the `tokenFile` auth provider. client-node's provider keeps a
 * token for 60 s; the RestListerWatcher forces a re-read on a 401 (as client-go does).
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { KubeConfig } from '@kubernetes/client-node';
import { afterEach, beforeEach, describe, expect, test } from 'vitest';
import { type MiniApiServer, startMiniApiServer } from '../../mini-apiserver/src/index.js';
import { RestListerWatcher, SharedInformer, StatusError } from '../src/index.js';
import { testPod as pod, until } from './helpers.js';

let dir: string;
let server: MiniApiServer;
let informer: SharedInformer | undefined;
let lw: RestListerWatcher | undefined;

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'informer-token-'));
});
afterEach(async () => {
  await informer?.stop();
  lw?.close();
  await server?.stop();
  await rm(dir, { recursive: true, force: true });
});

/** The KubeConfig loadFromCluster() would build, with our paths and server. */
function inClusterKubeConfig(url: string, caFile: string, tokenFile: string): KubeConfig {
  const kc = new KubeConfig();
  kc.loadFromOptions({
    clusters: [{ name: 'inCluster', caFile, server: url, skipTLSVerify: false }],
    users: [{ name: 'inClusterUser', authProvider: { name: 'tokenFile', config: { tokenFile } } }],
    contexts: [
      { cluster: 'inCluster', name: 'inClusterContext', user: 'inClusterUser', namespace: 'default' },
    ],
    currentContext: 'inClusterContext',
  });
  return kc;
}

interface Errors {
  readonly all: Error[];
  /** Without the connection-reset error of the dropped watch itself. */
  status(): StatusError[];
}

async function startInformer(oldToken: string): Promise<{ tokenFile: string; errors: Errors }> {
  server = await startMiniApiServer({ tls: 'self-signed', tokens: [{ token: oldToken, user: 'sa-old' }] });
  const caFile = join(dir, 'ca.crt');
  const tokenFile = join(dir, 'token');
  await writeFile(caFile, server.tls?.ca ?? '');
  // A trailing newline, as `echo` writes it: client-node would put it in the header as is.
  await writeFile(tokenFile, `${oldToken}\n`);
  server.store.create('pods', pod('before'));
  lw = new RestListerWatcher({
    kubeConfig: inClusterKubeConfig(server.url, caFile, tokenFile),
    path: '/api/v1/pods',
  });
  informer = new SharedInformer(lw, { backoff: { initialMs: 50, capMs: 400, resetAfterMs: 5000 } });
  const errors: Error[] = [];
  informer.on('watchError', (e) => errors.push(e));
  await informer.start(AbortSignal.timeout(15_000));
  await until('the first watch', () => server.openWatches === 1);
  expect(server.requests.at(-1)).toMatchObject({ watch: true, user: 'sa-old' });
  return { tokenFile, errors: { all: errors, status: () => errors.filter((e) => e instanceof StatusError) } };
}

describe('in-cluster token rotation (tokenFile auth provider)', () => {
  test('after the server switches tokens, 401s are reported with backoff until the file is rotated, then it recovers', async () => {
    const { tokenFile, errors } = await startInformer('old-token');
    const mark = server.requests.length;
    server.setTokens([{ token: 'new-token', user: 'sa-new' }]);
    server.faults.dropWatches();
    // The file still holds the old token: every attempt is a 401, reported and retried.
    await until('three 401s', () => errors.status().length >= 3);
    expect(errors.status().every((e) => e.code === 401)).toBe(true);
    expect(errors.all.length).toBe(errors.status().length + 1);
    expect(informer?.hasSynced()).toBe(true);
    const rejected = server.requests.slice(mark).filter((r) => r.rejected === 401).length;
    expect(rejected).toBeGreaterThanOrEqual(3);

    await writeFile(tokenFile, 'new-token\n');
    server.store.create('pods', pod('after'));
    await until(
      'the pod created after the rotation',
      () => informer?.lister.get('after', 'default') !== undefined,
    );
    expect(server.requests.at(-1)?.user).toBe('sa-new');
    expect(
      informer?.lister
        .list()
        .map((p) => p.metadata?.name)
        .sort(),
    ).toEqual(['after', 'before']);
  });

  test('the file is re-read on the first 401, long before client-node’s 60 s token cache expires', async () => {
    const { tokenFile, errors } = await startInformer('old-token');
    const mark = server.requests.length;
    const rotatedAt = Date.now();
    await writeFile(tokenFile, 'new-token');
    server.setTokens([{ token: 'new-token', user: 'sa-new' }]);
    server.faults.dropWatches();
    server.store.create('pods', pod('after'));
    await until(
      'the pod created after the rotation',
      () => informer?.lister.get('after', 'default') !== undefined,
    );
    const after = server.requests.slice(mark);
    // client-node still had the old token cached: the first request was refused …
    expect(after[0]?.rejected).toBe(401);
    expect(errors.status().map((e) => e.code)).toEqual([401]);
    // … and the very next one carried the new token.
    expect(after[1]?.user).toBe('sa-new');
    expect(Date.now() - rotatedAt).toBeLessThan(60_000);
  });

  test('with overlapping validity (old token still accepted), the cached token keeps working: no errors', async () => {
    const { tokenFile, errors } = await startInformer('old-token');
    const mark = server.requests.length;
    await writeFile(tokenFile, 'new-token');
    server.setTokens([
      { token: 'old-token', user: 'sa-old' },
      { token: 'new-token', user: 'sa-new' },
    ]);
    server.faults.dropWatches();
    server.store.create('pods', pod('after'));
    await until(
      'the pod created after the rotation',
      () => informer?.lister.get('after', 'default') !== undefined,
    );
    expect(errors.status()).toEqual([]);
    // Within client-node's 60 s cache the old token is still sent (client-go does the same).
    expect(server.requests.slice(mark).every((r) => r.user === 'sa-old')).toBe(true);
  });
});
