// biome-ignore-all lint/suspicious/noExplicitAny: assertions read raw API JSON
// apps/v1 DaemonSets: stored with kube-apiserver's defaults, validated as upstream's
// ValidateDaemonSetSpec (messages and field paths), printed with kubectl's columns, and
// usable with `kubectl apply --dry-run=server` (what the reference agent's deploy manifests
// are checked with). No DaemonSet controller: nothing creates the daemon pods.
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import { kubectlMissing, useKubectlServer } from './kubectl-harness.js';

if (kubectlMissing && process.env.CI !== 'true') {
  console.warn('\n*** kubectl not found: skipping the DaemonSet kubectl tests ***\n');
}

function daemonSet(name: string, patch: (ds: any) => void = () => {}): any {
  const ds = {
    apiVersion: 'apps/v1',
    kind: 'DaemonSet',
    metadata: { name, namespace: 'default' },
    spec: {
      selector: { matchLabels: { app: name } },
      template: {
        metadata: { labels: { app: name, tier: 'node' } },
        spec: {
          nodeSelector: { 'kubernetes.io/os': 'linux' },
          containers: [{ name: 'agent', image: 'example.test/agent:1.0' }],
        },
      },
    },
  };
  patch(ds);
  return ds;
}

describe.skipIf(kubectlMissing && process.env.CI !== 'true')('DaemonSets with the real kubectl', () => {
  const h = useKubectlServer('nodeagent-ds-');

  test('apply stores the defaults kube-apiserver sets; get prints kubectl columns', async () => {
    const file = join(h.dir, 'ds.json');
    await writeFile(file, JSON.stringify(daemonSet('node-agent')));
    expect(await h.kubectl('apply', '-f', file)).toContain('daemonset.apps/node-agent created');
    const stored = JSON.parse(await h.kubectl('get', 'ds', 'node-agent', '-o', 'json'));
    expect(stored.spec.updateStrategy).toEqual({
      type: 'RollingUpdate',
      rollingUpdate: { maxUnavailable: 1, maxSurge: 0 },
    });
    expect(stored.spec.revisionHistoryLimit).toBe(10);
    const pod = stored.spec.template.spec;
    expect(pod.restartPolicy).toBe('Always');
    expect(pod.dnsPolicy).toBe('ClusterFirst');
    expect(pod.terminationGracePeriodSeconds).toBe(30);
    expect(pod.containers[0].imagePullPolicy).toBe('IfNotPresent');
    // DefaultTolerationSeconds is a pod admission; a template gets no tolerations.
    expect(pod.tolerations).toBeUndefined();
    const table = await h.kubectl('get', 'daemonsets', '-o', 'wide');
    const [header, row] = table.trim().split('\n');
    expect(header?.split(/\s{2,}/)).toEqual([
      'NAME',
      'DESIRED',
      'CURRENT',
      'READY',
      'UP-TO-DATE',
      'AVAILABLE',
      'NODE SELECTOR',
      'AGE',
      'CONTAINERS',
      'IMAGES',
      'SELECTOR',
    ]);
    expect(row?.split(/\s{2,}/)).toEqual([
      'node-agent',
      '0',
      '0',
      '0',
      '0',
      '0',
      'kubernetes.io/os=linux',
      expect.stringMatching(/^\d+s$/),
      'agent',
      'example.test/agent:1.0',
      'app=node-agent',
    ]);
  });

  test('apply --dry-run=server validates without storing', async () => {
    const file = join(h.dir, 'dry.json');
    await writeFile(file, JSON.stringify(daemonSet('dry')));
    expect(await h.kubectl('apply', '--dry-run=server', '-f', file)).toContain(
      'daemonset.apps/dry created (server dry run)',
    );
    await expect(h.kubectl('get', 'ds', 'dry')).rejects.toThrow(/NotFound|not found/);
  });

  test("upstream's validation messages", async () => {
    const file = join(h.dir, 'bad.json');
    await writeFile(
      file,
      JSON.stringify(
        daemonSet('bad', (ds) => {
          ds.spec.selector = { matchLabels: { app: 'other' } };
          ds.spec.template.spec.restartPolicy = 'Never';
          ds.spec.template.spec.containers[0].image = '';
          ds.spec.updateStrategy = { type: 'Sometimes' };
        }),
      ),
    );
    const err = await h.kubectl('apply', '--dry-run=server', '-f', file).then(
      () => '',
      (e: Error) => e.message,
    );
    expect(err).toContain('The DaemonSet "bad" is invalid');
    expect(err).toContain(
      'spec.template.metadata.labels: Invalid value: map[string]string{"app":"bad", "tier":"node"}: `selector` does not match template `labels`',
    );
    expect(err).toContain('spec.template.spec.containers[0].image: Required value');
    expect(err).toContain(
      'spec.template.spec.restartPolicy: Unsupported value: "Never": supported values: "Always"',
    );
    expect(err).toContain(
      'spec.updateStrategy.type: Unsupported value: "Sometimes": supported values: "OnDelete", "RollingUpdate"',
    );
  });

  test('an empty selector is refused on its own', async () => {
    const bad = daemonSet('empty', (ds) => {
      ds.spec.selector = {};
    });
    const res = await fetch(`${h.server.url}/apis/apps/v1/namespaces/default/daemonsets`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(bad),
    });
    expect(res.status).toBe(422);
    const status = (await res.json()) as any;
    expect(status.message).toBe(
      'DaemonSet.apps "empty" is invalid: spec.selector: Invalid value: v1.LabelSelector{MatchLabels:map[string]string(nil), MatchExpressions:[]v1.LabelSelectorRequirement(nil)}: empty selector is invalid for daemonset',
    );
    expect(status.details).toMatchObject({ name: 'empty', group: 'apps', kind: 'DaemonSet' });
    expect(status.details.causes).toEqual([
      {
        reason: 'FieldValueInvalid',
        message:
          'Invalid value: v1.LabelSelector{MatchLabels:map[string]string(nil), MatchExpressions:[]v1.LabelSelectorRequirement(nil)}: empty selector is invalid for daemonset',
        field: 'spec.selector',
      },
    ]);
  });
});
