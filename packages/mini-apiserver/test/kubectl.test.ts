import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import { kubectlMissing, useKubectlServer } from './kubectl-harness.js';

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
  // No token: kubectl (client-go) does not send bearer tokens to a plain-http server.
  const h = useKubectlServer('mini-apiserver-kubectl-');
  const kubectl = h.kubectl;

  test('get, apply (create then patch), get -w and delete', async () => {
    expect(await kubectl('get', 'namespaces', '-o', 'name')).toBe(
      'namespace/default\nnamespace/kube-node-lease\nnamespace/kube-public\nnamespace/kube-system\n',
    );
    await writeFile(join(h.dir, 'app.yaml'), MANIFEST);
    expect(await kubectl('apply', '-f', join(h.dir, 'app.yaml'))).toBe(
      'pod/web created\nservice/web created\n',
    );
    expect(
      h.server.store.get('pods', 'default', 'web').metadata?.annotations?.[
        'kubectl.kubernetes.io/last-applied-configuration'
      ],
    ).toContain('"web"');
    await writeFile(
      join(h.dir, 'app.yaml'),
      MANIFEST.replace('labels: {app: web}', 'labels: {app: web, tier: fe}'),
    );
    expect(await kubectl('apply', '-f', join(h.dir, 'app.yaml'))).toBe(
      'pod/web configured\nservice/web unchanged\n',
    );
    expect(h.server.store.get('pods', 'default', 'web').metadata?.labels).toEqual({ app: 'web', tier: 'fe' });
    expect(await kubectl('get', 'po', '-l', 'tier=fe', '-o', 'jsonpath={.items[*].metadata.name}')).toBe(
      'web',
    );
    expect(await kubectl('get', 'svc', 'web', '-o', 'jsonpath={.spec.ports[0].port}')).toBe('80');

    // get -w: a label change shows up as a new line.
    const watch = h.watch(
      'get',
      'pods',
      '-w',
      '-o',
      'custom-columns=NAME:.metadata.name,COLOR:.metadata.labels.color',
    );
    try {
      await watch.until('web');
      h.server.store.patch('pods', 'default', 'web', 'merge', { metadata: { labels: { color: 'blue' } } });
      await watch.until('blue');
      expect(watch.out).toMatch(/web\s+blue/);
    } finally {
      watch.stop();
    }

    expect(await kubectl('delete', '-f', join(h.dir, 'app.yaml'))).toBe(
      'pod "web" deleted\nservice "web" deleted\n',
    );
    expect(h.server.store.count('pods')).toBe(0);
    expect(h.server.requests.some((r) => r.watch)).toBe(true);
  }, 60_000);
});
