// biome-ignore-all lint/suspicious/noExplicitAny: assertions read raw API JSON
import { describe, expect, test } from 'vitest';
import { kubectlMissing, useKubectlServer } from './kubectl-harness.js';

// kubectl's typed clients send these objects as protobuf (`application/vnd.kubernetes.protobuf`).
describe.skipIf(kubectlMissing && process.env.CI !== 'true')(
  'kubectl with ConfigMaps, Secrets, ServiceAccounts and tokens',
  () => {
    const h = useKubectlServer('mini-apiserver-kubectl-config-');
    const kubectl = h.kubectl;

    test('create configmap / secret generic / secret tls / serviceaccount, and get them', async () => {
      expect(
        await kubectl('create', 'configmap', 'app', '--from-literal=a=b', '--from-literal=c.txt=line'),
      ).toBe('configmap/app created\n');
      expect((h.server.store.get('configmaps', 'default', 'app') as any).data).toEqual({
        a: 'b',
        'c.txt': 'line',
      });
      expect(await kubectl('create', 'secret', 'generic', 'creds', '--from-literal=password=s3cr3t')).toBe(
        'secret/creds created\n',
      );
      const secret = h.server.store.get('secrets', 'default', 'creds') as any;
      expect(secret.type).toBe('Opaque');
      expect(Buffer.from(secret.data.password, 'base64').toString()).toBe('s3cr3t');
      expect(await kubectl('create', 'serviceaccount', 'bot', '--namespace', 'kube-system')).toBe(
        'serviceaccount/bot created\n',
      );
      expect(h.server.store.tryGet('serviceaccounts', 'kube-system', 'bot')).toBeDefined();
      expect(await kubectl('get', 'cm,secret,sa', '-o', 'name')).toBe(
        ['configmap/app', 'configmap/kube-root-ca.crt', 'secret/creds', 'serviceaccount/default', ''].join(
          '\n',
        ),
      );
      // The type travels in the protobuf body; the server refuses the missing key (422).
      const bad = kubectl(
        'create',
        'secret',
        'generic',
        'half-tls',
        '--type=kubernetes.io/tls',
        '--from-literal=tls.crt=c',
      );
      await expect(bad).rejects.toThrow('Secret "half-tls" is invalid: data[tls.key]: Required value');
      const json = JSON.parse(await kubectl('get', 'secret', 'creds', '-o', 'json'));
      expect(json.data.password).toBe(Buffer.from('s3cr3t').toString('base64'));
    });

    test('kubectl get prints the upstream columns: NAME DATA AGE, NAME TYPE DATA AGE, NAME SECRETS AGE', async () => {
      await kubectl('create', 'secret', 'generic', 'two', '--from-literal=a=1', '--from-literal=b=2');
      const cm = (await kubectl('get', 'configmap', 'app')).split('\n');
      expect(cm[0]).toMatch(/^NAME\s+DATA\s+AGE$/);
      expect(cm[1]).toMatch(/^app\s+2\s+\d+s$/);
      const secrets = (await kubectl('get', 'secrets')).split('\n');
      expect(secrets[0]).toMatch(/^NAME\s+TYPE\s+DATA\s+AGE$/);
      expect(secrets).toContainEqual(expect.stringMatching(/^two\s+Opaque\s+2\s+\d+s$/));
      const sa = (await kubectl('get', 'sa', '-n', 'kube-system', '--show-labels')).split('\n');
      expect(sa[0]).toMatch(/^NAME\s+SECRETS\s+AGE\s+LABELS$/);
      expect(sa).toContainEqual(expect.stringMatching(/^default\s+0\s+\d+s\s+<none>$/));
      const all = await kubectl('get', 'cm', '-A');
      expect(all.split('\n')[0]).toMatch(/^NAMESPACE\s+NAME\s+DATA\s+AGE$/);
      expect(all).toMatch(/kube-system\s+kube-root-ca\.crt\s+1\s/);
    });

    test('kubectl describe configmap, secret and serviceaccount', async () => {
      expect(await kubectl('describe', 'configmap', 'app')).toMatch(/Name:\s+app[\s\S]*c\.txt:[\s\S]*line/);
      expect(await kubectl('describe', 'secret', 'creds')).toMatch(
        /Type:\s+Opaque[\s\S]*password:\s+6 bytes/,
      );
      expect(await kubectl('describe', 'serviceaccount', 'default')).toMatch(/Name:\s+default/);
    });

    test('create token default --audience x, then TokenReview accepts it for that audience', async () => {
      const token = (
        await kubectl('create', 'token', 'default', '--audience', 'x', '--duration', '20m')
      ).trim();
      const payload = JSON.parse(Buffer.from(token.split('.')[1] as string, 'base64url').toString());
      expect(payload.aud).toEqual(['x']);
      expect(payload.exp - payload.iat).toBe(1200);
      expect(payload.sub).toBe('system:serviceaccount:default:default');
      const review = h.server.serviceAccountTokens.authenticate(token, ['x']);
      expect(review).toMatchObject({ ok: true, audiences: ['x'] });
      // Bound to a pod: the reference travels in the protobuf TokenRequest.
      const p = h.server.store.create('pods', {
        metadata: { name: 'web', namespace: 'default' },
        spec: { serviceAccountName: 'default', containers: [{ name: 'app', image: 'busybox' }] },
      });
      const bound = (
        await kubectl(
          'create',
          'token',
          'default',
          '--bound-object-kind',
          'Pod',
          '--bound-object-name',
          'web',
        )
      ).trim();
      const claims = JSON.parse(Buffer.from(bound.split('.')[1] as string, 'base64url').toString());
      expect(claims['kubernetes.io'].pod).toEqual({ name: 'web', uid: p.metadata?.uid });
      const tooShort = kubectl('create', 'token', 'default', '--duration', '5m');
      await expect(tooShort).rejects.toThrow(/may not specify a duration less than 10 minutes/);
    });
  },
);
