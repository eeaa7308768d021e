// Shared set-up of the fake-runtime unit tests: a FakeRuntime on a FakeClock, a real
// client over its socket, and config builders.
import { FakeClock } from '@nodeagent/core/testing';
import type { PartialMessage } from '../src/call-options.js';
import {
  type ContainerConfig,
  type CriClient,
  createCriClient,
  type PodSandboxConfig,
} from '../src/index.js';
import { FakeRuntime, type FakeRuntimeOptions } from '../src/testing.js';

export const BUSYBOX = 'registry.local/busybox:latest';

export interface FakeHarness {
  readonly fake: FakeRuntime;
  readonly cri: CriClient;
  readonly clock: FakeClock;
  close(): Promise<void>;
}

/** A started FakeRuntime (fake clock, busybox preloaded) and a client connected to it. */
export async function startFake(options: FakeRuntimeOptions = {}): Promise<FakeHarness> {
  const clock = new FakeClock();
  const fake = new FakeRuntime({ clock, images: [{ ref: BUSYBOX }], ...options });
  await fake.start();
  const endpoint = fake.endpoint;
  const cri = createCriClient(endpoint, { timeoutMs: 10_000 });
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

let podCounter = 0;

/** A pod sandbox config with a unique name/uid. */
export function podConfig(
  name = `pod-${++podCounter}`,
  extra: PartialMessage<PodSandboxConfig> = {},
): PartialMessage<PodSandboxConfig> {
  return {
    metadata: { name, namespace: 'default', uid: `uid-${name}`, attempt: 0 },
    hostname: name,
    logDirectory: `/var/log/pods/default_${name}_uid-${name}`,
    labels: { app: name },
    annotations: { 'example.com/note': 'fake' },
    ...extra,
  };
}

/** A container config running `argv` in busybox. */
export function containerConfig(
  name: string,
  argv: readonly string[] = ['sleep', '1000'],
  extra: PartialMessage<ContainerConfig> = {},
): PartialMessage<ContainerConfig> {
  return {
    metadata: { name, attempt: 0 },
    image: { image: BUSYBOX },
    command: [...argv],
    labels: { container: name },
    logPath: `${name}/0.log`,
    ...extra,
  };
}

/** Waits (real time, briefly) until `check()` holds: for work travelling over the socket. */
export async function until(check: () => boolean, what = 'condition', maxMs = 2000): Promise<void> {
  const deadline = Date.now() + maxMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 2));
  }
}

/** Runs a sandbox and returns its ID. */
export async function runPod(h: FakeHarness, name?: string): Promise<string> {
  const { podSandboxId } = await h.cri.runtime.runPodSandbox({ config: podConfig(name) });
  return podSandboxId;
}

/** Creates (and optionally starts) a container in `podId`. */
export async function createContainer(
  h: FakeHarness,
  podId: string,
  name: string,
  argv?: readonly string[],
  start = true,
): Promise<string> {
  const { containerId } = await h.cri.runtime.createContainer({
    podSandboxId: podId,
    config: containerConfig(name, argv),
  });
  if (start) await h.cri.runtime.startContainer({ containerId });
  return containerId;
}
