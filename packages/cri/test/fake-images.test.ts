import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { hasCriCode } from '../src/index.js';
import { normalizeImageRef } from '../src/testing.js';
import { BUSYBOX, type FakeHarness, startFake } from './fake-fixtures.js';

describe('normalizeImageRef', () => {
  it.each([
    ['busybox', 'docker.io/library/busybox:latest'],
    ['busybox:1.36', 'docker.io/library/busybox:1.36'],
    ['me/app', 'docker.io/me/app:latest'],
    ['registry.local/busybox', 'registry.local/busybox:latest'],
    ['localhost:5000/x:v1', 'localhost:5000/x:v1'],
    [`quay.io/a/b@sha256:${'0'.repeat(64)}`, `quay.io/a/b@sha256:${'0'.repeat(64)}`],
  ])('%s → %s', (input, expected) => {
    expect(normalizeImageRef(input)).toBe(expected);
  });
});

describe('FakeRuntime images', () => {
  let h: FakeHarness;
  beforeEach(async () => {
    h = await startFake({
      registryImages: [{ ref: 'nginx:1.27', sizeBytes: 70_000_000, user: '101' }],
    });
  });
  afterEach(() => h.close());

  it('lists and inspects preloaded images by tag, short name, ID and ID prefix', async () => {
    const { images } = await h.cri.image.listImages({});
    expect(images).toHaveLength(1);
    const [busybox] = images;
    expect(busybox?.repoTags).toEqual([BUSYBOX]);
    expect(busybox?.id).toMatch(/^sha256:[0-9a-f]{64}$/);
    for (const ref of [
      BUSYBOX,
      'registry.local/busybox',
      busybox?.id ?? '',
      busybox?.id.slice(7, 20) ?? '',
    ]) {
      const { image } = await h.cri.image.imageStatus({ image: { image: ref } });
      expect(image?.id).toBe(busybox?.id);
    }
  });

  it('reports an absent image as an unset image, not an error', async () => {
    const res = await h.cri.image.imageStatus({ image: { image: 'nginx:1.27' } });
    expect(res.image).toBeUndefined();
  });

  it('pulls an image the registry has and returns its ID', async () => {
    const { imageRef } = await h.cri.image.pullImage({ image: { image: 'nginx:1.27' } });
    const { image } = await h.cri.image.imageStatus({ image: { image: 'docker.io/library/nginx:1.27' } });
    expect(image?.id).toBe(imageRef);
    expect(image?.size).toBe(70_000_000n);
    expect(image?.uid?.value).toBe(101n);
    expect((await h.cri.image.listImages({})).images).toHaveLength(2);
  });

  it('fails to pull an unknown image with NOT_FOUND naming the reference', async () => {
    await expect(h.cri.image.pullImage({ image: { image: 'nope/missing:0.0' } })).rejects.toSatisfy(
      (e) => hasCriCode(e, 'NOT_FOUND') && e.details.includes('docker.io/nope/missing:0.0'),
    );
  });

  it('removes an image with all its tags; removing a missing image succeeds', async () => {
    h.fake.preloadImage({ ref: 'registry.local/busybox:1.36', id: h.fake.images()[0]?.id ?? '' });
    expect(h.fake.images()[0]?.repoTags).toEqual([BUSYBOX, 'registry.local/busybox:1.36']);
    await h.cri.image.removeImage({ image: { image: 'registry.local/busybox:1.36' } });
    expect((await h.cri.image.listImages({})).images).toEqual([]);
    await h.cri.image.removeImage({ image: { image: 'registry.local/busybox:1.36' } });
    await h.cri.image.removeImage({ image: { image: `sha256:${'0'.repeat(64)}` } });
  });

  it('filters ListImages by reference', async () => {
    await h.cri.image.pullImage({ image: { image: 'nginx:1.27' } });
    const { images } = await h.cri.image.listImages({ filter: { image: { image: 'nginx:1.27' } } });
    expect(images.map((i) => i.repoTags[0])).toEqual(['docker.io/library/nginx:1.27']);
  });

  it('ImageFsInfo counts the bytes of the images on the node', async () => {
    await h.cri.image.pullImage({ image: { image: 'nginx:1.27' } });
    const { imageFilesystems } = await h.cri.image.imageFsInfo({});
    expect(imageFilesystems).toHaveLength(1);
    expect(imageFilesystems[0]?.usedBytes?.value).toBe(70_000_000n + 2n * 1024n * 1024n);
    expect(imageFilesystems[0]?.fsId?.mountpoint).toMatch(/snapshotter/);
    expect(imageFilesystems[0]?.timestamp).toBe(BigInt(h.clock.now()) * 1_000_000n);
  });

  it('rejects an empty image reference with INVALID_ARGUMENT', async () => {
    await expect(h.cri.image.pullImage({ image: { image: '' } })).rejects.toSatisfy((e) =>
      hasCriCode(e, 'INVALID_ARGUMENT'),
    );
  });
});

describe('FakeRuntime registryResolver', () => {
  it('serves pulls of references the registry does not list; undefined keeps NOT_FOUND', async () => {
    const asked: string[] = [];
    const h = await startFake({
      registryResolver: (ref) => {
        asked.push(ref);
        return ref.startsWith('docker.io/') ? { ref, sizeBytes: 1234 } : undefined;
      },
    });
    try {
      const { imageRef } = await h.cri.image.pullImage({ image: { image: 'nginx' } });
      const { image } = await h.cri.image.imageStatus({ image: { image: 'nginx' } });
      expect(image?.id).toBe(imageRef);
      expect(image?.repoTags).toEqual(['docker.io/library/nginx:latest']);
      expect(image?.size).toBe(1234n);
      await expect(h.cri.image.pullImage({ image: { image: 'quay.io/x/y:1' } })).rejects.toSatisfy((e) =>
        hasCriCode(e, 'NOT_FOUND'),
      );
      expect(asked).toEqual(['docker.io/library/nginx:latest', 'quay.io/x/y:1']);
    } finally {
      await h.close();
    }
  });
});
