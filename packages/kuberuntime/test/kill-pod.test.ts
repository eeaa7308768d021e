import type { V1Pod } from '@kubernetes/client-node';
import { afterEach, describe, expect, it } from 'vitest';
import { drive } from './drive.js';
import { type Harness, startHarness } from './harness.js';

let h: Harness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

const img = { image: 'busybox:1.36', imagePullPolicy: 'IfNotPresent' };

async function runPod(p: V1Pod) {
  if (h === undefined) throw new Error('no harness');
  // sidecars come up one per sync
  for (let i = 0; i < 5; i++) await h.manager.syncPod(p, await h.manager.getPodStatus(p));
  const status = await h.manager.getPodStatus(p);
  return status;
}

function stopCalls() {
  if (h === undefined) throw new Error('no harness');
  const names = new Map(h.fake.containers().map((c) => [c.id, c.metadata?.name ?? '']));
  return h.fake.calls('StopContainer').map((c) => {
    const req = c.request as { containerId: string; timeout: bigint | string };
    return { name: names.get(req.containerId) ?? '?', timeout: Number(req.timeout), atMs: c.atMs };
  });
}

describe('killPod', () => {
  it('stops app containers first, then sidecars in reverse order, then the sandbox', async () => {
    h = await startHarness({
      behaviours: [{ match: { name: /^(a|b)$/ }, behaviour: { sigtermDelayMs: 3000 } }],
    });
    const p: V1Pod = {
      metadata: { name: 'web', namespace: 'default', uid: 'uid-web' },
      spec: {
        terminationGracePeriodSeconds: 30,
        initContainers: [
          { name: 's1', restartPolicy: 'Always', ...img },
          { name: 's2', restartPolicy: 'Always', ...img },
        ],
        containers: [
          { name: 'a', ...img },
          { name: 'b', ...img },
        ],
      },
    };
    const status = await runPod(p);
    expect(status.containerStatuses.filter((c) => c.state === 'running')).toHaveLength(4);
    h.fake.clearCalls();
    const t0 = h.clock.now();
    const result = await drive(h.clock, h.manager.killPod(p, status));
    expect(result.error()).toBeUndefined();
    const calls = stopCalls();
    expect(
      calls
        .map((c) => c.name)
        .slice(0, 2)
        .sort(),
    ).toEqual(['a', 'b']);
    expect(calls.map((c) => c.name).slice(2)).toEqual(['s2', 's1']);
    // sidecars waited for the app containers (3 s to exit) and got what was left of the grace
    const s2 = calls[2];
    expect(s2?.atMs).toBeGreaterThanOrEqual(t0 + 3000);
    expect(s2?.timeout).toBeLessThanOrEqual(27);
    expect(h.fake.callNames().at(-1)).toBe('StopPodSandbox');
  });

  it('runs the exec preStop hook before stopping, and stops with the grace that is left', async () => {
    h = await startHarness({
      execScripts: [{ cmd: ['/bin/sh', '-c', 'drain'], durationMs: 5_000, stdout: 'drained' }],
    });
    const p: V1Pod = {
      metadata: { name: 'web', namespace: 'default', uid: 'uid-web' },
      spec: {
        terminationGracePeriodSeconds: 30,
        containers: [
          { name: 'app', ...img, lifecycle: { preStop: { exec: { command: ['/bin/sh', '-c', 'drain'] } } } },
        ],
      },
    };
    const status = await runPod(p);
    h.fake.clearCalls();
    await drive(h.clock, h.manager.killPod(p, status));
    const names = h.fake.callNames();
    expect(names.indexOf('ExecSync')).toBeLessThan(names.indexOf('StopContainer'));
    expect(stopCalls()[0]?.timeout).toBe(25);
  });

  it('a preStop hook longer than the grace period is cut off; the stop still gets 2 s', async () => {
    h = await startHarness({ execScripts: [{ cmd: ['hang'], durationMs: 600_000 }] });
    const p: V1Pod = {
      metadata: { name: 'web', namespace: 'default', uid: 'uid-web' },
      spec: {
        terminationGracePeriodSeconds: 10,
        containers: [{ name: 'app', ...img, lifecycle: { preStop: { exec: { command: ['hang'] } } } }],
      },
    };
    const status = await runPod(p);
    h.fake.clearCalls();
    const t0 = h.clock.now();
    await drive(h.clock, h.manager.killPod(p, status));
    const [stop] = stopCalls();
    expect(stop?.timeout).toBe(2);
    expect((stop?.atMs ?? 0) - t0).toBeGreaterThanOrEqual(10_000);
    expect((stop?.atMs ?? 0) - t0).toBeLessThan(11_000);
  });

  it('a container ignoring SIGTERM is killed (137) at the end of its grace period', async () => {
    h = await startHarness({ behaviours: [{ match: { name: 'app' }, behaviour: { ignoreSigterm: true } }] });
    const p: V1Pod = {
      metadata: { name: 'web', namespace: 'default', uid: 'uid-web' },
      spec: { terminationGracePeriodSeconds: 5, containers: [{ name: 'app', ...img }] },
    };
    const status = await runPod(p);
    const t0 = h.clock.now();
    await drive(h.clock, h.manager.killPod(p, status));
    const after = await h.manager.getPodStatus(p);
    const c = after.containerStatuses[0];
    expect(c?.state).toBe('exited');
    expect(c?.exitCode).toBe(137);
    expect((c?.finishedAt ?? 0) - t0).toBeGreaterThanOrEqual(5_000);
    expect((c?.finishedAt ?? 0) - t0).toBeLessThan(6_000);
  });

  it('grace: deletion grace wins over the spec; an override wins over both', async () => {
    h = await startHarness();
    const p: V1Pod = {
      metadata: { name: 'web', namespace: 'default', uid: 'uid-web', deletionGracePeriodSeconds: 7 },
      spec: { terminationGracePeriodSeconds: 30, containers: [{ name: 'app', ...img }] },
    };
    const status = await runPod(p);
    h.fake.clearCalls();
    await drive(h.clock, h.manager.killPod(p, status));
    expect(stopCalls()[0]?.timeout).toBe(7);
    h.fake.clearCalls();
    await drive(h.clock, h.manager.killPod(p, status, 3));
    expect(stopCalls()[0]?.timeout).toBe(3);
  });

  it('an orphan (no pod spec after an agent restart) is killed with the grace and preStop from its annotations', async () => {
    h = await startHarness();
    const p: V1Pod = {
      metadata: { name: 'web', namespace: 'default', uid: 'uid-web' },
      spec: {
        terminationGracePeriodSeconds: 12,
        containers: [{ name: 'app', ...img, lifecycle: { preStop: { exec: { command: ['echo', 'bye'] } } } }],
      },
    };
    const status = await runPod(p);
    h.fake.clearCalls();
    const result = await drive(h.clock, h.newManager().killPod(undefined, status));
    expect(result.error()).toBeUndefined();
    expect((h.fake.calls('ExecSync')[0]?.request as { cmd?: string[] } | undefined)?.cmd).toEqual([
      'echo',
      'bye',
    ]);
    expect(stopCalls()[0]?.timeout).toBe(12);
    expect(h.fake.calls('StopPodSandbox')).toHaveLength(1);
  });

  it('an httpGet preStop hook calls the pod IP on the named port', async () => {
    const seen: string[] = [];
    h = await startHarness();
    const p: V1Pod = {
      metadata: { name: 'web', namespace: 'default', uid: 'uid-web' },
      spec: {
        terminationGracePeriodSeconds: 30,
        containers: [
          {
            name: 'app',
            ...img,
            ports: [{ name: 'admin', containerPort: 9000 }],
            lifecycle: {
              preStop: {
                httpGet: { path: 'quit', port: 'admin', httpHeaders: [{ name: 'X-Why', value: 'stop' }] },
              },
            },
          },
        ],
      },
    };
    const status = await runPod(p);
    const manager = h.newManager({
      httpGet: async (url, headers) => {
        seen.push(`${url} ${headers['X-Why']} ${headers['User-Agent']}`);
        return 200;
      },
    });
    await drive(h.clock, manager.killPod(p, status));
    expect(seen).toEqual([`http://${status.ips[0]}:9000/quit stop kube-lifecycle/1.36`]);
  });
});
