import type { Lifecycle } from '@nodeagent/core';
import {
  type ContainerEventResponse,
  type ContainerEventType,
  ContainerState,
  type CriClient,
  createCriClient,
  type ListContainersResponse,
  type StreamContainersResponse,
  type VersionResponse,
} from '@nodeagent/cri';
import { FakeRuntime } from '@nodeagent/cri/testing';
import { describe, expectTypeOf, it } from 'vitest';

describe('the typed CRI client', () => {
  const cri: CriClient = createCriClient('unix:///run/containerd/containerd.sock');

  it('unary calls take partial requests and resolve with full responses', () => {
    expectTypeOf(cri.runtime.version()).toEqualTypeOf<Promise<VersionResponse>>();
    expectTypeOf(
      cri.runtime.listContainers({ filter: { state: { state: ContainerState.CONTAINER_RUNNING } } }),
    ).toEqualTypeOf<Promise<ListContainersResponse>>();
    // @ts-expect-error unknown request field
    void cri.runtime.version({ nope: 1 });
    // @ts-expect-error a container state is an enum value, not a string
    void cri.runtime.listContainers({ filter: { state: { state: 'RUNNING' } } });
  });

  it('streams and events are typed async iterables', () => {
    expectTypeOf(cri.runtime.streamContainers()).toEqualTypeOf<AsyncIterable<StreamContainersResponse>>();
    const events = cri.runtime.getContainerEvents({}, { signal: AbortSignal.timeout(1) });
    expectTypeOf(events).toEqualTypeOf<AsyncIterable<ContainerEventResponse>>();
    expectTypeOf<ContainerEventResponse['containerEventType']>().toEqualTypeOf<ContainerEventType>();
    expectTypeOf<ContainerEventResponse['createdAt']>().toEqualTypeOf<bigint>();
  });

  it('close() is the handle release; the fake runtime has the core Lifecycle and an endpoint', () => {
    expectTypeOf(cri.close).toEqualTypeOf<() => void>();
    const fake = new FakeRuntime();
    expectTypeOf(fake).toMatchTypeOf<Lifecycle>();
    expectTypeOf(fake.start).toEqualTypeOf<(signal?: AbortSignal) => Promise<void>>();
    expectTypeOf(fake.endpoint).toEqualTypeOf<string>();
  });
});
