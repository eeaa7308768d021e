// client-go's correlation (events_cache.go): aggregation of similar events, counting of
// repeats as patches of the first Event, and the per-object spam filter; in fake time.
import { FakeClock } from '@nodeagent/core/testing';
import { describe, expect, it } from 'vitest';
import type { CoreEvent } from '../src/event.js';
import { EventCorrelator, EventRecorder, podReference } from '../src/index.js';
import { FakeEventSink } from '../src/testing.js';

const T0 = Date.UTC(2026, 0, 2, 3, 4, 5);
const pod = { metadata: { name: 'web', namespace: 'shop', uid: 'u1' } };

function setup(options: { burst?: number } = {}) {
  const clock = new FakeClock({ startMs: T0 });
  const sink = new FakeEventSink();
  const recorder = new EventRecorder({
    sink,
    clock,
    host: 'node-1',
    random: () => 0.5,
    correlator: options.burst === undefined ? {} : { burst: options.burst },
  });
  return { clock, sink, recorder };
}

function ev(message: string, overrides: Partial<CoreEvent> = {}): CoreEvent {
  return {
    metadata: { name: `web.${message.length}`, namespace: 'shop' },
    involvedObject: { kind: 'Pod', name: 'web', namespace: 'shop', uid: 'u1', apiVersion: 'v1' },
    type: 'Warning',
    reason: 'Unhealthy',
    message,
    count: 1,
    firstTimestamp: '2026-01-02T03:04:05Z',
    lastTimestamp: '2026-01-02T03:04:05Z',
    source: { component: 'kubelet', host: 'node-1' },
    ...overrides,
  };
}

describe('the recorded Event', () => {
  it('has the kubelet source, reporting fields, count 1 and the name <object>.<hex unix nanos>', async () => {
    const { recorder, sink } = setup();
    await recorder.start();
    recorder.event(podReference(pod), 'Normal', 'Scheduled', 'hello');
    await recorder.flush();
    const [e] = sink.list();
    expect(e).toMatchObject({
      metadata: { name: `web.${(BigInt(T0) * 1_000_000n).toString(16)}`, namespace: 'shop' },
      involvedObject: { kind: 'Pod', apiVersion: 'v1', name: 'web', namespace: 'shop', uid: 'u1' },
      type: 'Normal',
      reason: 'Scheduled',
      message: 'hello',
      count: 1,
      firstTimestamp: '2026-01-02T03:04:05Z',
      lastTimestamp: '2026-01-02T03:04:05Z',
      source: { component: 'kubelet', host: 'node-1' },
      reportingComponent: 'kubelet',
      reportingInstance: 'node-1',
    });
  });

  it('goes to the default namespace for a cluster-scoped object, and two events in one ms get distinct names', async () => {
    const { recorder, sink } = setup();
    await recorder.start();
    recorder.event(
      { kind: 'Node', name: 'node-1', uid: 'node-1' },
      'Normal',
      'Starting',
      'Starting kubelet.',
    );
    recorder.event({ kind: 'Node', name: 'node-1', uid: 'node-1' }, 'Normal', 'NodeReady', 'ready');
    await recorder.flush();
    const names = sink.list().map((e) => e.metadata.name);
    expect(sink.list().map((e) => e.metadata.namespace)).toEqual(['default', 'default']);
    expect(new Set(names).size).toBe(2);
  });
});

describe('de-duplication', () => {
  it('patches count, lastTimestamp and message of the first Event when the same event repeats', async () => {
    const { recorder, sink, clock } = setup();
    await recorder.start();
    recorder.event(podReference(pod), 'Warning', 'BackOff', 'Back-off restarting failed container');
    await recorder.flush();
    await clock.advance(42_000);
    recorder.event(podReference(pod), 'Warning', 'BackOff', 'Back-off restarting failed container');
    await recorder.flush();
    expect(sink.calls.map((c) => c.verb)).toEqual(['create', 'patch']);
    expect(sink.calls[1]?.patch).toEqual({
      count: 2,
      lastTimestamp: '2026-01-02T03:04:47Z',
      message: 'Back-off restarting failed container',
    });
    const [e] = sink.list();
    expect(sink.list()).toHaveLength(1);
    expect(e).toMatchObject({
      count: 2,
      firstTimestamp: '2026-01-02T03:04:05Z',
      lastTimestamp: '2026-01-02T03:04:47Z',
    });
  });

  it('creates the Event again when the patch finds it gone (404)', async () => {
    const { recorder, sink } = setup();
    await recorder.start();
    recorder.event(podReference(pod), 'Normal', 'Pulled', 'same');
    await recorder.flush();
    sink.events.clear();
    recorder.event(podReference(pod), 'Normal', 'Pulled', 'same');
    await recorder.flush();
    expect(sink.calls.map((c) => `${c.verb}:${c.failed}`)).toEqual([
      'create:false',
      'patch:true',
      'create:false',
    ]);
    expect(sink.list()[0]).toMatchObject({ count: 2 });
    expect(sink.list()[0]?.metadata.resourceVersion).toBe('2');
  });

  it('keeps events that differ in field path apart', () => {
    const c = new EventCorrelator({}, { now: () => T0 }, (n) => `${n}.x`);
    const a = c.correlate(
      ev('m', { involvedObject: { ...ev('m').involvedObject, fieldPath: 'spec.containers{a}' } }),
    );
    const b = c.correlate(
      ev('m', { involvedObject: { ...ev('m').involvedObject, fieldPath: 'spec.containers{b}' } }),
    );
    expect(a.skip || a.patch).toBe(undefined);
    expect(b.skip || b.patch).toBe(undefined);
  });
});

