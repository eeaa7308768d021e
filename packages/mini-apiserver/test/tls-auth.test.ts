import { execFile, spawnSync } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import https from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CoreV1Api, KubeConfig } from '@kubernetes/client-node';
import { InvalidOptionsError } from '@nodeagent/core';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import {
  createSelfSignedTls,
  type MiniApiServer,
  OpensslNotFoundError,
  type SelfSignedTls,
  startMiniApiServer,
} from '../src/index.js';
import { call, pod, start } from './helpers.js';

interface TlsClient {
  readonly ca?: string;
  readonly cert?: string;
  readonly key?: string;
  readonly token?: string;
}

/** GET over https with explicit trust and credentials; resolves with status and body. */
function httpsGet(
  server: MiniApiServer,
  path: string,
  client: TlsClient,
): Promise<{ code: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = https.request(
      `${server.url}${path}`,
      {
        ca: client.ca,
        cert: client.cert,
        key: client.key,
        agent: false,
        headers: client.token ? { Authorization: `Bearer ${client.token}` } : {},
      },
      (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (c: string) => {
          body += c;
        });
        res.on('end', () => resolve({ code: res.statusCode ?? 0, body }));
      },
    );
    req.on('error', reject);
    req.end();
  });
}

function kubeconfigDoc(server: MiniApiServer): {
  clusters: Array<{ cluster: Record<string, unknown> }>;
  users: Array<{ user: Record<string, unknown> }>;
} {
  return JSON.parse(server.kubeconfig);
}

describe('HTTPS with a self-signed CA', () => {
  let server: MiniApiServer;
  let other: SelfSignedTls;
  beforeAll(async () => {
    [server, other] = await Promise.all([
      start({ tls: 'self-signed', token: 'secret' }),
      createSelfSignedTls(),
    ]);
  });
  afterAll(() => server?.stop());

  test('serves https, and the kubeconfig carries the CA and no insecure-skip-tls-verify', async () => {
    expect(server.url).toMatch(/^https:\/\/127\.0\.0\.1:\d+$/);
    const doc = kubeconfigDoc(server);
    const cluster = doc.clusters[0]?.cluster ?? {};
    expect(cluster['insecure-skip-tls-verify']).toBeUndefined();
    expect(Buffer.from(String(cluster['certificate-authority-data']), 'base64').toString()).toBe(
      server.tls?.ca,
    );
    expect(server.tls?.ca).toContain('BEGIN CERTIFICATE');
    expect(doc.users[0]?.user).toEqual({ token: 'secret' });
    const res = await httpsGet(server, '/version', { ca: server.tls?.ca ?? '', token: 'secret' });
    expect(res.code).toBe(200);
    expect(JSON.parse(res.body).gitVersion).toMatch(/^v1\./);
  });

  test('@kubernetes/client-node works from the generated kubeconfig (CA verified)', async () => {
    server.store.create('pods', pod('tls-pod'));
    const kc = new KubeConfig();
    kc.loadFromString(server.kubeconfig);
    const list = await kc.makeApiClient(CoreV1Api).listNamespacedPod({ namespace: 'default' });
    expect(list.items.map((p) => p.metadata?.name)).toContain('tls-pod');
  });

  test('a client trusting another CA fails the handshake', async () => {
    await expect(httpsGet(server, '/version', { ca: other.ca, token: 'secret' })).rejects.toMatchObject({
      code: expect.stringMatching(/SELF_SIGNED|UNABLE_TO_VERIFY|CERT/),
    });
  });

  test('PEM material can be passed in instead of generated', async () => {
    const s = await startMiniApiServer({ tls: { cert: other.cert, key: other.key, ca: other.ca } });
    try {
      expect((await httpsGet(s, '/version', { ca: other.ca })).code).toBe(200);
      await expect(httpsGet(s, '/version', { ca: server.tls?.ca ?? '' })).rejects.toThrow();
    } finally {
      await s.stop();
    }
  });
});

describe('client-certificate authentication', () => {
  let server: MiniApiServer;
  let foreign: SelfSignedTls;
  beforeAll(async () => {
    [server, foreign] = await Promise.all([
      start({ tls: 'self-signed', requestCert: true, clientCertificateUser: 'agent-admin' }),
      createSelfSignedTls({ clientCommonName: 'mallory' }),
    ]);
  });
  afterAll(() => server?.stop());

  test('the kubeconfig carries the client certificate; its CN is the user', async () => {
    const user = kubeconfigDoc(server).users[0]?.user ?? {};
    expect(user['client-certificate-data']).toBeTypeOf('string');
    expect(user['client-key-data']).toBeTypeOf('string');
    const kc = new KubeConfig();
    kc.loadFromString(server.kubeconfig);
    await kc.makeApiClient(CoreV1Api).listNamespacedPod({ namespace: 'default' });
    expect(server.requests.at(-1)).toMatchObject({
      path: '/api/v1/namespaces/default/pods',
      user: 'agent-admin',
    });
  });

  test('issued certificates map their CN; no credentials or a foreign CA get 401', async () => {
    const ca = server.tls?.ca ?? '';
    const alice = await server.issueClientCertificate('alice', ['dev']);
    expect((await httpsGet(server, '/api', { ca, ...alice })).code).toBe(200);
    expect(server.requests.at(-1)?.user).toBe('alice');

    const anonymous = await httpsGet(server, '/api', { ca });
    expect(anonymous.code).toBe(401);
    expect(JSON.parse(anonymous.body)).toMatchObject({ kind: 'Status', reason: 'Unauthorized', code: 401 });
    expect(server.requests.at(-1)).toMatchObject({ rejected: 401 });

    const forged = await httpsGet(server, '/api', {
      ca,
      ...(foreign.clientCertificate ?? { cert: '', key: '' }),
    });
    expect(forged.code).toBe(401);
    expect(JSON.parse(forged.body).message).toMatch(/client certificate rejected/);
  });
});

