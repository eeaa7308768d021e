import type { V1Container, V1Pod } from '@kubernetes/client-node';
import { NamespaceMode, PodSandboxState, type PodSandboxStatus } from '@nodeagent/cri';
import type { ContainerRuntimeStatus, PodStatus, RuntimeContainerState } from '@nodeagent/kubecontainer';
import { hashContainer } from '../src/container-hash.js';

export function makePod(spec: Partial<NonNullable<V1Pod['spec']>> = {}, name = 'web'): V1Pod {
  return {
    metadata: { name, namespace: 'default', uid: `uid-${name}` },
    spec: { containers: [{ name: 'app', image: 'busybox:1.36' }], ...spec },
  };
}

export function sandbox(
  attempt = 0,
  state = PodSandboxState.SANDBOX_READY,
  ip = '10.88.0.5',
  network = NamespaceMode.POD,
): PodSandboxStatus {
  return {
    id: `sb-${attempt}`,
    metadata: { name: 'web', namespace: 'default', uid: 'uid-web', attempt },
    state,
    createdAt: BigInt(attempt),
    network: { ip, additionalIps: [] },
    linux: { namespaces: { options: { network, pid: 1, ipc: 0, targetId: '' } } },
    labels: {},
    annotations: {},
    runtimeHandler: '',
  };
}

let seq = 0;
export function cstatus(
  container: V1Container,
  state: RuntimeContainerState,
  extra: Partial<ContainerRuntimeStatus> = {},
): ContainerRuntimeStatus {
  seq++;
  return {
    id: `c-${container.name}-${seq}`,
    name: container.name,
    state,
    createdAt: 1000 + seq,
    startedAt: state === 'created' ? 0 : 2000,
    finishedAt: state === 'exited' ? 3000 : 0,
    exitCode: 0,
    image: container.image ?? '',
    imageRef: 'sha256:abc',
    imageId: 'sha256:abc',
    imageRuntimeHandler: '',
    hash: hashContainer(container),
    restartCount: 0,
    reason: state === 'exited' ? ((extra.exitCode ?? 0) === 0 ? 'Completed' : 'Error') : '',
    message: '',
    resources: undefined,
    user: undefined,
    mounts: [],
    logPath: '',
    labels: {},
    annotations: {},
    ...extra,
  };
}

export function podStatus(
  containers: ContainerRuntimeStatus[] = [],
  sandboxes: PodSandboxStatus[] = [sandbox()],
): PodStatus {
  return {
    id: 'uid-web',
    name: 'web',
    namespace: 'default',
    ips: sandboxes[0]?.state === PodSandboxState.SANDBOX_READY ? [sandboxes[0]?.network?.ip ?? ''] : [],
    containerStatuses: containers,
    sandboxStatuses: sandboxes,
    timestamp: 0,
  };
}
