import { FakeClock, RecordingLogger } from '@nodeagent/core/testing';
import * as promClient from 'prom-client';
import { describe, expect, it } from 'vitest';
import {
  InformerStoppedError,
  isTombstone,
  type KubeObject,
  SharedInformer,
  SharedInformerFactory,
} from '../src/index.js';
import { FakeListerWatcher } from '../src/testing.js';

const pod = (name: string, extra: Record<string, unknown> = {}): KubeObject => ({
  metadata: { name, namespace: 'default', managedFields: [{ manager: 'kubectl' }] },
  ...extra,
});
const tick = () => new Promise<void>((r) => setImmediate(r));
async function until(cond: () => boolean, timeoutMs = 3000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!cond()) {
    if (Date.now() > deadline) throw new Error('timed out');
    await tick();
  }
}

function make(options: ConstructorParameters<typeof SharedInformer>[1] = {}) {
  const lw = new FakeListerWatcher();
  const clock = new FakeClock();
  const informer = new SharedInformer(lw, { clock, random: () => 0, ...options });
  return { lw, clock, informer };
}

describe('SharedInformer handlers', () => {
  it('a slow async handler does not delay the stream or other handlers, and still sees every event in order', async () => {
    const { lw, informer } = make();
    let release: () => void = () => {};
    const gate = new Promise<void>((r) => {
      release = r;
    });
    const slow: string[] = [];
    const fast: string[] = [];
    informer.addEventHandler({
      onAdd: async (o) => {
        await gate;
        slow.push(o.metadata?.name ?? '');
      },
    });
    informer.addEventHandler({ onAdd: (o) => void fast.push(o.metadata?.name ?? '') });
    await informer.start();
    for (let i = 0; i < 100; i++) lw.upsert(pod(`p${i}`));
    await until(() => fast.length === 100);
    expect(informer.indexer.size).toBe(100);
    expect(slow).toEqual([]);
    release();
    await until(() => slow.length === 100);
    expect(slow).toEqual(fast);
    await informer.stop();
  });

  it('reports a throwing or rejecting handler (log, metric, event) and keeps delivering to it', async () => {
    const registry = new promClient.Registry();
    const logger = new RecordingLogger();
    const { lw, informer } = make({ metrics: { registry, promClient }, logger, name: 'pods' });
    const got: string[] = [];
    const reported: string[] = [];
    informer.on('handlerError', (err, info) =>
      reported.push(`${info.handler}:${info.notification}:${err.message}`),
    );
    informer.addEventHandler(
      {
        onAdd: (o) => {
          got.push(o.metadata?.name ?? '');
          if (o.metadata?.name === 'bad') throw new Error('boom');
        },
        onUpdate: async () => {
          throw new Error('async boom');
        },
      },
      { name: 'h1' },
    );
    await informer.start();
    lw.upsert(pod('bad'));
    lw.upsert(pod('good'));
    lw.upsert(pod('good', { spec: { x: 1 } }));
    await until(() => reported.length === 2);
    expect(got).toEqual(['bad', 'good']);
    expect(reported).toEqual(['h1:add:boom', 'h1:update:async boom']);
    expect(logger.find('event handler failed', 'error')).toHaveLength(2);
    const values = (await registry.getSingleMetric('informer_handler_errors_total')?.get())?.values;
    expect(values).toEqual([expect.objectContaining({ labels: { name: 'pods', handler: 'h1' }, value: 2 })]);
    await informer.stop();
  });

  it('delivers add(isInInitialList), update(old, new) and delete, tombstones after relists, and applies the transform', async () => {
    const { lw, informer } = make({
      transform: (o) => ({ ...o, metadata: { ...o.metadata, managedFields: undefined } }),
    });
    lw.upsert(pod('a'));
    lw.upsert(pod('b'));
    const log: string[] = [];
    informer.addEventHandler({
      onAdd: (o, initial) => void log.push(`add ${o.metadata?.name} ${initial}`),
      onUpdate: (o, n) =>
        void log.push(`update ${o.metadata?.resourceVersion}->${n.metadata?.resourceVersion}`),
      onDelete: (o) => void log.push(`delete ${isTombstone(o) ? `tombstone ${o.key}` : o.metadata?.name}`),
    });
    await informer.start();
    lw.upsert(pod('c'));
    lw.upsert(pod('a', { spec: { v: 2 } }));
    lw.remove('default/c');
    lw.remove('default/b', { silent: true }); // missed while "disconnected"
    lw.sendError(410, 'Expired');
    await until(() => log.length === 6);
    expect(log).toEqual([
      'add a true',
      'add b true',
      'add c false',
      'update 2->5',
      'delete c',
      'delete tombstone default/b',
    ]);
    expect(informer.indexer.getByKey('default/a')?.metadata?.managedFields).toBeUndefined();
    expect(lw.listCalls.map((c) => c.resourceVersion)).toEqual(['0', '']);
    await informer.stop();
  });

  it('per-handler resync re-delivers cached objects as updates, only to that handler, at least 1 s apart', async () => {
    const { lw, informer, clock } = make();
    lw.upsert(pod('a'));
    const resynced: string[] = [];
    const other: string[] = [];
    informer.addEventHandler(
      { onUpdate: (o, n) => void resynced.push(`${o === n}`) },
      { resyncPeriodMs: 10 },
    );
    informer.addEventHandler({ onUpdate: () => void other.push('x') });
    await informer.start();
    await clock.advance(999);
    expect(resynced).toEqual([]);
    await clock.advance(1);
    await until(() => resynced.length === 1);
    await clock.advance(1000);
    await until(() => resynced.length === 2);
    expect(resynced).toEqual(['true', 'true']);
    expect(other).toEqual([]);
    await informer.stop();
  });

  it('per-handler hasSynced, late handlers receive the cache as initial adds, removeHandler stops delivery', async () => {
    const { lw, informer } = make();
    lw.upsert(pod('a'));
    let release: () => void = () => {};
    const gate = new Promise<void>((r) => {
      release = r;
    });
    const slowReg = informer.addEventHandler({ onAdd: () => gate });
    await informer.start();
    expect(informer.hasSynced()).toBe(true);
    expect(slowReg.hasSynced()).toBe(false);
    release();
    await until(() => slowReg.hasSynced());
    const late: string[] = [];
    const lateReg = informer.addEventHandler({
      onAdd: (o, initial) => void late.push(`${o.metadata?.name} ${initial}`),
    });
    await until(() => lateReg.hasSynced());
    expect(late).toEqual(['a true']);
    informer.removeHandler(lateReg);
    lw.upsert(pod('b'));
    await until(() => informer.indexer.size === 2);
    await tick();
    expect(late).toEqual(['a true']);
    await informer.stop();
  });

  it('skips objects without a name with a badObject event and keeps the rest', async () => {
    const { lw, informer } = make();
    const bad: unknown[] = [];
    informer.on('badObject', (_e, o) => bad.push(o));
    await informer.start();
    lw.sendEvent({ type: 'ADDED', object: { metadata: {} } });
    lw.upsert(pod('ok'));
    await until(() => informer.indexer.size === 1);
    expect(bad).toHaveLength(1);
    await informer.stop();
  });
});

