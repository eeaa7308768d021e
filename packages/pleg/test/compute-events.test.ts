import type { RuntimeContainer, RuntimeContainerState, RuntimePod } from '@nodeagent/kubecontainer';
import { describe, expect, it } from 'vitest';
import {
  computePodEvents,
  generateEvents,
  type PlegContainerState,
  type PodLifecycleEventType,
  toPlegContainerState,
} from '../src/index.js';

const STATES: PlegContainerState[] = ['running', 'exited', 'unknown', 'non-existent'];

/** The upstream table (generic.go generateEvents), written out independently of the code. */
function expected(oldState: PlegContainerState, newState: PlegContainerState): PodLifecycleEventType[] {
  if (oldState === newState) return [];
  if (newState === 'running') return ['ContainerStarted'];
  if (newState === 'exited') return ['ContainerDied'];
  if (newState === 'unknown') return ['ContainerChanged'];
  return oldState === 'exited' ? ['ContainerRemoved'] : ['ContainerDied', 'ContainerRemoved'];
}

function container(id: string, state: RuntimeContainerState): RuntimeContainer {
  return { id, name: id, image: '', imageRef: '', hash: 0n, state, createdAt: 0 };
}

function pod(containers: RuntimeContainer[], sandboxes: RuntimeContainer[] = []): RuntimePod {
  return { id: 'p', name: 'p', namespace: 'ns', createdAt: 0, containers, sandboxes };
}

describe('generateEvents (the state transition table)', () => {
  const table = STATES.flatMap((o) => STATES.map((n) => [o, n, expected(o, n)] as const));
  it.each(table)('%s → %s gives %j', (oldState, newState, types) => {
    const events = generateEvents('pod-uid', 'cid', oldState, newState);
    expect(events.map((e) => e.type)).toEqual(types);
    for (const e of events) expect(e).toMatchObject({ id: 'pod-uid', data: 'cid' });
  });

  it('maps runtime states: created counts as unknown', () => {
    expect((['created', 'running', 'exited', 'unknown'] as const).map(toPlegContainerState)).toEqual([
      'unknown',
      'running',
      'exited',
      'unknown',
    ]);
  });
});

describe('computePodEvents', () => {
  it('sends Died before Removed when a running container disappears', () => {
    const events = computePodEvents('p', pod([container('c1', 'running')]), pod([]));
    expect(events.map((e) => [e.type, e.data])).toEqual([
      ['ContainerDied', 'c1'],
      ['ContainerRemoved', 'c1'],
    ]);
  });

  it('sends only Removed for a container already seen exited', () => {
    expect(computePodEvents('p', pod([container('c1', 'exited')]), undefined).map((e) => e.type)).toEqual([
      'ContainerRemoved',
    ]);
  });

  it('treats sandboxes as containers and covers ids from both views', () => {
    const before = pod(
      [container('c1', 'running'), container('c2', 'created')],
      [container('s1', 'running')],
    );
    const after = pod([container('c1', 'exited'), container('c3', 'running')], [container('s1', 'exited')]);
    expect(computePodEvents('p', before, after).map((e) => `${e.type}:${e.data}`)).toEqual([
      'ContainerDied:c1',
      'ContainerDied:c2',
      'ContainerRemoved:c2',
      'ContainerDied:s1',
      'ContainerStarted:c3',
    ]);
  });

  it('a new pod reports its running sandbox and containers as started; created ones as changed', () => {
    const now = pod([container('c1', 'running'), container('c2', 'created')], [container('s1', 'running')]);
    expect(computePodEvents('p', undefined, now).map((e) => `${e.type}:${e.data}`)).toEqual([
      'ContainerStarted:c1',
      'ContainerChanged:c2',
      'ContainerStarted:s1',
    ]);
  });

  it('no change, no events', () => {
    const same = pod([container('c1', 'running')], [container('s1', 'running')]);
    expect(computePodEvents('p', same, same)).toEqual([]);
  });
});
