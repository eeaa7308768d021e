/**
 * Test helpers for code built on the runtime model: {@link startFakeRuntime} (the fake CRI
 * runtime of `@nodeagent/cri/testing` on its socket, with a client) and sandbox / container
 * configs labelled the way the kubelet labels them, so PLEG and the runtime manager find them.
 *
 * @example
 * ```ts
 * import { FakeClock } from '@nodeagent/core/testing';
 * import { kubeletPodConfig, startFakeRuntime } from '@nodeagent/kubecontainer/testing';
 *
 * const fake = await startFakeRuntime({ clock: new FakeClock() });
 * await fake.cri.runtime.runPodSandbox({ config: kubeletPodConfig('web') });
 * await fake.stop();
 * ```
 *
 * @packageDocumentation
 */
import {
  type ContainerConfig,
  type CriClient,
  type CriClientOptions,
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
} from './labels.js';

/** The image {@link startFakeRuntime} preloads unless `images` is given. */
export const FAKE_BUSYBOX_IMAGE = 'registry.local/busybox:latest';

/** Options of {@link startFakeRuntime}: the fake's own options plus the client's. */
export interface StartFakeRuntimeOptions extends FakeRuntimeOptions {
  /** Options of the CRI client on the fake's socket. @default `{ timeoutMs: 10_000 }` */
  readonly client?: CriClientOptions;
}

/** A started fake runtime and a CRI client connected to it. */
export interface FakeRuntimeHarness {
  /** The fake runtime (scripting: behaviours, faults, call log). */
  readonly runtime: FakeRuntime;
  /** The endpoint it listens on (`unix:///…`). */
  readonly endpoint: string;
  /** A client on {@link FakeRuntimeHarness.endpoint}. */
  readonly cri: CriClient;
  /** Closes the client and stops the fake. Idempotent. */
  stop(): Promise<void>;
}

/**
 * Starts a `FakeRuntime` (with {@link FAKE_BUSYBOX_IMAGE} preloaded unless `images` is
 * given) on a fresh unix socket and connects a CRI client to it.
 */
export async function startFakeRuntime(options: StartFakeRuntimeOptions = {}): Promise<FakeRuntimeHarness> {
  const { client, ...fakeOptions } = options;
  const runtime = new FakeRuntime({ images: [{ ref: FAKE_BUSYBOX_IMAGE }], ...fakeOptions });
  await runtime.start();
  const endpoint = runtime.endpoint;
  const cri = createCriClient(endpoint, client ?? { timeoutMs: 10_000 });
  let stopped: Promise<void> | undefined;
  return {
    runtime,
    endpoint,
    cri,
    stop() {
      stopped ??= (async () => {
        cri.close();
        await runtime.stop();
      })();
      return stopped;
    },
  };
}

/** A sandbox config labelled as the kubelet labels it (name, namespace, UID). */
export function kubeletPodConfig(
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

/** Options of {@link kubeletContainerConfig}. */
export interface KubeletContainerConfigOptions {
  /** CRI metadata attempt. @default 0 */
  readonly attempt?: number;
  /** The restart-count annotation. @default 0 */
  readonly restartCount?: number;
  /** The hash annotation (hex). @default 'abc123' */
  readonly hash?: string;
  /** The image. @default FAKE_BUSYBOX_IMAGE */
  readonly image?: string;
}

/** A container config of `pod` labelled and annotated as the kubelet does. */
export function kubeletContainerConfig(
  pod: PartialMessage<PodSandboxConfig>,
  name: string,
  options: KubeletContainerConfigOptions = {},
): PartialMessage<ContainerConfig> {
  const md = pod.metadata ?? {};
  return {
    metadata: { name, attempt: options.attempt ?? 0 },
    image: { image: options.image ?? FAKE_BUSYBOX_IMAGE },
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