describe('bearer tokens', () => {
  let server: MiniApiServer;
  afterAll(() => server?.stop());

  test('setTokens rotates the accepted set at runtime; users are recorded; open watches stay open', async () => {
    server = await start({ tokens: [{ token: 'old', user: 'sa-old' }] });
    const get = (token?: string) =>
      fetch(`${server.url}/api/v1/pods`, token ? { headers: { Authorization: `Bearer ${token}` } } : {});
    expect((await get('old')).status).toBe(200);
    expect(server.requests.at(-1)?.user).toBe('sa-old');
    expect((await get()).status).toBe(401);
    expect((await get('new')).status).toBe(401);

    const ac = new AbortController();
    const watch = await fetch(`${server.url}/api/v1/pods?watch=1`, {
      headers: { Authorization: 'Bearer old' },
      signal: ac.signal,
    });
    expect(watch.status).toBe(200);
    server.setTokens(['new', { token: 'newer', user: 'sa-newer' }]);
    expect(server.tokens).toEqual([
      { token: 'new', user: 'mini-apiserver-user', groups: ['system:masters'] },
      { token: 'newer', user: 'sa-newer' },
    ]);
    const old = await get('old');
    expect(old.status).toBe(401);
    expect(await old.json()).toMatchObject({ reason: 'Unauthorized', code: 401 });
    expect((await get('new')).status).toBe(200);
    expect((await get('newer')).status).toBe(200);
    expect(server.requests.at(-1)?.user).toBe('sa-newer');
    expect(server.openWatches).toBe(1);
    ac.abort();

    server.setTokens([]);
    expect((await get()).status).toBe(200);
  });

  test('the kubeconfig takes the first token; anonymous servers record no user', async () => {
    const s = await start({ tokens: ['t1', 't2'] });
    try {
      expect(kubeconfigDoc(s).users[0]?.user).toEqual({ token: 't1' });
    } finally {
      await s.stop();
    }
    const anon = await start();
    try {
      expect((await call(anon, 'GET', '/api')).code).toBe(200);
      expect(anon.requests.at(-1)?.user).toBeUndefined();
    } finally {
      await anon.stop();
    }
  });
});

describe('TLS option errors', () => {
  test('a missing openssl binary is a typed error', async () => {
    await expect(
      startMiniApiServer({ tls: 'self-signed', opensslPath: '/nonexistent/openssl' }),
    ).rejects.toBeInstanceOf(OpensslNotFoundError);
  });

  test('requestCert needs tls (and a CA to verify against)', async () => {
    await expect(startMiniApiServer({ requestCert: true })).rejects.toBeInstanceOf(InvalidOptionsError);
    await expect(
      startMiniApiServer({ tls: { cert: 'x', key: 'y' }, requestCert: true }),
    ).rejects.toBeInstanceOf(InvalidOptionsError);
  });

  test('issueClientCertificate needs the generated CA', async () => {
    const s = await start();
    try {
      await expect(s.issueClientCertificate('x')).rejects.toBeInstanceOf(InvalidOptionsError);
    } finally {
      await s.stop();
    }
  });
});

const kubectlMissing = spawnSync('kubectl', ['version', '--client'], { encoding: 'utf8' }).status !== 0;

describe.skipIf(kubectlMissing && process.env.CI !== 'true')('kubectl over HTTPS', () => {
  test('verifies the CA from the kubeconfig and sends the token (and fails with another CA)', async () => {
    if (kubectlMissing)
      throw new Error('kubectl is required under CI=true (Debian package kubernetes-client)');
    const dir = await mkdtemp(join(tmpdir(), 'mini-apiserver-kubectl-tls-'));
    const server = await start({
      tls: 'self-signed',
      token: 'kubectl-token',
      kubeconfigPath: join(dir, 'kubeconfig'),
    });
    const kubectl = (...args: string[]) =>
      new Promise<{ ok: boolean; out: string }>((resolve) => {
        execFile(
          'kubectl',
          [...args, `--cache-dir=${join(dir, 'cache')}`],
          { env: { ...process.env, KUBECONFIG: join(dir, 'kubeconfig'), HOME: dir }, timeout: 20_000 },
          (err, stdout, stderr) => resolve({ ok: !err, out: `${stdout}${stderr}` }),
        );
      });
    try {
      server.store.create('pods', pod('over-tls'));
      const ok = await kubectl('get', 'pods', '-o', 'name');
      expect(ok.out).toContain('pod/over-tls');
      expect(server.requests.some((r) => r.user === 'mini-apiserver-user')).toBe(true);
      const doc = kubeconfigDoc(server);
      (doc.clusters[0] as { cluster: Record<string, unknown> }).cluster['certificate-authority-data'] =
        Buffer.from((await createSelfSignedTls()).ca).toString('base64');
      await writeFile(join(dir, 'kubeconfig'), JSON.stringify(doc));
      const bad = await kubectl('get', 'pods', '--request-timeout=5s');
      expect(bad.ok).toBe(false);
      expect(bad.out).toMatch(/x509|certificate signed by unknown authority/);
    } finally {
      await server.stop();
      await rm(dir, { recursive: true, force: true });
    }
  });
});
