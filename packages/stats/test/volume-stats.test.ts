// The kubelet's fsResourceAnalyzer / volumeStatCalculator on temp directories and a fake
// clock: du (allocated blocks, inodes, hard links once) plus statfs of the volume path
// (upstream MetricsDu), the first pass at once and the next between one and two periods
// later (JitterUntil(period, 1.0, sliding)), configMap/secret-like volumes measured once
// (CachedMetrics), claims reported as persistent volumes, a vanished pod's calculator
// stopped, and the Summary's pods[].volume and ephemeral-storage.
import { lstatSync, readdirSync } from 'node:fs';
import { link, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FakeClock } from '@nodeagent/core/testing';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import {
  createStatsProvider,
  FsResourceAnalyzer,
  type MeasuredVolume,
  type StatfsResult,
  VolumeStatsOptionsError,
} from '../src/index.js';
import { type FakeCri, runPod, startFakeCri, uidOf } from './support/fake-cri.js';

const FS: StatfsResult = { bsize: 4096, blocks: 1000, bfree: 400, bavail: 300, files: 100, ffree: 60 };

/** du computed independently: allocated 512-byte blocks and entries, hard links once. */
function du(dir: string): { bytes: number; inodes: number } {
  const seen = new Set<number>();
  let bytes = 0;
  const walk = (p: string): void => {
    const st = lstatSync(p);
    if (seen.has(st.ino)) return;
    seen.add(st.ino);
    bytes += st.blocks * 512;
    if (st.isDirectory()) for (const n of readdirSync(p)) walk(join(p, n));
  };
  walk(dir);
  return { bytes, inodes: seen.size };
}

let root: string;
let clock: FakeClock;
beforeEach(async () => {
  root = await mkdtemp(join(tmpdir(), 'volume-stats-'));
  clock = new FakeClock();
});
afterEach(async () => {
  await rm(root, { recursive: true, force: true });
});

async function volumeDir(name: string, bytes: number): Promise<string> {
  const dir = join(root, name);
  await mkdir(join(dir, 'sub'), { recursive: true });
  await writeFile(join(dir, 'data'), Buffer.alloc(bytes, 1));
  await writeFile(join(dir, 'sub', 'more'), 'x');
  return dir;
}

function analyzer(volumes: () => readonly MeasuredVolume[], pods: () => string[] = () => ['pod-1']) {
  return new FsResourceAnalyzer({
    lister: { podUids: pods, volumesForPod: () => volumes() },
    statfs: async () => FS,
    random: () => 0.5,
    clock,
  });
}

async function settled(a: FsResourceAnalyzer, check: () => boolean = () => true) {
  await clock.advance(0);
  await vi.waitFor(() => {
    if (a.podVolumeStats('pod-1') === undefined || !check()) throw new Error('not yet');
  });
  return a.podVolumeStats('pod-1');
}

