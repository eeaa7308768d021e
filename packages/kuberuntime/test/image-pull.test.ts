import type { V1Pod } from '@kubernetes/client-node';
import * as promClient from 'prom-client';
import { afterEach, describe, expect, it } from 'vitest';
import { applyDefaultImageTag, credentialsFor, effectivePullPolicy } from '../src/image-puller.js';
import { SyncStepError } from '../src/index.js';
import { type Harness, startHarness } from './harness.js';

let h: Harness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

function pod(image: string, imagePullPolicy?: string): V1Pod {
  return {
    metadata: { name: 'web', namespace: 'default', uid: 'uid-web' },
    spec: { containers: [{ name: 'app', image, ...(imagePullPolicy ? { imagePullPolicy } : {}) }] },
  };
}

async function syncOnce(p: V1Pod) {
  if (h === undefined) throw new Error('no harness');
  const result = await h.manager.syncPod(p, await h.manager.getPodStatus(p));
  const api = h.manager.computePodStatus(p, await h.manager.getPodStatus(p));
  return { result, waiting: api.containerStatuses?.[0]?.state?.waiting };
}

describe('image pulls', () => {
  it('ErrImagePull, then ImagePullBackOff until 10 s passed, then 20 s', async () => {
    h = await startHarness();
    const p = pod('registry.example/nope:1', 'IfNotPresent');
    let out = await syncOnce(p);
    expect(out.waiting?.reason).toBe('ErrImagePull');
    expect(out.waiting?.message).toMatch(/^Failed to pull image "registry.example\/nope:1": /);
    expect(h.fake.calls('PullImage')).toHaveLength(1);
    out = await syncOnce(p);
    expect(out.waiting).toEqual({
      reason: 'ImagePullBackOff',
      message: 'Back-off pulling image "registry.example/nope:1"',
    });
    await h.clock.advance(9_999);
    await syncOnce(p);
    expect(h.fake.calls('PullImage')).toHaveLength(1);
    await h.clock.advance(1);
    out = await syncOnce(p);
    expect(h.fake.calls('PullImage')).toHaveLength(2);
    expect(out.waiting?.reason).toBe('ErrImagePull');
    await h.clock.advance(19_999);
    await syncOnce(p);
    expect(h.fake.calls('PullImage')).toHaveLength(2);
    // once the registry has it, the next attempt after the backoff succeeds
    h.fake.addRegistryImage({ ref: 'registry.example/nope:1' });
    await h.clock.advance(1);
    out = await syncOnce(p);
    expect(out.result.error()).toBeUndefined();
    expect(h.fake.calls('PullImage')).toHaveLength(3);
  });

  it('Never: ErrImageNeverPull without pulling; IfNotPresent: no pull when present; Always: pulls', async () => {
    h = await startHarness();
    let out = await syncOnce(pod('other:1', 'Never'));
    expect(out.waiting).toEqual({
      reason: 'ErrImageNeverPull',
      message: 'Container image "other:1" is not present with pull policy of Never',
    });
    expect(h.fake.calls('PullImage')).toHaveLength(0);
    await h.close();
    h = await startHarness();
    out = await syncOnce(pod('busybox:1.36', 'IfNotPresent'));
    expect(out.result.error()).toBeUndefined();
    expect(h.fake.calls('PullImage')).toHaveLength(0);
    await h.close();
    h = await startHarness();
    await syncOnce(pod('busybox:1.36', 'Always'));
    expect(h.fake.calls('PullImage')).toHaveLength(1);
  });

  it('records kubelet metrics on an injected registry', async () => {
    const registry = new promClient.Registry();
    h = await startHarness({}, { metrics: { registry, promClient } });
    await syncOnce(pod('busybox:1.36', 'Always'));
    const text = await registry.metrics();
    expect(text).toContain('kubelet_started_containers_total{container_type="container"} 1');
    expect(text).toContain('kubelet_started_pods_total 1');
    expect(text).toMatch(/kubelet_run_podsandbox_duration_seconds_count\{runtime_handler=""\} 1/);
    expect(text).toMatch(/kubelet_image_pull_duration_seconds_count\{image_size_in_bytes="[^"]+"\} 1/);
  });
});

describe('image helpers', () => {
  it.each([
    ['busybox', 'busybox:latest'],
    ['busybox:1.36', 'busybox:1.36'],
    ['localhost:5000/x', 'localhost:5000/x:latest'],
    ['r.example/a/b@sha256:0123', 'r.example/a/b@sha256:0123'],
  ])('default tag of %s is %s', (a, b) => expect(applyDefaultImageTag(a)).toBe(b));

  it('invalid names are InvalidImageName', () => {
    expect(() => applyDefaultImageTag('Busy Box')).toThrow(SyncStepError);
  });

  it.each([
    ['busybox', 'Always'],
    ['busybox:latest', 'Always'],
    ['busybox:1.36', 'IfNotPresent'],
    ['localhost:5000/x', 'Always'],
    ['x@sha256:00', 'IfNotPresent'],
  ])('default pull policy of %s is %s', (image, policy) =>
    expect(effectivePullPolicy({ name: 'c', image })).toBe(policy),
  );

  it('pull secrets: dockerconfigjson auths matched by registry', () => {
    const cfg = {
      auths: {
        'r.example': { auth: Buffer.from('me:pw').toString('base64') },
        'https://index.docker.io/v1/': { username: 'd', password: 'p' },
      },
    };
    const secret = { data: { '.dockerconfigjson': Buffer.from(JSON.stringify(cfg)).toString('base64') } };
    expect(credentialsFor('r.example/app:1', [secret])).toMatchObject([
      { username: 'me', password: 'pw', serverAddress: 'r.example' },
    ]);
    expect(credentialsFor('busybox', [secret])).toMatchObject([{ username: 'd', password: 'p' }]);
    expect(credentialsFor('other.example/x', [secret])).toEqual([]);
  });
});
