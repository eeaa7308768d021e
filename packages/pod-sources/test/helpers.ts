// Small builders for pod-sources tests.
import type { V1Pod } from '@kubernetes/client-node';
import type { PodConfig, PodUpdate } from '../src/index.js';

export function apiPod(name: string, uid: string, extra: Partial<V1Pod> = {}): V1Pod {
  return {
    metadata: { name, namespace: 'default', uid },
    spec: { containers: [{ name: 'c', image: 'busybox' }] },
    ...extra,
  };
}

/** Everything the config emitted so far (drains the channel without waiting). */
export function drain(config: PodConfig): { op: string; source: string; names: string[] }[] {
  const out: { op: string; source: string; names: string[] }[] = [];
  while (config.updates.length > 0) {
    const u = config.updates.tryReceive() as PodUpdate;
    out.push({ op: u.op, source: u.source, names: u.pods.map((p) => p.metadata?.name ?? '') });
  }
  return out;
}

export const podYaml = (name: string, image = 'busybox', extra = '') => `apiVersion: v1
kind: Pod
metadata:
  name: ${name}
spec:
  containers:
  - name: main
    image: ${image}
${extra}`;
