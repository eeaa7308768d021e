// The fake's list fast paths: label-indexed filters give exactly what a full scan gives, and
// the cached, pre-encoded list responses are byte for byte the generated encoding of the
// same items, also after a state change and a removal.
import { FakeClock } from '@nodeagent/core/testing';
import fc from 'fast-check';
import { afterEach, describe, expect, it } from 'vitest';
import { encodeContainerList, encodeSandboxList } from '../src/fake/encoded-lists.js';
import { ImageStore } from '../src/fake/image-store.js';
import { IpPool } from '../src/fake/ip-pool.js';
import { labelsMatch } from '../src/fake/label-index.js';
import { RuntimeState } from '../src/fake/runtime-state.js';
import { toContainerItem, toSandboxItem } from '../src/fake/wire.js';
import {
  ContainerConfig,
  ContainerState,
  ListContainersResponse,
  ListPodSandboxResponse,
  PodSandboxConfig,
} from '../src/gen/runtime/v1/api.js';
import { BUSYBOX, type FakeHarness, startFake } from './fake-fixtures.js';

function newState(): RuntimeState {
  const images = new ImageStore();
  images.preload({ ref: BUSYBOX });
  const pool = new IpPool('10.6.0.0/16');
  return new RuntimeState({
    clock: new FakeClock(),
    images,
    ipPool: () => pool,
    behaviours: [],
    idSeed: 'lists',
  });
}

const labelSet = fc.dictionary(fc.constantFrom('app', 'tier', 'pod'), fc.constantFrom('a', 'b', ''), {
  maxKeys: 3,
});

describe('FakeRuntime list filters', () => {
  it('label-selector, sandbox and id filters match a full scan, in creation order', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.record({ pod: labelSet, containers: fc.array(labelSet, { maxLength: 4 }) }), {
          maxLength: 8,
        }),
        labelSet,
        fc.nat(20),
        fc.nat(3),
        async (pods, selector, pick, remove) => {
          const state = newState();
          pods.forEach((p, i) => {
            const sandboxId = state.runPodSandbox(
              PodSandboxConfig.fromPartial({
                metadata: { name: `p${i}`, namespace: 'ns', uid: `u${i}` },
                labels: p.pod,
              }),
              '',
            );
            for (const [j, labels] of p.containers.entries()) {
              state.createContainer(
                sandboxId,
                ContainerConfig.fromPartial({
                  metadata: { name: `c${j}` },
                  image: { image: BUSYBOX },
                  labels,
                }),
              );
            }
          });
          // Removals must leave the index in step.
          const allContainers = [...state.containers.values()];
          for (let r = 0; r < remove && r < allContainers.length; r++)
            state.removeContainer(allContainers[(pick + r) % allContainers.length]?.id ?? '');
          const sandboxes = [...state.sandboxes.values()];
          if (remove === 3 && sandboxes.length > 0)
            state.removePodSandbox(sandboxes[pick % sandboxes.length]?.id ?? '');

          const containers = [...state.containers.values()];
          const scan = containers.filter((c) => labelsMatch(selector, c.config.labels)).map((c) => c.id);
          const filter = { id: '', podSandboxId: '', labelSelector: selector };
          expect(state.listContainers(filter).map((c) => c.id)).toEqual(scan);
          const sbScan = [...state.sandboxes.values()]
            .filter((s) => labelsMatch(selector, s.config.labels))
            .map((s) => s.id);
          expect(state.listSandboxes({ id: '', labelSelector: selector }).map((s) => s.id)).toEqual(sbScan);

          const target = containers[pick % Math.max(1, containers.length)];
          if (target !== undefined) {
            const bySandbox = containers.filter(
              (c) => c.sandboxId === target.sandboxId && labelsMatch(selector, c.config.labels),
            );
            expect(
              state
                .listContainers({ ...filter, podSandboxId: target.sandboxId.slice(0, 12) })
                .map((c) => c.id),
            ).toEqual(bySandbox.map((c) => c.id));
            expect(state.listContainers({ ...filter, id: target.id, labelSelector: {} })).toEqual([target]);
          }
        },
      ),
      { numRuns: 150 },
    );
  });
});

describe('FakeRuntime pre-encoded lists', () => {
  let h: FakeHarness | undefined;
  afterEach(async () => {
    await h?.close();
    h = undefined;
  });

  it('encodes exactly what the generated encoder writes, following state changes', async () => {
    const state = newState();
    const sandboxId = state.runPodSandbox(
      PodSandboxConfig.fromPartial({
        metadata: { name: 'web', namespace: 'ns', uid: 'u1' },
        labels: { app: 'web', ünï: 'cödé ✓' },
        annotations: { note: 'x'.repeat(300) },
      }),
      'runc',
    );
    const ids = ['a', 'b', 'c'].map((name) =>
      state.createContainer(
        sandboxId,
        ContainerConfig.fromPartial({
          metadata: { name, attempt: 2 },
          image: { image: BUSYBOX, annotations: { k: 'v' } },
          labels: { app: 'web', name },
          annotations: { hash: name.repeat(100) },
        }),
      ),
    );
    const expectSame = () => {
      const containers = [...state.containers.values()];
      expect(encodeContainerList(containers).bytes).toEqual(
        Buffer.from(ListContainersResponse.encode({ containers: containers.map(toContainerItem) }).finish()),
      );
      const sandboxes = [...state.sandboxes.values()];
      expect(encodeSandboxList(sandboxes).bytes).toEqual(
        Buffer.from(ListPodSandboxResponse.encode({ items: sandboxes.map(toSandboxItem) }).finish()),
      );
    };
    expectSame();
    await state.startContainer(ids[0] ?? '');
    expectSame();
    state.exit(state.requireContainer(ids[0] ?? ''), 1, 'Error', '');
    state.removeContainer(ids[1] ?? '');
    state.stopPodSandbox(sandboxId);
    expectSame();
    expect(encodeContainerList([]).bytes.length).toBe(0);
  });

  it('serves lists over the socket that reflect every state change', async () => {
    h = await startFake();
    const pod = h.fake.addSandbox({
      metadata: { name: 'p', namespace: 'ns', uid: 'u' },
      labels: { 'io.kubernetes.pod.uid': 'u' },
    });
    const id = await h.fake.addContainer(pod, {
      metadata: { name: 'c' },
      image: { image: BUSYBOX },
      labels: { 'io.kubernetes.pod.uid': 'u' },
    });
    const list = async () =>
      (await h?.cri.runtime.listContainers({ filter: { labelSelector: { 'io.kubernetes.pod.uid': 'u' } } }))
        ?.containers;
    expect((await list())?.map((c) => [c.id, c.state])).toEqual([[id, ContainerState.CONTAINER_RUNNING]]);
    h.fake.killContainer(id, { exitCode: 2 });
    expect((await list())?.map((c) => c.state)).toEqual([ContainerState.CONTAINER_EXITED]);
    const chunks: string[][] = [];
    for await (const chunk of h.cri.runtime.streamContainers({}))
      chunks.push(chunk.containers.map((c) => c.id));
    expect(chunks).toEqual([[id]]);
    const sandboxes = await h.cri.runtime.listPodSandbox({});
    expect(sandboxes.items.map((s) => [s.id, s.labels])).toEqual([[pod, { 'io.kubernetes.pod.uid': 'u' }]]);
  });
});
