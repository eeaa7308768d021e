/** Pods written straight into a mini-apiserver's store, and a comparable view of a pod list. */
import type { MiniApiServer } from '../../mini-apiserver/src/index.js';
import type { KubeObject } from '../src/index.js';

/** Creates pod `name` in `default`, or updates it, with label `v` set to `v`. */
export function writePod(server: MiniApiServer, name: string, v: number): void {
  const existing = server.store.tryGet('pods', 'default', name);
  if (existing) {
    server.store.update('pods', {
      ...existing,
      metadata: { ...existing.metadata, labels: { v: String(v) } },
    });
    return;
  }
  const pod: KubeObject = {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, namespace: 'default', labels: { v: String(v) } },
    spec: { containers: [{ name: 'c', image: 'busybox' }] },
  };
  server.store.create('pods', pod as never);
}

/** `name@resourceVersion` of each pod, sorted and joined: equal views mean equal caches. */
export const podsView = (pods: readonly KubeObject[]): string =>
  pods
    .map((p) => `${p.metadata?.name}@${p.metadata?.resourceVersion}`)
    .sort()
    .join(',');