describe('FsResourceAnalyzer', () => {
  it('reports du usage and statfs capacity of each volume (MetricsDu)', async () => {
    const dir = await volumeDir('cache', 10_000);
    await link(join(dir, 'data'), join(dir, 'hardlink'));
    const a = analyzer(() => [{ name: 'cache', path: dir }]);
    expect(a.podVolumeStats('pod-1')).toBeUndefined();
    a.start();
    const stats = await settled(a);
    a.stop();
    const expected = du(dir);
    expect(expected.inodes).toBe(4); // dir, data (+ its link), sub, sub/more
    expect(stats).toEqual({
      ephemeralVolumes: [
        {
          time: '2023-11-14T22:13:20Z',
          name: 'cache',
          usedBytes: expected.bytes,
          inodesUsed: 4,
          capacityBytes: 1000 * 4096,
          availableBytes: 300 * 4096,
          inodes: 100,
          inodesFree: 60,
        },
      ],
      persistentVolumes: [],
    });
  });

  it('measures again between one and two periods later (jitter 1.0), not before', async () => {
    const dir = await volumeDir('grow', 100);
    const a = analyzer(() => [{ name: 'grow', path: dir }]);
    a.start();
    const first = (await settled(a))?.ephemeralVolumes[0]?.usedBytes;
    await writeFile(join(dir, 'big'), Buffer.alloc(64 * 1024, 2));
    await clock.advance(60_000);
    await new Promise((r) => setTimeout(r, 50));
    expect(a.podVolumeStats('pod-1')?.ephemeralVolumes[0]?.usedBytes).toBe(first);
    await clock.advance(30_000); // random 0.5 → 1.5 periods
    const second = await settled(
      a,
      () => a.podVolumeStats('pod-1')?.ephemeralVolumes[0]?.usedBytes !== first,
    );
    expect(second?.ephemeralVolumes[0]?.usedBytes).toBe(du(dir).bytes);
    expect(second?.ephemeralVolumes[0]?.time).toBe('2023-11-14T22:14:50Z');
    a.stop();
  });

  it('measures cached volumes (configMap, secret, ...) once, reports claims as persistent', async () => {
    const cm = await volumeDir('config', 100);
    const data = await volumeDir('data', 100);
    const a = analyzer(() => [
      { name: 'config', path: cm, cached: true },
      { name: 'data', path: data, pvcRef: { name: 'claim', namespace: 'default' } },
    ]);
    a.start();
    const first = await settled(a);
    expect(first?.persistentVolumes.map((v) => [v.name, v.pvcRef])).toEqual([
      ['data', { name: 'claim', namespace: 'default' }],
    ]);
    const cmBytes = first?.ephemeralVolumes[0]?.usedBytes;
    await writeFile(join(cm, 'big'), Buffer.alloc(64 * 1024, 2));
    await writeFile(join(data, 'big'), Buffer.alloc(64 * 1024, 2));
    await clock.advance(90_000);
    const second = await settled(
      a,
      () => a.podVolumeStats('pod-1')?.persistentVolumes[0]?.usedBytes === du(data).bytes,
    );
    expect(second?.ephemeralVolumes[0]?.usedBytes).toBe(cmBytes);
    a.stop();
  });

  it('leaves out a volume that cannot be measured, and stops the calculator of a pod gone', async () => {
    const errors: string[] = [];
    let pods = ['pod-1'];
    const dir = await volumeDir('ok', 10);
    const a = new FsResourceAnalyzer({
      lister: {
        podUids: () => pods,
        volumesForPod: () => [
          { name: 'ok', path: dir },
          { name: 'gone', path: join(root, 'missing') },
        ],
      },
      statfs: async () => FS,
      random: () => 0,
      onError: (path, reason) => errors.push(`${path}: ${reason}`),
      clock,
    });
    a.start();
    const stats = await settled(a);
    expect(stats?.ephemeralVolumes.map((v) => v.name)).toEqual(['ok']);
    expect(errors).toEqual([`${join(root, 'missing')}: volume directory missing`]);
    pods = [];
    await clock.advance(60_000);
    expect(a.podVolumeStats('pod-1')).toBeUndefined();
    a.stop();
  });

  it('rejects a period under one second', () => {
    expect(
      () => new FsResourceAnalyzer({ lister: { podUids: () => [], volumesForPod: () => [] }, periodMs: 10 }),
    ).toThrow(VolumeStatsOptionsError);
  });
});

describe('volume stats in the Summary', () => {
  let h: FakeCri;
  beforeEach(async () => {
    h = await startFakeCri([{ name: 'app', behaviour: { cpuCores: 0.1, memoryWorkingSetBytes: 1024 } }]);
  });
  afterEach(async () => {
    await h.close();
  });

  it('lists pods[].volume and adds ephemeral volumes to ephemeral-storage; CPU-and-memory leaves them out', async () => {
    const uid = uidOf(7);
    await runPod(h, 'web', uid, ['app']);
    const dir = await volumeDir('scratch', 32 * 1024);
    const stats = createStatsProvider({
      nodeName: 'n',
      cri: h.cri,
      embedded: true,
      clock: h.clock,
      statfs: async () => FS,
      volumes: { podUids: () => [uid], volumesForPod: () => [{ name: 'scratch', path: dir }] },
    });
    const without = await stats.get(false);
    expect(without.pods[0]?.volume).toBeUndefined();
    const base = without.pods[0]?.['ephemeral-storage']?.usedBytes ?? 0;
    await stats.start();
    await h.clock.advance(0);
    const summary = await vi.waitFor(async () => {
      const s = await stats.get(false);
      if (s.pods[0]?.volume === undefined) throw new Error('not yet');
      return s;
    });
    await stats.stop();
    const pod = summary.pods[0];
    expect(pod?.volume?.map((v) => [v.name, v.usedBytes, v.capacityBytes])).toEqual([
      ['scratch', du(dir).bytes, 4096 * 1000],
    ]);
    expect(pod?.['ephemeral-storage']?.usedBytes).toBe(base + du(dir).bytes);
    expect((await stats.getCpuAndMemory()).pods[0]?.volume).toBeUndefined();
  });
});
