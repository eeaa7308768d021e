// The kubelet's pod and container events through the injected recorder, with upstream's
// reasons and messages (kuberuntime_container.go, image_manager.go, kuberuntime_manager.go).
import type { V1Container, V1Pod } from '@kubernetes/client-node';
import { afterEach, describe, expect, it } from 'vitest';
import type { RuntimeEventRecorder } from '../src/index.js';
import { drive } from './drive.js';
import { type Harness, startHarness } from './harness.js';

let h: Harness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

interface Recorded {
  readonly container: string | undefined;
  readonly type: string;
  readonly reason: string;
  readonly message: string;
}

function recording(): { events: Recorded[]; recorder: RuntimeEventRecorder } {
  const events: Recorded[] = [];
  return {
    events,
    recorder: (_pod: V1Pod, container: V1Container | undefined, type, reason, message) =>
      events.push({ container: container?.name, type, reason, message }),
  };
}

function pod(image: string, extra: Partial<V1Container> = {}): V1Pod {
  return {
    metadata: { name: 'web', namespace: 'default', uid: 'uid-web' },
    spec: { containers: [{ name: 'app', image, ...extra }] },
  };
}

async function sync(p: V1Pod) {
  if (h === undefined) throw new Error('no harness');
  return h.manager.syncPod(p, await h.manager.getPodStatus(p));
}

describe('container events', () => {
  it('image present: Pulled "already present", Created, Started', async () => {
    const { events, recorder } = recording();
    h = await startHarness({}, { recorder });
    await sync(pod('busybox:1.36', { imagePullPolicy: 'IfNotPresent' }));
    expect(events).toEqual([
      {
        container: 'app',
        type: 'Normal',
        reason: 'Pulled',
        message: 'Container image "busybox:1.36" already present on machine',
      },
      { container: 'app', type: 'Normal', reason: 'Created', message: 'Created container: app' },
      { container: 'app', type: 'Normal', reason: 'Started', message: 'Started container app' },
    ]);
  });

  it('a pull: Pulling, then Pulled with the duration and size; the spec image name is kept', async () => {
    const { events, recorder } = recording();
    h = await startHarness(
      { registryImages: [{ ref: 'registry.example/app:2', sizeBytes: 4096 }] },
      { recorder },
    );
    await sync(pod('registry.example/app:2'));
    expect(events.slice(0, 2)).toEqual([
      {
        container: 'app',
        type: 'Normal',
        reason: 'Pulling',
        message: 'Pulling image "registry.example/app:2"',
      },
      {
        container: 'app',
        type: 'Normal',
        reason: 'Pulled',
        message: expect.stringMatching(
          /^Successfully pulled image "registry\.example\/app:2" in (\d+ms|0s) \(\1 including waiting\)\. Image size: 4096 bytes\.$/,
        ),
      },
    ]);
  });

  it('a failed pull: Pulling, Failed "Failed to pull image …", Failed "Error: ErrImagePull"; then BackOff and "Error: ImagePullBackOff"', async () => {
    const { events, recorder } = recording();
    h = await startHarness({}, { recorder });
    const p = pod('registry.example/nope:1');
    await sync(p);
    expect(events.map((e) => `${e.type} ${e.reason}`)).toEqual([
      'Normal Pulling',
      'Warning Failed',
      'Warning Failed',
    ]);
    expect(events[1]?.message).toMatch(/^Failed to pull image "registry\.example\/nope:1": /);
    expect(events[2]?.message).toBe('Error: ErrImagePull');
    events.length = 0;
    await sync(p);
    expect(events).toEqual([
      {
        container: 'app',
        type: 'Normal',
        reason: 'BackOff',
        message: 'Back-off pulling image "registry.example/nope:1"',
      },
      { container: 'app', type: 'Warning', reason: 'Failed', message: 'Error: ImagePullBackOff' },
    ]);
  });

  it('pull policy Never with the image absent: ErrImageNeverPull and "Error: ErrImageNeverPull"', async () => {
    const { events, recorder } = recording();
    h = await startHarness({}, { recorder });
    await sync(pod('absent:1', { imagePullPolicy: 'Never' }));
    expect(events).toEqual([
      {
        container: 'app',
        type: 'Warning',
        reason: 'ErrImageNeverPull',
        message: 'Container image "absent:1" is not present with pull policy of Never',
      },
      { container: 'app', type: 'Warning', reason: 'Failed', message: 'Error: ErrImageNeverPull' },
    ]);
  });

  it('a crash loop: Warning BackOff "Back-off restarting failed container app in pod web_default(uid-web)"', async () => {
    const { events, recorder } = recording();
    h = await startHarness(
      { behaviours: [{ match: { name: 'app' }, behaviour: { crashOnStart: true, exitCode: 2 } }] },
      { recorder },
    );
    const p = pod('busybox:1.36');
    await sync(p);
    await h.clock.advance(1000);
    await sync(p); // restarts at once (first back-off step)
    await h.clock.advance(1000);
    events.length = 0;
    await sync(p); // within the 10 s back-off
    expect(events).toEqual([
      {
        container: 'app',
        type: 'Warning',
        reason: 'BackOff',
        message: 'Back-off restarting failed container app in pod web_default(uid-web)',
      },
    ]);
  });

  it('killing a container: Normal Killing "Stopping container app"', async () => {
    const { events, recorder } = recording();
    h = await startHarness({}, { recorder });
    const p = pod('busybox:1.36');
    await sync(p);
    events.length = 0;
    await drive(h.clock, h.manager.killPod(p, await h.manager.getPodStatus(p)));
    expect(events).toEqual([
      { container: 'app', type: 'Normal', reason: 'Killing', message: 'Stopping container app' },
    ]);
  });

  it('a recorder that throws does not break the sync', async () => {
    h = await startHarness(
      {},
      {
        recorder: () => {
          throw new Error('recorder down');
        },
      },
    );
    const result = await sync(pod('busybox:1.36'));
    expect(result.error()).toBeUndefined();
  });
});
