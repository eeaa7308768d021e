import type { V1Pod } from '@kubernetes/client-node';
import { afterEach, describe, expect, it } from 'vitest';
import { type Harness, startHarness } from './harness.js';

let h: Harness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

const pod: V1Pod = {
  metadata: { name: 'web', namespace: 'default', uid: 'uid-web' },
  spec: { containers: [{ name: 'app', image: 'busybox:1.36', imagePullPolicy: 'IfNotPresent' }] },
};

async function apiContainerId(): Promise<string | undefined> {
  if (h === undefined) throw new Error('no harness');
  await h.manager.syncPod(pod, await h.manager.getPodStatus(pod));
  const status = await h.manager.getPodStatus(pod);
  return h.manager.computePodStatus(pod, status).containerStatuses?.[0]?.containerID;
}

describe('container IDs carry the runtime name from Version() (upstream ContainerID.Type)', () => {
  it("the fake's own name", async () => {
    h = await startHarness();
    const id = await apiContainerId();
    expect(id).toMatch(/^fakeRuntime:\/\/[0-9a-f]+$/);
    expect(await h.manager.runtimeName()).toBe('fakeRuntime');
  });

  it.each(['containerd', 'cri-o'])('%s://', async (runtimeName) => {
    h = await startHarness({ version: { runtimeName } });
    expect(await apiContainerId()).toMatch(new RegExp(`^${runtimeName}://[0-9a-f]+$`));
  });

  it('asks the runtime once, and an explicit option wins', async () => {
    h = await startHarness({ version: { runtimeName: 'cri-o' } });
    await apiContainerId();
    await apiContainerId();
    expect(h.fake.calls('Version')).toHaveLength(1);
    const manager = h.newManager({ runtimeName: 'other' });
    expect(await manager.runtimeName()).toBe('other');
    expect(h.fake.calls('Version')).toHaveLength(1);
  });
});
