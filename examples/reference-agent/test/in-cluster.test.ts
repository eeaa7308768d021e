// In-cluster configuration (client-go's rest.InClusterConfig) against the mini-apiserver on
// HTTPS with authentication required: a ServiceAccount token issued by the serviceaccounts/token
// subresource and the server's CA are written where a pod has them (a test directory standing
// for /var/run/secrets/kubernetes.io/serviceaccount), KUBERNETES_SERVICE_HOST/PORT point at the
// server, and the agent — given no kubeconfig — registers its Node as that service account.
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import https from 'node:https';
import os from 'node:os';
import { join } from 'node:path';
import type { V1Node } from '@kubernetes/client-node';
import { type MiniApiServer, startMiniApiServer } from '@nodeagent/mini-apiserver';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { type RunningAgent, runAgent } from '../src/agent.js';
import {
  InClusterConfigError,
  inClusterKubeConfig,
  isInCluster,
  NOT_IN_CLUSTER_MESSAGE,
} from '../src/in-cluster.js';
import { FAST_AGENT_TIMINGS, testLogger, waitFor } from './helpers.js';

const ADMIN_TOKEN = 'in-cluster-test-admin';

function post(server: MiniApiServer, path: string, body: unknown): Promise<Record<string, unknown>> {
  const url = new URL(path, server.url);
  return new Promise((resolve, reject) => {
    const req = https.request(
      url,
      {
        method: 'POST',
        ca: server.tls?.ca,
        headers: { Authorization: `Bearer ${ADMIN_TOKEN}`, 'Content-Type': 'application/json' },
      },
      (res) => {
        let text = '';
        res.on('data', (c: Buffer) => (text += c.toString('utf8')));
        res.on('end', () =>
          (res.statusCode ?? 0) < 300
            ? resolve(JSON.parse(text))
            : reject(new Error(`${res.statusCode} ${text}`)),
        );
      },
    );
    req.on('error', reject);
    req.end(JSON.stringify(body));
  });
}

describe('in-cluster configuration', () => {
  let api: MiniApiServer;
  let dir: string;
  let agent: RunningAgent | undefined;
  let env: Record<string, string>;

  beforeAll(async () => {
    api = await startMiniApiServer({ tls: 'self-signed', token: ADMIN_TOKEN });
    dir = await mkdtemp(join(os.tmpdir(), 'in-cluster-sa-'));
    const request = await post(api, '/api/v1/namespaces/default/serviceaccounts/default/token', {
      apiVersion: 'authentication.k8s.io/v1',
      kind: 'TokenRequest',
      spec: {},
    });
    const token = (request.status as { token: string }).token;
    expect(token.split('.')).toHaveLength(3);
    await writeFile(join(dir, 'token'), token);
    await writeFile(join(dir, 'ca.crt'), api.tls?.ca ?? '');
    await writeFile(join(dir, 'namespace'), 'default');
    env = { KUBERNETES_SERVICE_HOST: '127.0.0.1', KUBERNETES_SERVICE_PORT: String(api.port) };
  }, 60_000);
  afterAll(async () => {
    await agent?.stop();
    await api?.stop();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('is detected from KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT, both needed', () => {
    expect(isInCluster(env)).toBe(true);
    expect(isInCluster({ KUBERNETES_SERVICE_HOST: '10.96.0.1' })).toBe(false);
    expect(isInCluster({ KUBERNETES_SERVICE_HOST: '', KUBERNETES_SERVICE_PORT: '443' })).toBe(false);
    expect(() => inClusterKubeConfig({ env: {}, serviceAccountDir: dir })).toThrow(NOT_IN_CLUSTER_MESSAGE);
  });

  it('builds client-go’s configuration: https://host:port, the CA file, the token file (re-read)', () => {
    const kc = inClusterKubeConfig({
      env: { KUBERNETES_SERVICE_HOST: 'fd00::1', KUBERNETES_SERVICE_PORT: '443' },
      serviceAccountDir: dir,
    });
    expect(kc.getCurrentCluster()).toMatchObject({
      server: 'https://[fd00::1]:443',
      caFile: join(dir, 'ca.crt'),
    });
    expect(kc.getCurrentUser()?.authProvider).toEqual({
      name: 'tokenFile',
      config: { tokenFile: join(dir, 'token') },
    });
    // Port 80 is still https, as client-go (client-node's own loadFromCluster would use http).
    const plain = inClusterKubeConfig({
      env: { KUBERNETES_SERVICE_HOST: 'h', KUBERNETES_SERVICE_PORT: '80' },
      serviceAccountDir: dir,
    });
    expect(plain.getCurrentCluster()?.server).toBe('https://h:80');
    expect(() => inClusterKubeConfig({ env, serviceAccountDir: join(dir, 'missing') })).toThrow(
      InClusterConfigError,
    );
    expect(() => inClusterKubeConfig({ env, serviceAccountDir: join(dir, 'missing') })).toThrow(
      /token: ENOENT/,
    );
  });

  it('the agent without a kubeconfig registers its Node Ready as the service account', async () => {
    agent = await runAgent({
      nodeName: 'in-cluster-node',
      inCluster: { env, serviceAccountDir: dir },
      ...FAST_AGENT_TIMINGS,
      logger: testLogger(),
    });
    expect(agent.apiServer).toBeUndefined();
    expect(agent.kubeconfigPath).toBe('');
    const node = await waitFor(
      'Node Ready',
      () => {
        const n = api.store.tryGet('nodes', undefined, 'in-cluster-node') as V1Node | undefined;
        return n?.status?.conditions?.find((c) => c.type === 'Ready')?.status === 'True' ? n : undefined;
      },
      30_000,
    );
    expect(node.metadata?.name).toBe('in-cluster-node');
    const agentRequests = api.requests.filter((r) => r.path.includes('in-cluster-node'));
    expect(agentRequests.length).toBeGreaterThan(0);
    expect(new Set(agentRequests.map((r) => r.user))).toEqual(
      new Set(['system:serviceaccount:default:default']),
    );
    expect(api.requests.filter((r) => r.rejected === 401)).toEqual([]);
  }, 60_000);

  it('re-reads a rotated token after a minute, as client-go', async () => {
    const kc = inClusterKubeConfig({ env, serviceAccountDir: dir });
    const bearer = async () => {
      const opts: https.RequestOptions = {};
      await kc.applyToHTTPSOptions(opts);
      return (opts.headers as Record<string, string> | undefined)?.Authorization;
    };
    const first = await bearer();
    expect(first).toMatch(/^Bearer ey/);
    await writeFile(join(dir, 'token'), 'rotated-token');
    vi.useFakeTimers({ toFake: ['Date'] });
    try {
      vi.setSystemTime(Date.now() + 30_000);
      expect(await bearer()).toBe(first);
      vi.setSystemTime(Date.now() + 31_000);
      expect(await bearer()).toBe('Bearer rotated-token');
    } finally {
      vi.useRealTimers();
    }
  });
});
