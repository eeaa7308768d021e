// Container GC against the fake CRI runtime, with upstream's rules (kuberuntime_gc.go and
// kuberuntime_gc_test.go): exited containers beyond the newest per (pod, container name),
// unknown containers stopped first, deleted pods' containers all removed, the total cap,
// dead sandboxes, log files of removed containers and log directories of deleted pods.
import { mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { ContainerGC, type ContainerGCPolicy, podUidFromLogsDirectory } from '../src/index.js';
import { type Harness, startHarness } from './harness.js';

let h: Harness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

const deleted = new Set<string>();
const terminated = new Set<string>();
const podState = {
  shouldPodContentBeRemoved: (uid: string) => deleted.has(uid),
  shouldPodRuntimeBeRemoved: (uid: string) => deleted.has(uid) || terminated.has(uid),
};

function harness(): Harness {
  if (h === undefined) throw new Error('no harness');
  return h;
}

function logsRoot(): string {
  return join(harness().dir, 'logs');
}

let attempts = 0;
async function sandbox(uid: string, name = uid, ready = true): Promise<string> {
  attempts += 1;
  const logDirectory = join(logsRoot(), `default_${name}_${uid}`);
  mkdirSync(logDirectory, { recursive: true });
  const { podSandboxId } = await harness().cri.runtime.runPodSandbox({
    config: { metadata: { name, namespace: 'default', uid, attempt: attempts }, logDirectory },
  });
  if (!ready) await harness().cri.runtime.stopPodSandbox({ podSandboxId });
  await harness().clock.advance(1000);
  return podSandboxId;
}

/** A container created 1 s after the previous one; exited unless `running`. */
async function container(
  sandboxId: string,
  uid: string,
  name: string,
  attempt: number,
  state: 'running' | 'exited' | 'created' = 'exited',
): Promise<string> {
  const { containerId } = await harness().cri.runtime.createContainer({
    podSandboxId: sandboxId,
    config: {
      metadata: { name, attempt },
      image: { image: 'busybox:1.36' },
      command: ['sleep', '3600'],
      logPath: join(name, `${attempt}.log`),
      labels: { 'io.kubernetes.pod.uid': uid, 'io.kubernetes.container.name': name },
    },
  });
  if (state !== 'created') await harness().cri.runtime.startContainer({ containerId });
  if (state === 'exited') await harness().cri.runtime.stopContainer({ containerId, timeout: 0n });
  await harness().clock.advance(1000);
  return containerId;
}

function gc(policy: ContainerGCPolicy = {}): ContainerGC {
  return new ContainerGC({
    runtime: harness().cri.runtime,
    podState,
    podLogsRoot: logsRoot(),
    clock: harness().clock,
    ...policy,
  });
}

function containerIds(): string[] {
  return harness()
    .fake.containers()
    .map((c) => c.id)
    .sort();
}

describe('ContainerGC with the kubelet defaults (minAge 0, 1 per container, unlimited total)', () => {
  it('keeps the newest exited container per (pod, container name) and every running one', async () => {
    h = await startHarness();
    deleted.clear();
    terminated.clear();
    const s = await sandbox('u1');
    const a0 = await container(s, 'u1', 'app', 0);
    const a1 = await container(s, 'u1', 'app', 1);
    const a2 = await container(s, 'u1', 'app', 2);
    const a3 = await container(s, 'u1', 'app', 3, 'running');
    const b0 = await container(s, 'u1', 'sidecar', 0);
    await gc().garbageCollect();
    expect(containerIds()).toEqual([a2, a3, b0].sort());
    expect(containerIds()).not.toContain(a0);
    expect(containerIds()).not.toContain(a1);
  });

  it('removes the log files (<logPath>*) of removed containers, rotated ones too, not the kept ones', async () => {
    h = await startHarness();
    deleted.clear();
    const s = await sandbox('u1', 'web');
    await container(s, 'u1', 'app', 0);
    await container(s, 'u1', 'app', 1);
    const dir = join(logsRoot(), 'default_web_u1', 'app');
    mkdirSync(dir, { recursive: true });
    for (const f of ['0.log', '0.log.20260101-000000.gz', '0.log.20260101-000001', '1.log', '10.log']) {
      writeFileSync(join(dir, f), 'x');
    }
    await gc().garbageCollect();
    // 10.log starts with "0.log"? no: the glob is "<dir>/0.log*", so 10.log stays.
    expect(readdirSync(dir).sort()).toEqual(['1.log', '10.log']);
  });

  it('honours minAge: containers created less than minAge ago stay', async () => {
    h = await startHarness();
    deleted.clear();
    const s = await sandbox('u1');
    const old0 = await container(s, 'u1', 'app', 0);
    const old1 = await container(s, 'u1', 'app', 1);
    await harness().clock.advance(60_000);
    const new2 = await container(s, 'u1', 'app', 2);
    const new3 = await container(s, 'u1', 'app', 3);
    // only old0 and old1 are old enough to be evictable; the newest of those is kept
    await gc({ minAgeMs: 30_000 }).garbageCollect();
    expect(containerIds()).toEqual([old1, new2, new3].sort());
    expect(containerIds()).not.toContain(old0);
  });

  it('maxPerPodContainer -1 keeps all; maxContainers caps the total, evenly then oldest first', async () => {
    h = await startHarness();
    deleted.clear();
    const s = await sandbox('u1');
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) ids.push(await container(s, 'u1', 'a', i));
    for (let i = 0; i < 3; i++) ids.push(await container(s, 'u1', 'b', i));
    await gc({ maxPerPodContainer: -1 }).garbageCollect();
    expect(containerIds()).toHaveLength(6);
    // total 3 over 2 units: 1 per unit (floor(3/2)), so a2 and b2 remain (2 ≤ 3)
    await gc({ maxPerPodContainer: -1, maxContainers: 3 }).garbageCollect();
    expect(containerIds()).toEqual([ids[2], ids[5]].sort());
    // total 1 over 2 units: one per unit (minimum 1), then the oldest overall goes
    await gc({ maxPerPodContainer: -1, maxContainers: 1 }).garbageCollect();
    expect(containerIds()).toEqual([ids[5]]);
  });

  it('removes all exited containers of a deleted pod, and with evictNonDeletedPods those of a terminated pod', async () => {
    h = await startHarness();
    deleted.clear();
    terminated.clear();
    const s1 = await sandbox('gone');
    await container(s1, 'gone', 'app', 0);
    await container(s1, 'gone', 'app', 1);
    const s2 = await sandbox('done');
    await container(s2, 'done', 'app', 0);
    const keep = await container(s2, 'done', 'app', 1);
    deleted.add('gone');
    terminated.add('done');
    const g = gc();
    await g.garbageCollect();
    expect(containerIds()).toEqual([keep]);
    await g.deleteAllUnusedContainers();
    expect(containerIds()).toEqual([]);
  });

  it('stops an unknown-state container before removing it', async () => {
    h = await startHarness();
    deleted.clear();
    const s = await sandbox('u1');
    await container(s, 'u1', 'app', 0, 'created'); // CREATED is not running: evictable
    await container(s, 'u1', 'app', 1);
    await gc().garbageCollect();
    expect(containerIds()).toHaveLength(1);
    expect(harness().fake.calls('RemoveContainer')).toHaveLength(1);
  });
});

