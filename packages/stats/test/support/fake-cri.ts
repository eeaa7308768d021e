// A FakeRuntime on a FakeClock with a client, and helpers to run pods with UUID uids.
import { FakeClock } from '@nodeagent/core/testing';
import { type CriClient, createCriClient } from '@nodeagent/cri';
import { type ContainerBehaviour, FakeRuntime } from '@nodeagent/cri/testing';

export const IMAGE = 'registry.local/busybox:latest';

export interface FakeCri {
  readonly fake: FakeRuntime;
  readonly cri: CriClient;
  readonly clock: FakeClock;
  close(): Promise<void>;
}

export async function startFakeCri(
  behaviours: { name: string; behaviour: ContainerBehaviour }[] = [],
): Promise<FakeCri> {
  const clock = new FakeClock({ startMs: 1_700_000_000_000 });
  const fake = new FakeRuntime({
    clock,
    images: [{ ref: IMAGE }],
    behaviours: behaviours.map((b) => ({ match: { name: b.name }, behaviour: b.behaviour })),
  });
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

export function uidOf(n: number): string {
  return `00000000-0000-4000-8000-${n.toString(16).padStart(12, '0')}`;
}

/** Runs a pod with `containers` and returns the sandbox and container ids. */
export async function runPod(
  h: Pick<FakeCri, 'cri'>,
  name: string,
  uid: string,
  containers: readonly string[],
  namespace = 'default',
): Promise<{ sandboxId: string; containerIds: string[] }> {
  const { podSandboxId } = await h.cri.runtime.runPodSandbox({
    config: {
      metadata: { name, namespace, uid, attempt: 0 },
      logDirectory: `/var/log/pods/${namespace}_${name}_${uid}`,
    },
  });
  const containerIds: string[] = [];
  for (const c of containers) {
    const { containerId } = await h.cri.runtime.createContainer({
      podSandboxId,
      config: {
        metadata: { name: c, attempt: 0 },
        image: { image: IMAGE },
        command: ['sleep', '1000'],
        labels: {
          'io.kubernetes.pod.name': name,
          'io.kubernetes.pod.namespace': namespace,
          'io.kubernetes.pod.uid': uid,
          'io.kubernetes.container.name': c,
        },
      },
      sandboxConfig: { metadata: { name, namespace, uid, attempt: 0 } },
    });
    await h.cri.runtime.startContainer({ containerId });
    containerIds.push(containerId);
  }
  return { sandboxId: podSandboxId, containerIds };
}
