// Image GC against the fake CRI runtime, with upstream's rules (image_gc_manager.go and its
// tests): high/low thresholds on the image filesystem, images in use (by any container,
// exited too) and pinned images never removed, minimum age, least recently used first,
// deleteUnusedImages for the eviction manager, threshold validation.
import { InvalidOptionsError } from '@nodeagent/core';
import * as promClient from 'prom-client';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { criImageFsStats, ImageGCManager, type ImageGCManagerOptions } from '../src/index.js';
import { type Harness, startHarness } from './harness.js';

const MB = 1_000_000;
let h: Harness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

function harness(): Harness {
  if (h === undefined) throw new Error('no harness');
  return h;
}

/** A disk of 1000 MB whose free space grows as images are removed. */
function disk(usedOtherMb: number) {
  return {
    async imageFsStats() {
      const images = harness().fake.images();
      const imageBytes = images.reduce((n, i) => n + Number(i.size), 0);
      const capacityBytes = 1000 * MB;
      return { capacityBytes, availableBytes: capacityBytes - usedOtherMb * MB - imageBytes };
    },
  };
}

function manager(extra: Partial<ImageGCManagerOptions> = {}): ImageGCManager {
  return new ImageGCManager({ cri: harness().cri, clock: harness().clock, imageFsStats: disk(0), ...extra });
}

function imageNames(): string[] {
  return harness()
    .fake.images()
    .flatMap((i) => i.repoTags)
    .sort();
}

async function runContainer(image: string, name: string, exit: boolean): Promise<void> {
  const { podSandboxId } = await harness().cri.runtime.runPodSandbox({
    config: { metadata: { name, namespace: 'default', uid: `uid-${name}`, attempt: 0 } },
  });
  const { containerId } = await harness().cri.runtime.createContainer({
    podSandboxId,
    config: { metadata: { name, attempt: 0 }, image: { image }, command: ['sleep', '1'] },
  });
  await harness().cri.runtime.startContainer({ containerId });
  if (exit) await harness().cri.runtime.stopContainer({ containerId, timeout: 0n });
}

const images = [
  { ref: 'registry.local/a:1', sizeBytes: 100 * MB },
  { ref: 'registry.local/b:1', sizeBytes: 100 * MB },
  { ref: 'registry.local/c:1', sizeBytes: 100 * MB },
  { ref: 'registry.local/pinned:1', sizeBytes: 100 * MB, pinned: true },
];

describe('ImageGCManager.garbageCollect', () => {
  it('does nothing below the high threshold; above it frees down to the low threshold, LRU first', async () => {
    h = await startHarness({ images });
    const m = manager({ imageFsStats: disk(400) }); // 400 other + 400 images = 80% used
    await m.detectImages(harness().clock.now());
    await harness().clock.advance(3 * 60_000);
    await m.garbageCollect();
    expect(imageNames()).toHaveLength(4);

    // 460 + 400 = 86 % ≥ 85: free down to 80 % → 60 MB → one image of 100 MB
    const m2 = manager({ imageFsStats: disk(460) });
    await m2.detectImages(harness().clock.now() - 10 * 60_000);
    await runContainer('registry.local/a:1', 'user-a', false);
    await harness().clock.advance(1000);
    await m2.detectImages(harness().clock.now()); // a used now; b and c never used
    await harness().clock.advance(1000);
    await m2.garbageCollect();
    expect(imageNames()).toEqual(['registry.local/a:1', 'registry.local/c:1', 'registry.local/pinned:1']);
  });

  it('never removes images in use (exited containers count), pinned images or images younger than minAge', async () => {
    h = await startHarness({ images });
    await runContainer('registry.local/a:1', 'exited', true);
    const m = manager({ imageFsStats: disk(550) }); // 95 % used: free 150 MB to reach 80 %
    await m.detectImages(harness().clock.now());
    await harness().clock.advance(60_000);
    await expect(m.garbageCollect()).rejects.toThrow(
      'Failed to garbage collect required amount of images. Attempted to free 150000000 bytes, but only found 0 bytes eligible to free.',
    );
    expect(imageNames()).toHaveLength(4);
    await harness().clock.advance(60_000); // now 2 min old
    await m.garbageCollect(); // b and c (LRU order, ties by detection) free 200 MB
    expect(imageNames()).toEqual(['registry.local/a:1', 'registry.local/pinned:1']);
  });

  it('reports FreeDiskSpaceFailed and InvalidDiskCapacity as upstream', async () => {
    h = await startHarness({ images });
    const warnings: string[] = [];
    const m = manager({
      imageFsStats: { imageFsStats: async () => ({ capacityBytes: 0, availableBytes: 0 }) },
      onWarning: (reason, message) => warnings.push(`${reason}: ${message}`),
    });
    await expect(m.garbageCollect()).rejects.toThrow('invalid capacity 0 on image filesystem');
    expect(warnings).toEqual(['InvalidDiskCapacity: invalid capacity 0 on image filesystem']);
  });

  it('validates the thresholds with upstream messages', () => {
    const cri = { image: {}, runtime: {} } as unknown as ImageGCManagerOptions['cri'];
    expect(() => new ImageGCManager({ cri, highThresholdPercent: 101 })).toThrow(
      'invalid HighThresholdPercent 101, must be in range [0-100]',
    );
    expect(() => new ImageGCManager({ cri, lowThresholdPercent: -1 })).toThrow(
      'invalid LowThresholdPercent -1, must be in range [0-100]',
    );
    expect(() => new ImageGCManager({ cri, highThresholdPercent: 50, lowThresholdPercent: 60 })).toThrow(
      InvalidOptionsError,
    );
    expect(() => new ImageGCManager({ cri, highThresholdPercent: 50, lowThresholdPercent: 60 })).toThrow(
      'LowThresholdPercent 60 can not be higher than HighThresholdPercent 50',
    );
  });
});

