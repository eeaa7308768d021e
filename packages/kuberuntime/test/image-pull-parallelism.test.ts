import type { V1Pod } from '@kubernetes/client-node';
import { KeyedBackoff, noopLogger } from '@nodeagent/core';
import { FakeClock } from '@nodeagent/core/testing';
import type { CriClient } from '@nodeagent/cri';
import { describe, expect, it } from 'vitest';
import { ImagePuller } from '../src/image-puller.js';

/** An image service whose pulls finish when the test says so. */
function slowRegistry() {
  const pending: { image: string; finish: () => void }[] = [];
  const timeouts: (number | undefined)[] = [];
  const image = {
    imageStatus: async () => ({ image: undefined }),
    pullImage: (req: { image?: { image: string } }, options?: { timeoutMs?: number }) =>
      new Promise<{ imageRef: string }>((resolve) => {
        const ref = req.image?.image ?? '';
        timeouts.push(options?.timeoutMs);
        pending.push({ image: ref, finish: () => resolve({ imageRef: `sha256:${ref}` }) });
      }),
  };
  return { cri: { image } as unknown as Pick<CriClient, 'image'>, pending, timeouts };
}

function podWith(name: string, image: string): V1Pod {
  return {
    metadata: { name, namespace: 'default', uid: `uid-${name}` },
    spec: { containers: [{ name: 'app', image, imagePullPolicy: 'Always' }] },
  };
}

const flush = async () => {
  for (let i = 0; i < 10; i++) await Promise.resolve();
};

function puller(maxParallelImagePulls: number | undefined) {
  const clock = new FakeClock();
  const registry = slowRegistry();
  const events: string[] = [];
  const p = new ImagePuller({
    cri: registry.cri,
    backoff: new KeyedBackoff({ initialMs: 10_000, maxMs: 300_000, clock }),
    logger: noopLogger,
    now: () => clock.now(),
    metrics: () => undefined,
    recorder: (_pod, _c, _type, reason, message) => events.push(`${reason}: ${message}`),
    ...(maxParallelImagePulls === undefined ? {} : { maxParallelImagePulls }),
  });
  const ensure = (name: string, image: string) => {
    const pod = podWith(name, image);
    return p.ensureImageExists(pod, pod.spec?.containers[0] as never, [], undefined);
  };
  return { clock, registry, events, ensure };
}

describe('image pull parallelism (serializeImagePulls / maxParallelImagePulls)', () => {
  it('one pull at a time with maxParallelImagePulls 1: the second waits, and its event says how long', async () => {
    const t = puller(1);
    const a = t.ensure('a', 'registry.example/a:1');
    const b = t.ensure('b', 'registry.example/b:1');
    await flush();
    expect(t.registry.pending.map((x) => x.image)).toEqual(['registry.example/a:1']);
    await t.clock.advance(3_000);
    t.registry.pending[0]?.finish();
    await expect(a).resolves.toBe('sha256:registry.example/a:1');
    await flush();
    expect(t.registry.pending.map((x) => x.image)).toEqual(['registry.example/a:1', 'registry.example/b:1']);
    await t.clock.advance(2_000);
    t.registry.pending[1]?.finish();
    await expect(b).resolves.toBe('sha256:registry.example/b:1');
    // upstream: "Successfully pulled image %q in %v (%v including waiting)"
    expect(t.events).toContain(
      'Pulled: Successfully pulled image "registry.example/b:1" in 2s (5s including waiting). Image size: 0 bytes.',
    );
    expect(t.events).toContain(
      'Pulled: Successfully pulled image "registry.example/a:1" in 3s (3s including waiting). Image size: 0 bytes.',
    );
    // upstream's PullImage has no deadline (context.WithCancel), unlike the other CRI calls
    expect(t.registry.timeouts).toEqual([Number.POSITIVE_INFINITY, Number.POSITIVE_INFINITY]);
  });

  it('maxParallelImagePulls 2: two in flight, the third waits for a free slot; unlimited by default', async () => {
    const t = puller(2);
    const pulls = ['a', 'b', 'c'].map((n) => t.ensure(n, `registry.example/${n}:1`));
    await flush();
    expect(t.registry.pending).toHaveLength(2);
    t.registry.pending[1]?.finish();
    await pulls[1];
    await flush();
    expect(t.registry.pending.map((x) => x.image)).toContain('registry.example/c:1');
    for (const x of t.registry.pending) x.finish();
    await Promise.all(pulls);

    const u = puller(undefined);
    const all = ['a', 'b', 'c', 'd'].map((n) => u.ensure(n, `registry.example/${n}:1`));
    await flush();
    expect(u.registry.pending).toHaveLength(4);
    for (const x of u.registry.pending) x.finish();
    await Promise.all(all);
  });

  it('a failed pull frees its slot; a limit below 1 is refused', async () => {
    const clock = new FakeClock();
    let calls = 0;
    const p = new ImagePuller({
      cri: {
        image: {
          imageStatus: async () => ({ image: undefined }),
          pullImage: async () => {
            calls++;
            if (calls === 1) throw new Error('registry unavailable');
            return { imageRef: 'sha256:x' };
          },
        },
      } as unknown as Pick<CriClient, 'image'>,
      backoff: new KeyedBackoff({ initialMs: 10_000, maxMs: 300_000, clock }),
      logger: noopLogger,
      now: () => clock.now(),
      metrics: () => undefined,
      maxParallelImagePulls: 1,
    });
    const a = podWith('a', 'registry.example/a:1');
    const b = podWith('b', 'registry.example/b:1');
    await expect(p.ensureImageExists(a, a.spec?.containers[0] as never, [], undefined)).rejects.toThrow(
      /registry unavailable/,
    );
    await expect(p.ensureImageExists(b, b.spec?.containers[0] as never, [], undefined)).resolves.toBe(
      'sha256:x',
    );
    expect(
      () =>
        new ImagePuller({
          cri: { image: {} } as unknown as Pick<CriClient, 'image'>,
          backoff: new KeyedBackoff({ initialMs: 1, maxMs: 1, clock }),
          logger: noopLogger,
          now: () => 0,
          metrics: () => undefined,
          maxParallelImagePulls: 0,
        }),
    ).toThrow('ImagePuller: maxParallelImagePulls must be an integer >= 1, got 0');
  });
});
