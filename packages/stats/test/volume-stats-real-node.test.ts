// Volume stats on a real tmpfs the test mounts (root): capacity, available and inodes from
// statfs agree with `stat -f`, used bytes and inodes with GNU `du -s -B1` / `du -s --inodes`
// (what upstream's MetricsDu reproduces). The mount and its directory are removed afterwards.
import { execFileSync } from 'node:child_process';
import { link, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FakeClock } from '@nodeagent/core/testing';
import { describeRealNode } from '@nodeagent/test-support/real-node';
import { afterAll, beforeAll, expect, it, vi } from 'vitest';
import { FsResourceAnalyzer } from '../src/index.js';

const MiB = 1024 * 1024;

describeRealNode('volume stats on a real tmpfs', ['root'], () => {
  let dir: string;
  let mounted = false;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'volume-stats-tmpfs-'));
    execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=4m,nr_inodes=1000', 'tmpfs', dir]);
    mounted = true;
    await writeFile(join(dir, 'blob'), Buffer.alloc(MiB + 100, 3));
    await link(join(dir, 'blob'), join(dir, 'blob-link'));
    await mkdir(join(dir, 'sub'));
    await writeFile(join(dir, 'sub', 'small'), 'x');
  });
  afterAll(async () => {
    if (mounted) execFileSync('umount', [dir]);
    if (dir !== undefined) await rm(dir, { recursive: true, force: true });
  });

  it('agrees with stat -f and du', async () => {
    const clock = new FakeClock();
    const a = new FsResourceAnalyzer({
      lister: { podUids: () => ['p'], volumesForPod: () => [{ name: 'mem', path: dir }] },
      clock,
    });
    a.start();
    await clock.advance(0);
    const stats = await vi.waitFor(() => {
      const s = a.podVolumeStats('p');
      if (s === undefined) throw new Error('not yet');
      return s;
    });
    a.stop();
    const [blocks, bsize, avail, files, ffree] = execFileSync('stat', ['-f', '-c', '%b %S %a %c %d', dir], {
      encoding: 'utf8',
    })
      .trim()
      .split(' ')
      .map(Number) as [number, number, number, number, number];
    const duBytes = Number(execFileSync('du', ['-s', '-B1', dir], { encoding: 'utf8' }).split('\t')[0]);
    const duInodes = Number(execFileSync('du', ['-s', '--inodes', dir], { encoding: 'utf8' }).split('\t')[0]);
    const v = stats.ephemeralVolumes[0];
    expect(v).toMatchObject({
      name: 'mem',
      capacityBytes: blocks * bsize,
      availableBytes: avail * bsize,
      inodes: files,
      inodesFree: ffree,
      usedBytes: duBytes,
      inodesUsed: duInodes,
    });
    expect(v?.capacityBytes).toBe(4 * MiB);
    expect(v?.usedBytes).toBeGreaterThan(MiB);
    expect(v?.usedBytes).toBeLessThan(2 * MiB); // the hard link counted once
  });
});