describe('aggregation', () => {
  it('after 10 distinct messages of one reason within 10 minutes, records "(combined from similar events): …" and counts it', () => {
    let now = T0;
    const c = new EventCorrelator({}, { now: () => now }, (n) => `${n}.agg`);
    for (let i = 0; i < 9; i++) {
      const r = c.correlate(ev(`failure ${i}`));
      expect(r.skip).toBe(false);
      if (!r.skip) expect(r.event.message).toBe(`failure ${i}`);
    }
    now += 60_000;
    const tenth = c.correlate(ev('failure 9'));
    expect(tenth.skip).toBe(false);
    if (tenth.skip) return;
    expect(tenth.event.message).toBe('(combined from similar events): failure 9');
    expect(tenth.event.metadata.name).toBe('web.agg');
    expect(tenth.event.count).toBe(1);
    expect(tenth.patch).toBeUndefined();
    c.updateState({ ...tenth.event, metadata: { ...tenth.event.metadata, resourceVersion: '7' } });
    const eleventh = c.correlate(ev('failure 10'));
    if (eleventh.skip) throw new Error('skipped');
    expect(eleventh.event.message).toBe('(combined from similar events): failure 10');
    expect(eleventh.event.metadata.name).toBe('web.agg');
    expect(eleventh.event.count).toBe(2);
    expect(eleventh.patch).toMatchObject({ count: 2, message: '(combined from similar events): failure 10' });
  });

  it('starts over when the group was not seen for more than 10 minutes', () => {
    let now = T0;
    const c = new EventCorrelator({}, { now: () => now }, (n) => `${n}.agg`);
    for (let i = 0; i < 9; i++) c.correlate(ev(`failure ${i}`));
    now += 600_001;
    const r = c.correlate(ev('failure 9'));
    if (r.skip) throw new Error('skipped');
    expect(r.event.message).toBe('failure 9');
  });

  it('does not aggregate across reasons or objects', () => {
    const c = new EventCorrelator({}, { now: () => T0 }, (n) => `${n}.agg`);
    for (let i = 0; i < 9; i++) c.correlate(ev(`failure ${i}`));
    const other = c.correlate(ev('failure 9', { reason: 'Failed' }));
    if (other.skip) throw new Error('skipped');
    expect(other.event.message).toBe('failure 9');
  });
});

describe('spam filter', () => {
  it('lets a source send 25 events about one object, then one more every 5 minutes', async () => {
    const { recorder, sink, clock } = setup();
    await recorder.start();
    for (let i = 0; i < 30; i++) recorder.event(podReference(pod), 'Normal', `Reason${i}`, `message ${i}`);
    await recorder.flush();
    expect(sink.list()).toHaveLength(25);
    expect(recorder.dropped().get('spam_filter')).toBe(5);
    // Another object has its own bucket.
    recorder.event(
      podReference({ metadata: { name: 'db', namespace: 'shop', uid: 'u2' } }),
      'Normal',
      'X',
      'y',
    );
    await recorder.flush();
    expect(sink.list()).toHaveLength(26);
    await clock.advance(299_000);
    recorder.event(podReference(pod), 'Normal', 'Late', 'too early');
    await recorder.flush();
    expect(sink.list()).toHaveLength(26);
    await clock.advance(1_000);
    recorder.event(podReference(pod), 'Normal', 'Late', 'refilled');
    recorder.event(podReference(pod), 'Normal', 'Late', 'refilled twice');
    await recorder.flush();
    expect(sink.list().map((e) => e.message)).toContain('refilled');
    expect(sink.list().map((e) => e.message)).not.toContain('refilled twice');
    expect(recorder.dropped().get('spam_filter')).toBe(7);
  });

  it('counts repeats of one event against the same bucket (a patch takes a token too)', async () => {
    const { recorder, sink } = setup({ burst: 3 });
    await recorder.start();
    for (let i = 0; i < 5; i++) recorder.event(podReference(pod), 'Warning', 'BackOff', 'same');
    await recorder.flush();
    expect(sink.calls.map((c) => c.verb)).toEqual(['create', 'patch', 'patch']);
    expect(sink.list()[0]?.count).toBe(3);
  });
});
