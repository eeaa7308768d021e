import { describe, expect, it } from 'vitest';
import {
  IndexError,
  IndexedStore,
  type KubeObject,
  Lister,
  matchesLabels,
  ObjectKeyError,
  objectKey,
} from '../src/index.js';

const pod = (ns: string, name: string, node: string, labels: Record<string, string> = {}): KubeObject => ({
  metadata: { namespace: ns, name, labels },
  spec: { nodeName: node },
});
const byNode = (o: KubeObject) => [String((o.spec as { nodeName: string }).nodeName)];

describe('IndexedStore', () => {
  it('indexes by namespace and custom index functions, and keeps indices in step with updates and deletes', () => {
    const s = new IndexedStore({ node: byNode });
    s.set('a/p1', pod('a', 'p1', 'n1'));
    s.set('a/p2', pod('a', 'p2', 'n2'));
    s.set('b/p3', pod('b', 'p3', 'n1'));
    expect(s.indexKeys('namespace', 'a').sort()).toEqual(['a/p1', 'a/p2']);
    expect(
      s
        .byIndex('node', 'n1')
        .map((o) => o.metadata?.name)
        .sort(),
    ).toEqual(['p1', 'p3']);
    s.set('a/p1', pod('a', 'p1', 'n2'));
    expect(s.indexKeys('node', 'n1')).toEqual(['b/p3']);
    s.delete('b/p3');
    expect(s.listIndexValues('node')).toEqual(['n2']);
    expect(s.listKeys().sort()).toEqual(['a/p1', 'a/p2']);
    expect(s.indexNames()).toEqual(['namespace', 'node']);
  });

  it('indexes existing objects when an index is added later, and rejects duplicates and unknown names', () => {
    const s = new IndexedStore();
    s.set('a/p1', pod('a', 'p1', 'n1'));
    s.addIndexers({ node: byNode });
    expect(s.indexKeys('node', 'n1')).toEqual(['a/p1']);
    expect(() => s.addIndexers({ node: byNode })).toThrow(IndexError);
    expect(() => s.byIndex('nope', 'x')).toThrow(IndexError);
  });

  it('keys objects as namespace/name and rejects objects without a name', () => {
    expect(objectKey(pod('a', 'p', 'n'))).toBe('a/p');
    expect(objectKey({ metadata: { name: 'node-1' } })).toBe('node-1');
    expect(() => objectKey({ metadata: {} })).toThrow(ObjectKeyError);
  });
});

describe('Lister', () => {
  it('gets by name, lists by namespace and filters by labels', () => {
    const s = new IndexedStore();
    s.set('a/p1', pod('a', 'p1', 'n1', { app: 'web' }));
    s.set('a/p2', pod('a', 'p2', 'n1', { app: 'db' }));
    s.set('b/p3', pod('b', 'p3', 'n1', { app: 'web' }));
    const l = new Lister(s);
    expect(l.get('p1', 'a')?.metadata?.name).toBe('p1');
    expect(l.namespaced('a').list().length).toBe(2);
    expect(l.namespaced('a').get('p2')?.metadata?.name).toBe('p2');
    expect(l.list((o) => matchesLabels(o, { app: 'web' })).length).toBe(2);
  });
});
