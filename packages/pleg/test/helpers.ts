// Shared set-up of the PLEG tests: the fake runtime harness of `@nodeagent/kubecontainer/testing`
// on a FakeClock, kubelet-labelled pod/container configs, and small helpers.
import { FakeClock } from '@nodeagent/core/testing';
import type { CriClient } from '@nodeagent/cri';
import type { FakeRuntime, FakeRuntimeOptions } from '@nodeagent/cri/testing';
import {
  FAKE_BUSYBOX_IMAGE,
  kubeletContainerConfig,
  kubeletPodConfig,
  startFakeRuntime,
} from '@nodeagent/kubecontainer/testing';

export const BUSYBOX = FAKE_BUSYBOX_IMAGE;
export const kubeletPod = kubeletPodConfig;
export const kubeletContainer = kubeletContainerConfig;

export interface Harness {
  readonly fake: FakeRuntime;
  readonly cri: CriClient;
  readonly clock: FakeClock;
  close(): Promise<void>;
}

/** A started FakeRuntime (fake clock, busybox preloaded) and a client on its socket. */
export async function startHarness(options: FakeRuntimeOptions = {}): Promise<Harness> {
  const clock = new FakeClock();
  const { runtime, cri, stop } = await startFakeRuntime({ clock, ...options });
  return { fake: runtime, cri, clock, close: stop };
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
