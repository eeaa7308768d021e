// biome-ignore-all lint/suspicious/noExplicitAny: assertions read raw API JSON
// Compatibility suite: the real kubectl (1.32) through the kubectl cheat sheet commands on the
// kinds served, with the outputs kubectl prints against kube-apiserver. Needs kubectl: fails
// under CI=true when missing, skips loudly otherwise.
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { beforeAll, describe, expect, test } from 'vitest';
import { waitUntil } from './helpers.js';
import { kubectlMissing, useKubectlServer } from './kubectl-harness.js';

if (kubectlMissing && process.env.CI !== 'true') {
  console.warn(
    '\n*** kubectl not found: skipping the kubectl compatibility suite (Debian package kubernetes-client) ***\n',
  );
}

const APP = `apiVersion: v1
kind: Pod
metadata:
  name: web
  labels: {app: web}
spec:
  containers:
  - name: app
    image: nginx:1.27
    ports: [{containerPort: 8080}]
---
apiVersion: v1
kind: Service
metadata:
  name: web
spec:
  selector: {app: web}
  ports: [{port: 80, targetPort: 8080}]
`;

describe.skipIf(kubectlMissing && process.env.CI !== 'true')(
  'kubectl compatibility (cheat sheet)',
  () => {
    const h = useKubectlServer('mini-apiserver-compat-', { schedule: true });

    beforeAll(() => {
      for (const name of ['node-1', 'node-2', 'node-3']) {
        h.server.store.create('nodes', {
          metadata: { name, labels: { 'kubernetes.io/hostname': name } },
          spec: name === 'node-3' ? { unschedulable: true } : {},
          status: {
            allocatable: { cpu: '2', memory: '4Gi', pods: '110' },
            conditions: [{ type: 'Ready', status: name === 'node-2' ? 'False' : 'True' }],
          },
        });
      }
    });

    const run = h.run;
    const kubectl = h.kubectl;

    test('apply, get -o jsonpath with API defaults and allocation', async () => {
      await writeFile(join(h.dir, 'app.yaml'), APP);
      expect(await kubectl('apply', '-f', join(h.dir, 'app.yaml'))).toBe(
        'pod/web created\nservice/web created\n',
      );
      const svc = await kubectl(
        'get',
        'svc',
        'web',
        '-o',
        'jsonpath={.spec.type},{.spec.clusterIP},{.spec.sessionAffinity},{.spec.ports[0].protocol},{.spec.ipFamilyPolicy}',
      );
      expect(svc).toMatch(/^ClusterIP,10\.0\.0\.\d+,None,TCP,SingleStack$/);
      expect(
        await kubectl(
          'get',
          'pod',
          'web',
          '-o',
          'jsonpath={.spec.restartPolicy},{.spec.dnsPolicy},{.spec.terminationGracePeriodSeconds},{.spec.containers[0].imagePullPolicy}',
        ),
      ).toBe('Always,ClusterFirst,30,IfNotPresent');
      // Re-applying keeps the allocated clusterIP (kubectl apply omits it).
      const ip = svc.split(',')[1];
      expect(await kubectl('apply', '-f', join(h.dir, 'app.yaml'))).toBe(
        'pod/web unchanged\nservice/web unchanged\n',
      );
      expect(await kubectl('get', 'svc', 'web', '-o', 'jsonpath={.spec.clusterIP}')).toBe(ip);
    });

    test('the scheduler binds, describe and events show it', async () => {
      for (let i = 0; i < 100; i++) {
        if ((h.server.store.get('pods', 'default', 'web') as any).spec?.nodeName) break;
        await new Promise((r) => setTimeout(r, 20));
      }
      expect(await kubectl('get', 'pod', 'web', '-o', 'jsonpath={.spec.nodeName}')).toBe('node-1');
      const describe = await kubectl('describe', 'pod', 'web');
      expect(describe).toMatch(/^Name:\s+web$/m);
      expect(describe).toMatch(/^Node:\s+node-1\/$/m);
      expect(describe).toMatch(
        /Normal\s+Scheduled\s+.*default-scheduler\s+Successfully assigned default\/web to node-1/,
      );
      expect(
        await kubectl(
          'get',
          'events',
          '--field-selector',
          'involvedObject.name=web,reason=Scheduled',
          '-o',
          'jsonpath={.items[*].message}',
        ),
      ).toBe('Successfully assigned default/web to node-1');
      const events = await kubectl('events', '--for', 'pod/web');
      expect(events.split('\n')[0]).toMatch(/^LAST SEEN\s+TYPE\s+REASON\s+OBJECT\s+MESSAGE$/);
      expect(events).toMatch(/Normal\s+Scheduled\s+Pod\/web\s+Successfully assigned default\/web to node-1/);
    });

    test('label, annotate, patch (strategic, merge, json), edit', async () => {
      expect(await kubectl('label', 'pods', 'web', 'tier=frontend')).toBe('pod/web labeled\n');
      expect(await kubectl('annotate', 'pods', 'web', 'note=hello')).toBe('pod/web annotated\n');
      expect(await kubectl('label', 'pods', 'web', 'tier-')).toBe('pod/web unlabeled\n');
      expect(
        await kubectl(
          'patch',
          'pod',
          'web',
          '-p',
          '{"spec":{"containers":[{"name":"app","image":"nginx:1.28"}]}}',
        ),
      ).toBe('pod/web patched\n');
      expect(
        await kubectl('patch', 'svc', 'web', '--type=merge', '-p', '{"metadata":{"labels":{"m":"1"}}}'),
      ).toBe('service/web patched\n');
      expect(
        await kubectl(
          'patch',
          'svc',
          'web',
          '--type=json',
          '-p',
          '[{"op":"replace","path":"/spec/ports/0/targetPort","value":9090}]',
        ),
      ).toBe('service/web patched\n');
      const pod = h.server.store.get('pods', 'default', 'web') as any;
      expect(pod.metadata.labels).toEqual({ app: 'web' });
      expect(pod.metadata.annotations.note).toBe('hello');
      expect(pod.spec.containers[0].image).toBe('nginx:1.28');
      expect((h.server.store.get('services', 'default', 'web') as any).spec.ports[0].targetPort).toBe(9090);
      const edited = await run(['edit', 'svc', 'web'], {
        KUBE_EDITOR: "sed -i -e 's/targetPort: 9090/targetPort: 7070/'",
      });
      expect(edited.stdout).toBe('service/web edited\n');
      expect((h.server.store.get('services', 'default', 'web') as any).spec.ports[0].targetPort).toBe(7070);
    });

    test('422 from allocation is printed as kube-apiserver prints it', async () => {
      const yaml = (name: string) => `apiVersion: v1
kind: Service
metadata: {name: ${name}}
spec:
  type: NodePort
  selector: {app: web}
  ports: [{port: 80, nodePort: 30080}]
`;
      await writeFile(join(h.dir, 'np1.yaml'), yaml('np1'));
      await writeFile(join(h.dir, 'np2.yaml'), yaml('np2'));
      expect(await kubectl('create', '-f', join(h.dir, 'np1.yaml'))).toBe('service/np1 created\n');
      const r = await run(['create', '-f', join(h.dir, 'np2.yaml')]);
      expect(r.code).not.toBe(0);
      expect(r.stderr).toBe(
        'The Service "np2" is invalid: spec.ports[0].nodePort: Invalid value: 30080: provided port is already allocated\n',
      );
    });

    test('a 10 MiB pod is refused with 413 as kube-apiserver refuses it', async () => {
      const big = 'x'.repeat(10 * 1024 * 1024);
      await writeFile(
        join(h.dir, 'big.yaml'),
        `apiVersion: v1\nkind: Pod\nmetadata:\n  name: big\n  annotations: {big: "${big}"}\nspec:\n  containers: [{name: a, image: busybox}]\n`,
      );
      const r = await run(['create', '-f', join(h.dir, 'big.yaml')]);
      expect(r.code).not.toBe(0);
      expect(r.stderr).toContain('Request entity too large: limit is 3145728');
      expect(h.server.store.tryGet('pods', 'default', 'big')).toBeUndefined();
    });

    test('wait --for=condition=Ready with the status set by the test; get -w', async () => {
      const waiting = run(['wait', '--for=condition=Ready', 'pod/web', '--timeout=15s']);
      await new Promise((r) => setTimeout(r, 300));
      const pod = h.server.store.get('pods', 'default', 'web');
      pod.status = {
        phase: 'Running',
        conditions: [
          {
            type: 'Ready',
            status: 'True',
            lastTransitionTime: new Date().toISOString().replace(/\.\d+Z$/, 'Z'),
          },
        ],
      };
      h.server.store.update('pods', pod, { subresource: 'status' });
      const waited = await waiting;
      expect(waited.stdout).toBe('pod/web condition met\n');

      // Nothing else watches over HTTP here once kubectl wait's watch has closed.
      await waitUntil(() => h.server.openWatches === 0);
      const watch = h.watch('get', 'pod', 'web', '-w', '-o', 'jsonpath={.metadata.labels.color}{"\\n"}');
      try {
        await watch.until('\n', 5_000);
        // kubectl prints the pod, then watches it from resourceVersion 0 and drops the first
        // event (the state at that moment). A change made before its WATCH arrives is folded
        // into that dropped event, on a real API server as here: wait for the watch to open.
        await waitUntil(() => h.server.openWatches === 1);
        expect(h.server.openWatches, `kubectl's watch never opened; stderr: ${watch.err}`).toBe(1);
        h.server.store.patch('pods', 'default', 'web', 'merge', { metadata: { labels: { color: 'blue' } } });
        await watch.until('blue', 5_000);
        expect(watch.out, `stderr: ${watch.err}`).toBe('\nblue\n');
      } finally {
        watch.stop();
      }
    });

    test('kubectl run on a multi-node setup: the pod is scheduled', async () => {
      expect(await kubectl('run', 'x', '--image=busybox', '--restart=Never')).toBe('pod/x created\n');
      for (let i = 0; i < 100; i++) {
        if ((h.server.store.get('pods', 'default', 'x') as any).spec?.nodeName) break;
        await new Promise((r) => setTimeout(r, 20));
      }
      expect(
        await kubectl(
          'get',
          'pod',
          'x',
          '-o',
          'jsonpath={.spec.nodeName},{.spec.containers[0].imagePullPolicy}',
        ),
      ).toBe('node-1,Always');
    });

    test('delete: the service frees its clusterIP; a bound pod terminates gracefully', async () => {
      const ip = await kubectl('get', 'svc', 'web', '-o', 'jsonpath={.spec.clusterIP}');
      expect(await kubectl('delete', 'svc', 'web')).toBe('service "web" deleted\n');
      await writeFile(
        join(h.dir, 'again.yaml'),
        `apiVersion: v1\nkind: Service\nmetadata: {name: again}\nspec:\n  clusterIP: ${ip}\n  ports: [{port: 80}]\n`,
      );
      expect(await kubectl('create', '-f', join(h.dir, 'again.yaml'))).toBe('service/again created\n');
      expect(await kubectl('delete', 'pod', 'web', '--wait=false')).toBe('pod "web" deleted\n');
      expect(h.server.store.get('pods', 'default', 'web').metadata?.deletionGracePeriodSeconds).toBe(30);
    });
  },
  120_000,
);
