// Pod and Node builders for the admission tables.
import type { V1Container, V1Node, V1Pod, V1Taint } from '@kubernetes/client-node';

export function node(
  overrides: {
    allocatable?: Record<string, string>;
    labels?: Record<string, string>;
    taints?: V1Taint[];
  } = {},
): V1Node {
  return {
    metadata: { name: 'node-1', labels: overrides.labels ?? { 'kubernetes.io/hostname': 'node-1' } },
    spec: overrides.taints === undefined ? {} : { taints: overrides.taints },
    status: {
      allocatable: overrides.allocatable ?? {
        cpu: '2',
        memory: '4Gi',
        'ephemeral-storage': '10Gi',
        pods: '110',
      },
    },
  };
}

let seq = 0;
export function pod(
  spec: Partial<NonNullable<V1Pod['spec']>> = {},
  meta: Partial<NonNullable<V1Pod['metadata']>> = {},
): V1Pod {
  seq++;
  return {
    metadata: { name: `p${seq}`, namespace: 'default', uid: `uid-${seq}`, ...meta },
    spec: { containers: [{ name: 'c' }], ...spec },
  };
}

export function requests(req: Record<string, string>, extra: Partial<V1Container> = {}): V1Container[] {
  return [{ name: 'c', resources: { requests: req }, ...extra }];
}
