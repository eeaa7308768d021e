import { execFile, spawn, spawnSync } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import type { MiniApiServer } from '../src/index.js';
import { start } from './helpers.js';

const kubectlMissing = spawnSync('kubectl', ['version', '--client'], { encoding: 'utf8' }).status !== 0;
if (kubectlMissing && process.env.CI !== 'true') {
  console.warn(
    '\n*** kubectl not found: skipping the kubectl tests (install the Debian package kubernetes-client) ***\n',
  );
}

const MANIFEST = `apiVersion: v1
kind: Pod
metadata:
  name: web
  labels: {app: web}
spec:
  containers:
  - name: app
    image: nginx
---
apiVersion: v1
kind: Service
metadata:
  name: web
spec:
  selector: {app: web}
  ports: [{port: 80, targetPort: 8080}]
`;

describe.skipIf(kubectlMissing && process.env.CI !== 'true')('kubectl against the mini-apiserver', () => {
  let server: MiniApiServer;
  let dir: string;
  let env: NodeJS.ProcessEnv;

  beforeAll(async () => {
    if (kubectlMissing)
      throw new Error('kubectl is required under CI=true (Debian package kubernetes-client)');
    dir = await mkdtemp(join(tmpdir(), 'mini-apiserver-kubectl-'));
    // No token: kubectl (client-go) does not send bearer tokens to a plain-http server.
    server = await start({ kubeconfigPath: join(dir, 'kubeconfig') });
    env = { ...process.env, KUBECONFIG: join(dir, 'kubeconfig'), HOME: dir };
  });
  afterAll(async () => {
    await server?.stop();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  function kubectl(...args: string[]): Promise<string> {
    return new Promise((resolve, reject) => {
      execFile(
        'kubectl',
        [...args, `--cache-dir=${join(dir, 'cache')}`],
        { env, timeout: 20_000 },
        (err, stdout, stderr) => {
          if (err) reject(new Error(`kubectl ${args.join(' ')} failed: ${stderr || err.message}`));
          else resolve(stdout);
        },
      );
    });
  }

  test('get, apply (create then patch), get -w and delete', async () => {
    expect(await kubectl('get', 'namespaces', '-o', 'name')).toBe(
      'namespace/default\nnamespace/kube-node-lease\nnamespace/kube-public\nnamespace/kube-system\n',
    );
    await writeFile(join(dir, 'app.yaml'), MANIFEST);
    expect(await kubectl('apply', '-f', join(dir, 'app.yaml'))).toBe(
      'pod/web created\nservice/web created\n',
    );
    expect(
      server.store.get('pods', 'default', 'web').metadata?.annotations?.[
        'kubectl.kubernetes.io/last-applied-configuration'
      ],
    ).toContain('"web"');
    await writeFile(
      join(dir, 'app.yaml'),
      MANIFEST.replace('labels: {app: web}', 'labels: {app: web, tier: fe}'),
    );
    expect(await kubectl('apply', '-f', join(dir, 'app.yaml'))).toBe(
      'pod/web configured\nservice/web unchanged\n',
    );
    expect(server.store.get('pods', 'default', 'web').metadata?.labels).toEqual({ app: 'web', tier: 'fe' });
    expect(await kubectl('get', 'po', '-l', 'tier=fe', '-o', 'jsonpath={.items[*].metadata.name}')).toBe(
      'web',
    );
    expect(await kubectl('get', 'svc', 'web', '-o', 'jsonpath={.spec.ports[0].port}')).toBe('80');

    // get -w: a label change shows up as a new line.
    const child = spawn(
      'kubectl',
      [
        'get',
        'pods',
        '-w',
        '-o',
        'custom-columns=NAME:.metadata.name,COLOR:.metadata.labels.color',
        `--cache-dir=${join(dir, 'cache')}`,
      ],
      { env },
    );
    let out = '';
    child.stdout.on('data', (d: Buffer) => {
      out += d.toString();
    });
    try {
      for (let i = 0; i < 200 && !out.includes('web'); i++) await new Promise((r) => setTimeout(r, 50));
      server.store.patch('pods', 'default', 'web', 'merge', { metadata: { labels: { color: 'blue' } } });
      for (let i = 0; i < 200 && !out.includes('blue'); i++) await new Promise((r) => setTimeout(r, 50));
      expect(out).toMatch(/web\s+blue/);
    } finally {
      child.kill();
    }

    expect(await kubectl('delete', '-f', join(dir, 'app.yaml'))).toBe(
      'pod "web" deleted\nservice "web" deleted\n',
    );
    expect(server.store.count('pods')).toBe(0);
    expect(server.requests.some((r) => r.watch)).toBe(true);
  }, 60_000);
});