describe('ImageGCManager.deleteUnusedImages and the loop', () => {
  it('deleteUnusedImages removes every unused, unpinned image older than minAge whatever the usage', async () => {
    h = await startHarness({ images });
    await runContainer('registry.local/b:1', 'running', false);
    const registry = new promClient.Registry();
    const m = manager({ metrics: { registry, promClient } });
    await m.detectImages(harness().clock.now());
    await harness().clock.advance(2 * 60_000);
    await m.deleteUnusedImages();
    expect(imageNames()).toEqual(['registry.local/b:1', 'registry.local/pinned:1']);
    expect(await registry.metrics()).toContain('kubelet_image_garbage_collected_total{reason="space"} 2');
  });

  it('an image first seen by deleteUnusedImages itself is too young (minAge counts from detection)', async () => {
    h = await startHarness({ images });
    await manager().deleteUnusedImages();
    expect(imageNames()).toHaveLength(4);
    await manager({ minAgeMs: 0 }).deleteUnusedImages();
    expect(imageNames()).toEqual(['registry.local/pinned:1']);
  });

  it('runs every 5 minutes; a second consecutive failure is flagged for the ImageGCFailed event', async () => {
    h = await startHarness({ images });
    const failures: boolean[] = [];
    const m = manager({
      imageFsStats: { imageFsStats: async () => ({ capacityBytes: 0, availableBytes: 0 }) },
      onError: (_e, previousFailed) => failures.push(previousFailed),
    });
    await m.start();
    await vi.waitFor(() => expect(failures).toEqual([false]));
    await harness().clock.advance(5 * 60_000 - 1);
    expect(failures).toEqual([false]);
    await harness().clock.advance(1);
    await vi.waitFor(() => expect(failures).toEqual([false, true]));
    await m.stop();
  });
});

describe('criImageFsStats', () => {
  it('measures the mountpoint ImageFsInfo names; a mountpoint absent from this host skips the pass', async () => {
    const at = (mountpoint: string) => ({
      imageFsInfo: async () => ({
        imageFilesystems: [{ timestamp: 0n, fsId: { mountpoint } }],
        containerFilesystems: [],
      }),
    });
    const root = await criImageFsStats(at('/') as never).imageFsStats();
    expect(root?.capacityBytes).toBeGreaterThan(0);
    expect(await criImageFsStats(at('/nonexistent/snapshotter') as never).imageFsStats()).toBeUndefined();
    h = await startHarness({ images });
    // the fake runtime reports a mountpoint that is not on this host: the pass does nothing
    const m = new ImageGCManager({ cri: harness().cri, clock: harness().clock, minAgeMs: 0 });
    await m.garbageCollect();
    expect(imageNames()).toHaveLength(4);
  });
});