describe('sandboxes and log directories', () => {
  it('removes dead sandboxes without containers: all of a deleted pod, all but the newest of a live pod', async () => {
    h = await startHarness();
    deleted.clear();
    const old = await sandbox('live', 'live', false);
    const newer = await sandbox('live', 'live', false);
    const gone1 = await sandbox('gone', 'gone', false);
    const gone2 = await sandbox('gone', 'gone', false);
    const heldEmpty = await sandbox('held', 'held', false);
    const heldWith = await sandbox('held', 'held', true);
    await container(heldWith, 'held', 'app', 0, 'exited');
    await harness().cri.runtime.stopPodSandbox({ podSandboxId: heldWith });
    const ready = await sandbox('ready', 'ready', true);
    await sandbox('ready', 'ready', false);
    deleted.add('gone');
    await gc({ maxPerPodContainer: -1 }).garbageCollect();
    const left = harness()
      .fake.sandboxes()
      .map((s) => s.id);
    expect(left).toContain(newer);
    expect(left).not.toContain(old);
    expect(left).not.toContain(gone1);
    expect(left).not.toContain(gone2);
    // held: the newest still holds a container (active) and stays; the older one is dead and empty
    expect(left).toContain(heldWith);
    expect(left).not.toContain(heldEmpty);
    // ready: the ready one is the older; the newer dead one is the newest and is kept
    expect(left).toContain(ready);
    expect(left).toHaveLength(4);
  });

  it('removes the log directories of deleted pods only once all sources are ready', async () => {
    h = await startHarness();
    deleted.clear();
    mkdirSync(join(logsRoot(), 'default_web_u-live', 'app'), { recursive: true });
    mkdirSync(join(logsRoot(), 'default_old_u-gone', 'app'), { recursive: true });
    deleted.add('u-gone');
    let ready = false;
    const g = new ContainerGC({
      runtime: harness().cri.runtime,
      podState,
      podLogsRoot: logsRoot(),
      clock: harness().clock,
      allSourcesReady: () => ready,
    });
    await g.garbageCollect();
    expect(readdirSync(logsRoot()).sort()).toEqual(['default_old_u-gone', 'default_web_u-live']);
    ready = true;
    await g.garbageCollect();
    expect(readdirSync(logsRoot())).toEqual(['default_web_u-live']);
    expect(podUidFromLogsDirectory('kube-system_coredns_1234-abcd')).toBe('1234-abcd');
  });

  it('runs every minute on the clock; a failed pass is reported and the loop goes on', async () => {
    h = await startHarness();
    deleted.clear();
    const errors: Error[] = [];
    const g = new ContainerGC({
      runtime: harness().cri.runtime,
      podState,
      podLogsRoot: logsRoot(),
      clock: harness().clock,
      onError: (e) => errors.push(e),
    });
    harness().fake.clearCalls();
    harness().fake.injectError('ListContainers', { code: 14, message: 'down' });
    await g.start();
    await vi.waitFor(() => expect(errors).toHaveLength(1));
    await vi.waitFor(() => expect(harness().fake.calls('ListContainers')).toHaveLength(2));
    await harness().clock.advance(59_999);
    expect(harness().fake.calls('ListContainers')).toHaveLength(2);
    await harness().clock.advance(1);
    await vi.waitFor(() => expect(harness().fake.calls('ListContainers')).toHaveLength(4));
    expect(errors).toHaveLength(1);
    await g.stop();
  });
});
