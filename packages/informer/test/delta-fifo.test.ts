import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { DeltaFIFO, IndexedStore, isTombstone, type KubeObject, objectKey } from '../src/index.js';

const obj = (name: string, rv: number): KubeObject => ({
  metadata: { name, namespace: 'ns', resourceVersion: String(rv) },
});

function consumer() {
  const store = new IndexedStore();
  const fifo = new DeltaFIFO({ knownObjects: store });
  const drain = () => {
    const out: string[] = [];
    for (let p = fifo.pop(); p; p = fifo.pop()) {
      for (const d of p.deltas) {
        out.push(`${d.type}:${p.key}${isTombstone(d.object) ? '(tombstone)' : ''}`);
        if (d.type === 'Deleted') store.delete(p.key);
        else store.set(p.key, d.object as KubeObject);
      }
    }
    return out;
  };
  return { store, fifo, drain };
}

describe('DeltaFIFO', () => {
  it('keeps per-key order and pops keys in first-dirty order', () => {
    const { fifo } = consumer();
    fifo.add(obj('a', 1));
    fifo.add(obj('b', 2));
    fifo.update(obj('a', 3));
    const first = fifo.pop();
    expect(first?.key).toBe('ns/a');
    expect(first?.deltas.map((d) => d.type)).toEqual(['Added', 'Updated']);
    expect(fifo.pop()?.key).toBe('ns/b');
    expect(fifo.pop()).toBeUndefined();
  });

  it('replace emits Replaced, and Deleted tombstones with the last known state for vanished keys', () => {
    const { fifo, store, drain } = consumer();
    fifo.replace([obj('a', 1), obj('b', 2)]);
    expect(fifo.hasSynced()).toBe(false);
    expect(drain()).toEqual(['Replaced:ns/a', 'Replaced:ns/b']);
    expect(fifo.hasSynced()).toBe(true);
    fifo.replace([obj('a', 1)]);
    const p = [fifo.pop(), fifo.pop()];
    const del = p[1]?.deltas[0];
    expect(del?.type).toBe('Deleted');
    expect(del && isTombstone(del.object) ? del.object.obj.metadata?.resourceVersion : '').toBe('2');
    expect(store.size).toBe(2);
  });

  it('also tombstones keys that were only queued', () => {
    const { fifo, drain } = consumer();
    fifo.replace([]);
    drain();
    fifo.add(obj('x', 5));
    fifo.replace([]);
    expect(drain()).toEqual(['Added:ns/x', 'Deleted:ns/x(tombstone)']);
  });

  it('collapses consecutive deletes, preferring the real final state', () => {
    const { fifo, store } = consumer();
    store.set('ns/a', obj('a', 1));
    fifo.delete(obj('a', 2));
    fifo.replace([]);
    const p = fifo.pop();
    expect(p?.deltas).toHaveLength(1);
    expect(isTombstone(p?.deltas[0]?.object as KubeObject)).toBe(false);
  });

  it('ignores deletes of unknown keys and resyncs only keys without pending deltas', () => {
    const { fifo, store, drain } = consumer();
    fifo.delete(obj('ghost', 1));
    expect(fifo.length).toBe(0);
    store.set('ns/a', obj('a', 1));
    store.set('ns/b', obj('b', 1));
    fifo.update(obj('b', 2));
    fifo.resync();
    expect(drain()).toEqual(['Updated:ns/b', 'Sync:ns/a']);
  });

  it('model test: after any op sequence and a final replace, the store equals the replaced list', () => {
    const name = fc.constantFrom('a', 'b', 'c', 'd');
    const op = fc.oneof(
      fc.record({ k: fc.constant('add' as const), name }),
      fc.record({ k: fc.constant('update' as const), name }),
      fc.record({ k: fc.constant('delete' as const), name }),
      fc.record({ k: fc.constant('replace' as const), names: fc.uniqueArray(name) }),
      fc.record({ k: fc.constant('drain' as const) }),
    );
    fc.assert(
      fc.property(fc.array(op, { maxLength: 30 }), fc.uniqueArray(name), (ops, final) => {
        const { fifo, store, drain } = consumer();
        let rv = 0;
        for (const o of ops) {
          if (o.k === 'add') fifo.add(obj(o.name, ++rv));
          else if (o.k === 'update') fifo.update(obj(o.name, ++rv));
          else if (o.k === 'delete') fifo.delete(obj(o.name, ++rv));
          else if (o.k === 'replace') fifo.replace(o.names.map((n) => obj(n, ++rv)));
          else drain();
        }
        const finalObjs = final.map((n) => obj(n, ++rv));
        fifo.replace(finalObjs);
        drain();
        expect(store.listKeys().sort()).toEqual(finalObjs.map((o) => objectKey(o)).sort());
        for (const o of finalObjs) expect(store.getByKey(objectKey(o))).toBe(o);
      }),
      { numRuns: 200 },
    );
  });
});
