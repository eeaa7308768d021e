// MirrorPodManager: create, recreate after deletion, replace a stale hash, delete orphans.
import type { V1Pod } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import {
  applyStaticPodDefaults,
  CONFIG_MIRROR_ANNOTATION,
  type MirrorPodApi,
  MirrorPodManager,
  mirrorPodFor,
} from '../src/index.js';

class FakeApi implements MirrorPodApi {
  readonly pods = new Map<string, V1Pod>();
  readonly calls: string[] = [];
  nextUid = 1;
  failCreate: number | undefined;
  async createPod(namespace: string, pod: V1Pod): Promise<void> {
    const key = `${namespace}/${pod.metadata?.name}`;
    this.calls.push(`create ${key}`);
    if (this.failCreate !== undefined) throw Object.assign(new Error('nope'), { code: this.failCreate });
    if (this.pods.has(key)) throw Object.assign(new Error('exists'), { code: 409 });
    this.pods.set(key, { ...pod, metadata: { ...pod.metadata, uid: `api-${this.nextUid++}` } });
  }
  async deletePod(namespace: string, name: string, uid: string): Promise<void> {
    const key = `${namespace}/${name}`;
    this.calls.push(`delete ${key} ${uid}`);
    const existing = this.pods.get(key);
    if (existing === undefined) throw Object.assign(new Error('not found'), { code: 404 });
    if (existing.metadata?.uid !== uid) throw Object.assign(new Error('conflict'), { code: 409 });
    this.pods.delete(key);
  }
  list(): V1Pod[] {
    return [...this.pods.values()];
  }
}

const staticPod = (image: string) =>
  applyStaticPodDefaults(
    {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'web', labels: { app: 'web' } },
      spec: { containers: [{ name: 'c', image }] },
    },
    { nodeName: 'node-1', source: 'file', location: '/m/web.yaml' },
  );

describe('mirror pods', () => {
  it('the mirror pod: same name, namespace, labels and spec, config.mirror = hash, the Node as controller', () => {
    const pod = staticPod('nginx');
    const mirror = mirrorPodFor(pod, 'node-1', 'node-uid');
    expect(mirror.metadata?.uid).toBeUndefined();
    expect(mirror.metadata?.name).toBe('web-node-1');
    expect(mirror.metadata?.labels).toEqual({ app: 'web' });
    expect(mirror.metadata?.annotations?.[CONFIG_MIRROR_ANNOTATION]).toBe(pod.metadata?.uid);
    expect(mirror.metadata?.ownerReferences).toEqual([
      { apiVersion: 'v1', kind: 'Node', name: 'node-1', uid: 'node-uid', controller: true },
    ]);
    expect(mirror.spec).toEqual(pod.spec);
  });

  it('creates a missing mirror, recreates it after a deletion, replaces a stale one and deletes orphans', async () => {
    const api = new FakeApi();
    const created: string[] = [];
    const manager = new MirrorPodManager({
      api,
      nodeName: 'node-1',
      nodeUid: () => 'node-uid',
      onCreated: (p) => created.push(p.metadata?.uid ?? ''),
    });
    const v1 = staticPod('nginx:1');
    await manager.reconcile([v1], api.list());
    expect(api.calls).toEqual(['create default/web-node-1']);
    await manager.reconcile([v1], api.list());
    expect(api.calls).toHaveLength(1);
    api.pods.clear(); // someone deleted it through the API
    await manager.reconcile([v1], api.list());
    expect(api.calls.at(-1)).toBe('create default/web-node-1');
    // The manifest changed: a new hash, so the old mirror goes (UID precondition) and a new one comes.
    const v2 = staticPod('nginx:2');
    const oldUid = api.list()[0]?.metadata?.uid;
    await manager.reconcile([v2], api.list());
    expect(api.calls.slice(-2)).toEqual([`delete default/web-node-1 ${oldUid}`, 'create default/web-node-1']);
    expect(api.list()[0]?.metadata?.annotations?.[CONFIG_MIRROR_ANNOTATION]).toBe(v2.metadata?.uid);
    // The static pod is gone: the orphan is deleted.
    await manager.reconcile([], api.list());
    expect(api.list()).toEqual([]);
    expect(manager.created).toBe(3);
    expect(created).toEqual([v1.metadata?.uid, v1.metadata?.uid, v2.metadata?.uid]);
    expect(manager.deleted).toBe(2);
  });

  it('a mirror being deleted is replaced; an orphan whose static pod still terminates waits', async () => {
    const api = new FakeApi();
    let terminating = true;
    const manager = new MirrorPodManager({
      api,
      nodeName: 'node-1',
      nodeUid: () => 'u',
      isTerminating: () => terminating,
    });
    const pod = staticPod('nginx');
    await manager.reconcile([pod], api.list());
    const [mirror] = api.list();
    const deleting = { ...mirror, metadata: { ...mirror?.metadata, deletionTimestamp: new Date() } };
    await manager.reconcile([pod], [deleting]);
    expect(api.calls.slice(-2)).toEqual([
      `delete default/web-node-1 ${mirror?.metadata?.uid}`,
      'create default/web-node-1',
    ]);
    await manager.reconcile([], api.list());
    expect(api.list()).toHaveLength(1);
    terminating = false;
    await manager.reconcile([], api.list());
    expect(api.list()).toHaveLength(0);
  });

  it('orphans stay while not every source has been seen (a restarting agent)', async () => {
    const api = new FakeApi();
    const manager = new MirrorPodManager({ api, nodeName: 'node-1', nodeUid: () => 'u' });
    await manager.reconcile([staticPod('x')], []);
    await manager.reconcile([], api.list(), false);
    expect(api.list()).toHaveLength(1);
    await manager.reconcile([], api.list(), true);
    expect(api.list()).toHaveLength(0);
  });

  it('no mirror while the node UID is unknown; API failures are retried by the next pass, never thrown', async () => {
    const api = new FakeApi();
    let nodeUid: string | undefined;
    const manager = new MirrorPodManager({ api, nodeName: 'node-1', nodeUid: () => nodeUid });
    await manager.reconcile([staticPod('x')], []);
    expect(api.calls).toEqual([]);
    nodeUid = 'u';
    api.failCreate = 500;
    await expect(manager.reconcile([staticPod('x')], [])).resolves.toBeUndefined();
    api.failCreate = undefined;
    await manager.reconcile([staticPod('x')], api.list());
    expect(api.list()).toHaveLength(1);
  });
});