describe('start / stop / waitForSync', () => {
  it('start() rejects when the signal is already aborted, waitForSync honours its own signal', async () => {
    const { informer } = make();
    // The lifecycle rule: the signal's reason, and the informer is left stopped.
    await expect(informer.start(AbortSignal.abort(new InformerStoppedError('x')))).rejects.toBeInstanceOf(
      InformerStoppedError,
    );
    expect(informer.isStopped).toBe(true);
    const aborted = make();
    await expect(aborted.informer.start(AbortSignal.abort())).rejects.toThrow(/aborted/);
    expect(aborted.informer.isStopped).toBe(true);
    const other = make();
    other.lw.failNextList();
    const c = new AbortController();
    const wait = other.informer.waitForSync(c.signal);
    c.abort(new Error('gave up'));
    await expect(wait).rejects.toThrow('gave up');
    await other.informer.stop();
  });

  it('start() twice is an error', async () => {
    const { informer } = make();
    await informer.start();
    await expect(informer.start()).rejects.toThrow(/already started/);
    await informer.stop();
  });
});

describe('SharedInformerFactory', () => {
  it('shares one informer (one watch) per resource, namespace and selectors', async () => {
    const made: string[] = [];
    const lws: FakeListerWatcher[] = [];
    const factory = new SharedInformerFactory({
      listerWatcherFor: (r) => {
        made.push(`${r.resource}|${r.namespace ?? ''}|${r.fieldSelector ?? ''}`);
        const lw = new FakeListerWatcher();
        lws.push(lw);
        return lw;
      },
      defaults: { clock: new FakeClock() },
    });
    const a = factory.pods({ fieldSelector: 'spec.nodeName=n1' });
    const b = factory.pods({ fieldSelector: 'spec.nodeName=n1' });
    const c = factory.pods();
    const d = factory.endpointSlices({ namespace: 'kube-system' });
    expect(a).toBe(b);
    expect(a).not.toBe(c);
    expect(made).toEqual(['pods||spec.nodeName=n1', 'pods||', 'endpointslices|kube-system|']);
    const controller = new AbortController();
    await factory.start(controller.signal);
    expect([a, c, d].every((i) => i.hasSynced())).toBe(true);
    expect(lws.map((l) => l.listCalls.length)).toEqual([1, 1, 1]);
    const late = factory.nodes();
    await factory.waitForCacheSync();
    expect(late.hasSynced()).toBe(true);
    await factory.stop();
  });
});
