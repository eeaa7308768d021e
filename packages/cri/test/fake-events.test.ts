import { afterEach, describe, expect, it } from 'vitest';
import {
  type ContainerEventResponse,
  ContainerEventType,
  ContainerState,
  isUnimplemented,
  PodSandboxState,
} from '../src/index.js';
import { createContainer, type FakeHarness, runPod, startFake, until } from './fake-fixtures.js';

const T = ContainerEventType;

/** Subscribes to container events; `stop()` ends the stream. */
function collectEvents(h: FakeHarness) {
  const events: ContainerEventResponse[] = [];
  const controller = new AbortController();
  const done = (async () => {
    for await (const e of h.cri.runtime.getContainerEvents({}, { signal: controller.signal })) events.push(e);
  })();
  return {
    events,
    async stop() {
      controller.abort();
      await done;
    },
  };
}

describe('FakeRuntime GetContainerEvents', () => {
  let h: FakeHarness;
  afterEach(() => h.close());

  it('streams created/started/stopped/deleted for sandboxes and containers, with statuses', async () => {
    h = await startFake();
    h.fake.addBehaviour({ name: 'job' }, { exitAfterMs: 1000, exitCode: 2 });
    const sub = collectEvents(h);
    await until(() => h.fake.calls('GetContainerEvents').length === 1, 'subscription');

    const pod = await runPod(h);
    const job = await createContainer(h, pod, 'job');
    await h.clock.advance(1000);
    await h.cri.runtime.removeContainer({ containerId: job });
    await h.cri.runtime.stopPodSandbox({ podSandboxId: pod });
    await h.cri.runtime.removePodSandbox({ podSandboxId: pod });
    await until(() => sub.events.length === 8, 'eight events');
    await sub.stop();

    expect(sub.events.map((e) => [e.containerId === pod ? 'pod' : 'job', e.containerEventType])).toEqual([
      ['pod', T.CONTAINER_CREATED_EVENT],
      ['pod', T.CONTAINER_STARTED_EVENT],
      ['job', T.CONTAINER_CREATED_EVENT],
      ['job', T.CONTAINER_STARTED_EVENT],
      ['job', T.CONTAINER_STOPPED_EVENT],
      ['job', T.CONTAINER_DELETED_EVENT],
      ['pod', T.CONTAINER_STOPPED_EVENT],
      ['pod', T.CONTAINER_DELETED_EVENT],
    ]);
    const stopped = sub.events[4];
    expect(stopped?.podSandboxStatus?.id).toBe(pod);
    expect(stopped?.podSandboxStatus?.state).toBe(PodSandboxState.SANDBOX_READY);
    expect(stopped?.containersStatuses).toHaveLength(1);
    expect(stopped?.containersStatuses[0]).toMatchObject({
      id: job,
      state: ContainerState.CONTAINER_EXITED,
      exitCode: 2,
    });
    expect(sub.events[5]?.containersStatuses).toEqual([]);
    expect(sub.events[6]?.podSandboxStatus?.state).toBe(PodSandboxState.SANDBOX_NOTREADY);
    const times = sub.events.map((e) => e.createdAt);
    expect([...times].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0))).toEqual(times);
  });

  it('ends open event streams when the fake stops', async () => {
    h = await startFake();
    const sub = collectEvents(h);
    await until(() => h.fake.calls('GetContainerEvents').length === 1, 'subscription');
    await h.fake.stop();
    await sub.stop();
    expect(sub.events).toEqual([]);
  });

  it('answers UNIMPLEMENTED when configured like containerd 1.6', async () => {
    h = await startFake({ containerEvents: false });
    const iterate = async () => {
      for await (const _ of h.cri.runtime.getContainerEvents({})) {
        // no events expected
      }
    };
    await expect(iterate()).rejects.toSatisfy(isUnimplemented);
  });

  it('onContainerEvent: in-process listeners see each event as it happens, until unsubscribed', async () => {
    h = await startFake();
    const seen: [string, ContainerEventType, string][] = [];
    const off = h.fake.onContainerEvent((e) =>
      seen.push([e.containerId, e.containerEventType, e.podSandboxStatus?.network?.ip ?? '']),
    );
    const pod = await runPod(h);
    const ip = h.fake.sandboxes()[0]?.network?.ip ?? '';
    expect(ip).not.toBe('');
    const app = await createContainer(h, pod, 'app');
    // Synchronous: the started event is there when StartContainer's answer arrives.
    expect(seen).toEqual([
      [pod, T.CONTAINER_CREATED_EVENT, ip],
      [pod, T.CONTAINER_STARTED_EVENT, ip],
      [app, T.CONTAINER_CREATED_EVENT, ip],
      [app, T.CONTAINER_STARTED_EVENT, ip],
    ]);
    off();
    await h.cri.runtime.stopContainer({ containerId: app, timeout: 0n });
    expect(seen).toHaveLength(4);
  });
});
