// End to end with the real kubectl: kubectl → mini-apiserver (pods/log, pods/exec forwarded
// to the node's InternalIP + daemonEndpoints port with a kubelet client certificate) →
// KubeletServer (x509 authn, SubjectAccessReview authz against the mini-apiserver) → fake
// CRI runtime (log files; Exec over its streaming server). kubectl's WebSocket v5 exec is
// translated to SPDY by the mini-apiserver, as kube-apiserver does; the kubelet proxies that
// SPDY upgrade to the fake's streaming server.
import { execFile, spawn, spawnSync } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  createSelfSignedTls,
  issueClientCertificate,
  type MiniApiServer,
  startMiniApiServer,
} from '@nodeagent/mini-apiserver';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApiPoster, RequestAuthenticator, SubjectAccessReviewAuthorizer } from '../src/index.js';
import { type Fixture, startFixture } from './fixture.js';

const kubectlMissing = spawnSync('kubectl', ['version', '--client'], { encoding: 'utf8' }).status !== 0;
if (kubectlMissing && process.env.CI !== 'true')
  console.warn('\n*** kubectl not found: skipping the kubectl e2e tests ***\n');

describe.skipIf(kubectlMissing && process.env.CI !== 'true')(
  'kubectl logs and exec through the mini-apiserver',
  () => {
    let f: Fixture;
    let api: MiniApiServer;
    let env: NodeJS.ProcessEnv;
    let dir: string | undefined;

    beforeAll(async () => {
      if (kubectlMissing) throw new Error('kubectl is required under CI=true');
      const kubeletCa = await createSelfSignedTls({ hosts: ['127.0.0.1'] });
      const apiClientCert = await issueClientCertificate(kubeletCa, {
        commonName: 'kube-apiserver-kubelet-client',
      });
      dir = await mkdtemp(join(tmpdir(), 'kubelet-kubectl-'));
      api = await startMiniApiServer({
        tls: 'self-signed',
        token: 'admin-token',
        kubeconfigPath: join(dir, 'kubeconfig'),
        kubeletClient: { cert: apiClientCert.cert, key: apiClientCert.key },
      });
      const post = createApiPoster({
        server: api.url,
        token: 'admin-token',
        ...(api.tls?.ca !== undefined ? { ca: api.tls.ca } : {}),
      });
      f = await startFixture({
        clientCa: kubeletCa.ca,
        authenticator: new RequestAuthenticator({ x509: true }),
        authorizer: new SubjectAccessReviewAuthorizer({ post }),
      });
      api.store.create('nodes', {
        metadata: { name: 'node1' },
        status: {
          addresses: [{ type: 'InternalIP', address: '127.0.0.1' }],
          daemonEndpoints: { kubeletEndpoint: { Port: f.server.port } },
        },
      });
      api.store.create('pods', {
        metadata: { name: 'web', namespace: 'default', uid: 'uid-web' },
        spec: { nodeName: 'node1', containers: [{ name: 'app', image: 'busybox' }] },
        status: { phase: 'Running', containerStatuses: f.pods[0]?.status?.containerStatuses },
      });
      env = { ...process.env, KUBECONFIG: join(dir, 'kubeconfig'), HOME: dir };
    });
    afterAll(async () => {
      await f?.stop();
      await api?.stop();
      if (dir !== undefined) await rm(dir, { recursive: true, force: true });
    });

    function kubectl(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
      return new Promise((resolve) => {
        execFile('kubectl', args, { env, timeout: 20_000 }, (err, stdout, stderr) =>
          resolve({ code: err ? Number((err as { code?: number }).code ?? 1) : 0, stdout, stderr }),
        );
      });
    }

    it('kubectl logs, --tail and --previous', async () => {
      expect(await kubectl('logs', 'web')).toMatchObject({
        code: 0,
        stdout: 'new line 1\nnew line 2\nwarn\nnew line 3\n',
      });
      expect((await kubectl('logs', 'web', '--tail=1')).stdout).toBe('new line 3\n');
      expect((await kubectl('logs', 'web', '-c', 'app', '--previous')).stdout).toBe('old line\n');
    });

    it('kubectl logs -f streams lines written later', async () => {
      const child = spawn('kubectl', ['logs', '-f', 'web'], { env });
      let out = '';
      child.stdout.on('data', (c: Buffer) => {
        out += c.toString();
      });
      const until = async (s: string) => {
        for (let i = 0; i < 500 && !out.includes(s); i++) await new Promise((r) => setTimeout(r, 10));
        expect(out).toContain(s);
      };
      try {
        await until('new line 3');
        const { appendFile } = await import('node:fs/promises');
        await appendFile(
          join(f.logDir, 'app', '1.log'),
          `${new Date().toISOString()} stdout F appended later\n`,
        );
        await until('appended later');
      } finally {
        child.kill();
      }
    });

    it('kubectl exec -- sh -c "echo hi" (WebSocket v5, translated to SPDY for the kubelet) and its exit code', async () => {
      const execPath = '/api/v1/namespaces/default/pods/web/exec';
      const before = api.requests.filter((r) => r.path === execPath).length;
      expect(await kubectl('exec', 'web', '--', 'sh', '-c', 'echo hi')).toMatchObject({
        code: 0,
        stdout: 'hi\n',
      });
      const failed = await kubectl('exec', 'web', '--', 'false-command');
      expect(failed.code).toBe(3);
      expect(failed.stderr).toContain('unknown command');
      // One WebSocket request per exec: no SPDY fallback by kubectl.
      const execs = api.requests.filter((r) => r.path === execPath).slice(before);
      expect(execs.map((r) => `${r.method} ${r.upgrade}`)).toEqual(['GET websocket', 'GET websocket']);
    });

    it('answers the apiserver errors: unknown pod, bad container, invalid and undecodable options', async () => {
      expect((await kubectl('logs', 'nope')).stderr).toContain('(NotFound): pods "nope" not found');
      expect((await kubectl('logs', 'web', '-c', 'other')).stderr).toContain(
        'container other is not valid for pod web',
      );
      expect(
        (await kubectl('get', '--raw', '/api/v1/namespaces/default/pods/web/log?tailLines=-1')).stderr,
      ).toContain(
        'PodLogOptions "web" is invalid: tailLines: Invalid value: -1: must be greater than or equal to 0',
      );
      expect(
        (await kubectl('get', '--raw', '/api/v1/namespaces/default/pods/web/log?sinceTime=garbage')).stderr,
      ).toContain('parsing time "garbage"');
    });
  },
);
