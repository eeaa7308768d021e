// Shared set-up of the PLEG tests: a FakeRuntime on a FakeClock over its real socket, a CRI
// client, kubelet-labelled pod/container configs, and small in-memory doubles.
import { FakeClock } from '@nodeagent/core/testing';
import {
  type ContainerConfig,
  type CriClient,
  createCriClient,
  type PartialMessage,
  type PodSandboxConfig,
} from '@nodeagent/cri';
import { FakeRuntime, type FakeRuntimeOptions } from '@nodeagent/cri/testing';
import {
  CONTAINER_HASH_ANNOTATION,
  CONTAINER_RESTART_COUNT_ANNOTATION,
  KUBERNETES_CONTAINER_NAME_LABEL,
  KUBERNETES_POD_NAME_LABEL,
  KUBERNETES_POD_NAMESPACE_LABEL,
  KUBERNETES_POD_UID_LABEL,
} from '../src/index.js';

export const BUSYBOX = 'registry.local/busybox:latest';

export interface Harness {
  readonly fake: FakeRuntime;
  readonly cri: CriClient;
  readonly clock: FakeClock;
  close(): Promise<void>;
}

/** A started FakeRuntime (fake clock, busybox preloaded) and a client on its socket. */
export async function startHarness(options: FakeRuntimeOptions = {}): Promise<Harness> {
  const clock = new FakeClock();
  const fake = new FakeRuntime({ clock, images: [{ ref: BUSYBOX }], ...options });
  await fake.start();
  const cri = createCriClient(fake.endpoint, { timeoutMs: 10_000 });
  return {
    fake,
    cri,
    clock,
    async close() {
      cri.close();
      await fake.stop();
    },
  };
}

/** A sandbox config labelled as the kubelet labels it. */
export function kubeletPod(
  name: string,
  uid = `uid-${name}`,
  namespace = 'default',
): PartialMessage<PodSandboxConfig> {
  return {
    metadata: { name, namespace, uid, attempt: 0 },
    hostname: name,
    logDirectory: `/var/log/pods/${namespace}_${name}_${uid}`,
    labels: {
      [KUBERNETES_POD_NAME_LABEL]: name,
      [KUBERNETES_POD_NAMESPACE_LABEL]: namespace,
      [KUBERNETES_POD_UID_LABEL]: uid,
    },
  };
}

/** A container config labelled and annotated as the kubelet does. */
export function kubeletContainer(
  pod: PartialMessage<PodSandboxConfig>,
  name: string,
  options: { readonly attempt?: number; readonly restartCount?: number; readonly hash?: string } = {},
): PartialMessage<ContainerConfig> {
  const md = pod.metadata ?? {};
  return {
    metadata: { name, attempt: options.attempt ?? 0 },
    image: { image: BUSYBOX },
    command: ['sleep', '1000'],
    labels: {
      [KUBERNETES_POD_NAME_LABEL]: md.name ?? '',
      [KUBERNETES_POD_NAMESPACE_LABEL]: md.namespace ?? '',
      [KUBERNETES_POD_UID_LABEL]: md.uid ?? '',
      [KUBERNETES_CONTAINER_NAME_LABEL]: name,
    },
    annotations: {
      [CONTAINER_HASH_ANNOTATION]: options.hash ?? 'abc123',
      [CONTAINER_RESTART_COUNT_ANNOTATION]: String(options.restartCount ?? 0),
    },
    logPath: `${name}/${options.attempt ?? 0}.log`,
  };
}

/** Waits (real time, briefly) until `check()` holds: for work travelling over the socket. */
export async function until(check: () => boolean, what = 'condition', maxMs = 3000): Promise<void> {
  const deadline = Date.now() + maxMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 2));
  }
}

/** Method names of the fake's call log, from index `from`. */
export function callsSince(fake: FakeRuntime, from: number): string[] {
  return fake.callNames().slice(from);
}
