// PodConfig: upstream's merge of source snapshots into ADD/UPDATE/DELETE/REMOVE/RECONCILE, in fake time.
import { FakeClock } from '@nodeagent/core/testing';
import { describe, expect, it } from 'vitest';
import {
  CONFIG_SEEN_ANNOTATION,
  CONFIG_SOURCE_ANNOTATION,
  PodConfig,
  type PodSourceError,
} from '../src/index.js';
import { apiPod, drain } from './helpers.js';

describe('PodConfig merge', () => {
  it('the first snapshot of each source is an ADD (or an empty ADD), and the sources become seen', () => {
    const config = new PodConfig({ clock: new FakeClock({ startMs: Date.parse('2026-01-01T00:00:00Z') }) });
    const api = config.channel('api');
    const file = config.channel('file');
    expect(config.seenAllSources()).toBe(false);
    api.send({ op: 'SET', pods: [apiPod('a', 'uid-a')] });
    expect(config.seenAllSources()).toBe(false);
    expect(config.seenAllSources(['api'])).toBe(true);
    file.send({ op: 'SET', pods: [] });
    expect(config.seenAllSources()).toBe(true);
    expect(drain(config)).toEqual([
      { op: 'ADD', source: 'api', names: ['a'] },
      { op: 'ADD', source: 'file', names: [] },
    ]);
    const [pod] = config.pods('api');
    expect(pod?.metadata?.annotations).toEqual({
      [CONFIG_SOURCE_ANNOTATION]: 'api',
      [CONFIG_SEEN_ANNOTATION]: '2026-01-01T00:00:00.000Z',
    });
  });

  it('an unchanged snapshot emits nothing; a later empty snapshot of a seen source emits no empty ADD', () => {
    const config = new PodConfig();
    const api = config.channel('api');
    api.send({ op: 'SET', pods: [apiPod('a', 'uid-a')] });
    drain(config);
    api.send({ op: 'SET', pods: [apiPod('a', 'uid-a')] });
    expect(drain(config)).toEqual([]);
    api.send({ op: 'SET', pods: [] });
    expect(drain(config)).toEqual([{ op: 'REMOVE', source: 'api', names: ['a'] }]);
    api.send({ op: 'SET', pods: [] });
    expect(drain(config)).toEqual([]);
  });

  it('the same objects sent again (as an informer store re-lists them) are taken as they were stored', () => {
    const config = new PodConfig();
    const api = config.channel('api');
    const a = apiPod('a', 'uid-a');
    const b = apiPod('b', 'uid-b');
    api.send({ op: 'SET', pods: [a, b] });
    drain(config);
    const storedA = config.pods('api').find((p) => p.metadata?.uid === 'uid-a');
    // b changes (a new object), a is the very same object: only b is reported, a is kept as stored.
    const b2 = apiPod('b', 'uid-b');
    b2.metadata = { ...b2.metadata, labels: { tier: 'web' } };
    api.send({ op: 'SET', pods: [a, b2] });
    expect(drain(config)).toEqual([{ op: 'UPDATE', source: 'api', names: ['b'] }]);
    expect(config.pods('api').find((p) => p.metadata?.uid === 'uid-a')).toBe(storedA);
    expect(config.pod('uid-a')).toBe(storedA);
    expect(config.pod('uid-none')).toBeUndefined();
    // a goes away and comes back as the same object: a new ADD, not the stale stored pod.
    api.send({ op: 'SET', pods: [b2] });
    api.send({ op: 'SET', pods: [a, b2] });
    expect(drain(config)).toEqual([
      { op: 'REMOVE', source: 'api', names: ['a'] },
      { op: 'ADD', source: 'api', names: ['a'] },
    ]);
    expect(config.pods('api').find((p) => p.metadata?.uid === 'uid-a')).not.toBe(storedA);
    // A status-only change of the same pod (a new object) is still a RECONCILE.
    const a2 = apiPod('a', 'uid-a');
    a2.status = { phase: 'Running' };
    api.send({ op: 'SET', pods: [a2, b2] });
    expect(drain(config)).toEqual([{ op: 'RECONCILE', source: 'api', names: ['a'] }]);
  });

  it('orders REMOVE, ADD, UPDATE, DELETE, RECONCILE within one snapshot', () => {
    const config = new PodConfig();
    const api = config.channel('api');
    api.send({
      op: 'SET',
      pods: [apiPod('gone', '1'), apiPod('changed', '2'), apiPod('deleted', '3'), apiPod('status', '4')],
    });
    drain(config);
    api.send({
      op: 'SET',
      pods: [
        apiPod('changed', '2', { spec: { containers: [{ name: 'c', image: 'nginx' }] } }),
        apiPod('deleted', '3', {
          metadata: {
            name: 'deleted',
            namespace: 'default',
            uid: '3',
            deletionTimestamp: new Date('2026-01-01T00:00:00Z'),
            deletionGracePeriodSeconds: 30,
          },
        }),
        apiPod('status', '4', { status: { phase: 'Running' } }),
        apiPod('new', '5'),
      ],
    });
    expect(drain(config)).toEqual([
      { op: 'REMOVE', source: 'api', names: ['gone'] },
      { op: 'ADD', source: 'api', names: ['new'] },
      { op: 'UPDATE', source: 'api', names: ['changed'] },
      { op: 'DELETE', source: 'api', names: ['deleted'] },
      { op: 'RECONCILE', source: 'api', names: ['status'] },
    ]);
  });

  it('a label or annotation change is an UPDATE; the local annotations are kept and not compared', () => {
    const config = new PodConfig({ clock: new FakeClock({ startMs: 1000 }) });
    const api = config.channel('api');
    api.send({ op: 'SET', pods: [apiPod('a', '1')] });
    drain(config);
    const seen = config.pods()[0]?.metadata?.annotations?.[CONFIG_SEEN_ANNOTATION];
    // Local annotations set by someone else do not count as a change.
    api.send({
      op: 'SET',
      pods: [
        apiPod('a', '1', {
          metadata: {
            name: 'a',
            namespace: 'default',
            uid: '1',
            annotations: { [CONFIG_SEEN_ANNOTATION]: 'x' },
          },
        }),
      ],
    });
    expect(drain(config)).toEqual([]);
    api.send({
      op: 'SET',
      pods: [
        apiPod('a', '1', {
          metadata: {
            name: 'a',
            namespace: 'default',
            uid: '1',
            labels: { app: 'x' },
            annotations: { note: 'y' },
          },
        }),
      ],
    });
    expect(drain(config)).toEqual([{ op: 'UPDATE', source: 'api', names: ['a'] }]);
    const stored = config.pods()[0];
    expect(stored?.metadata?.labels).toEqual({ app: 'x' });
    expect(stored?.metadata?.annotations).toEqual({
      note: 'y',
      [CONFIG_SOURCE_ANNOTATION]: 'api',
      [CONFIG_SEEN_ANNOTATION]: seen,
    });
  });

  it('incremental ADD/UPDATE/REMOVE from a source', () => {
    const config = new PodConfig();
    const http = config.channel('http');
    http.send({ op: 'ADD', pods: [apiPod('a', '1')] });
    http.send({
      op: 'UPDATE',
      pods: [
        apiPod('a', '1', { metadata: { name: 'a', namespace: 'default', uid: '1', labels: { v: '2' } } }),
      ],
    });
    http.send({ op: 'REMOVE', pods: [apiPod('a', '1')] });
    http.send({ op: 'REMOVE', pods: [apiPod('unknown', '9')] });
    expect(drain(config)).toEqual([
      { op: 'ADD', source: 'http', names: ['a'] },
      { op: 'UPDATE', source: 'http', names: ['a'] },
      { op: 'REMOVE', source: 'http', names: ['a'] },
    ]);
    // Incremental updates do not make a source seen; only a snapshot does.
    expect(config.seenAllSources()).toBe(false);
  });

  it('two pods with one full name in a source: the first wins, the second is reported', () => {
    const errors: PodSourceError[] = [];
    const config = new PodConfig({ onError: (e) => errors.push(e) });
    config.channel('file').send({ op: 'SET', pods: [apiPod('a', '1'), apiPod('a', '2')] });
    expect(drain(config)).toEqual([{ op: 'ADD', source: 'file', names: ['a'] }]);
    expect(config.pods().map((p) => p.metadata?.uid)).toEqual(['1']);
    expect(errors.map((e) => [e.code, e.source, e.location])).toEqual([
      ['DuplicateName', 'file', 'a_default'],
    ]);
  });

  it('pods of different sources are kept apart', () => {
    const config = new PodConfig();
    config.channel('api').send({ op: 'SET', pods: [apiPod('a', '1')] });
    config.channel('file').send({ op: 'SET', pods: [apiPod('b', '2')] });
    config.channel('file').send({ op: 'SET', pods: [] });
    expect(config.pods().map((p) => p.metadata?.name)).toEqual(['a']);
    expect(drain(config).at(-1)).toEqual({ op: 'REMOVE', source: 'file', names: ['b'] });
  });
});
