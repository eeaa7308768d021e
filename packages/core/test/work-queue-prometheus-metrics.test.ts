import { createPromMetricsProvider, MetricRegistrationError, WorkQueue } from '@nodeagent/core';
import { FakeClock } from '@nodeagent/core/testing';
import * as promClient from 'prom-client';
import { describe, expect, it } from 'vitest';

type Json = Awaited<ReturnType<promClient.Registry['getMetricsAsJSON']>>;

function sampleValue(json: Json, metric: string, queue: string, metricName = metric): number | undefined {
  const m = json.find((x) => x.name === metric);
  const v = (
    m?.values as { value: number; labels: Record<string, unknown>; metricName?: string }[] | undefined
  )?.find((x) => x.labels.name === queue && (x.metricName ?? metric) === metricName);
  return v?.value;
}

function setup(name = 'pods') {
  const registry = new promClient.Registry();
  const clock = new FakeClock({ startMs: 0 });
  const metrics = createPromMetricsProvider({ registry, promClient });
  const queue = new WorkQueue<string>({ name, clock, metrics });
  return { registry, clock, queue, metrics };
}

describe('work queue metrics on a prom-client registry', () => {
  it('registers client-go names with the name label', async () => {
    const { registry } = setup();
    const names = (await registry.getMetricsAsJSON()).map((m) => m.name).sort();
    expect(names).toEqual([
      'workqueue_adds_total',
      'workqueue_depth',
      'workqueue_longest_running_processor_seconds',
      'workqueue_queue_duration_seconds',
      'workqueue_retries_total',
      'workqueue_unfinished_work_seconds',
      'workqueue_work_duration_seconds',
    ]);
    const text = await registry.metrics();
    expect(text).toContain('workqueue_depth{name="pods"} 0');
  });

  it('counts adds and depth; deduplicated adds do not count', async () => {
    const { registry, queue } = setup();
    queue.add('a');
    queue.add('a');
    queue.add('b');
    let json = await registry.getMetricsAsJSON();
    expect(sampleValue(json, 'workqueue_adds_total', 'pods')).toBe(2);
    expect(sampleValue(json, 'workqueue_depth', 'pods')).toBe(2);
    await queue.get();
    json = await registry.getMetricsAsJSON();
    expect(sampleValue(json, 'workqueue_depth', 'pods')).toBe(1);
  });

  it('observes queue and work durations in seconds on the clock', async () => {
    const { registry, queue, clock } = setup();
    queue.add('a');
    await clock.advance(2000);
    await queue.get();
    await clock.advance(500);
    queue.done('a');
    const json = await registry.getMetricsAsJSON();
    expect(
      sampleValue(json, 'workqueue_queue_duration_seconds', 'pods', 'workqueue_queue_duration_seconds_sum'),
    ).toBe(2);
    expect(
      sampleValue(json, 'workqueue_queue_duration_seconds', 'pods', 'workqueue_queue_duration_seconds_count'),
    ).toBe(1);
    expect(
      sampleValue(json, 'workqueue_work_duration_seconds', 'pods', 'workqueue_work_duration_seconds_sum'),
    ).toBe(0.5);
  });

  it('reports unfinished work and the longest running processor at scrape time', async () => {
    const { registry, queue, clock } = setup();
    queue.add('a');
    queue.add('b');
    await queue.get(); // a starts at 0
    await clock.advance(3000);
    await queue.get(); // b starts at 3000
    await clock.advance(1000);
    let json = await registry.getMetricsAsJSON();
    expect(sampleValue(json, 'workqueue_unfinished_work_seconds', 'pods')).toBe(4 + 1);
    expect(sampleValue(json, 'workqueue_longest_running_processor_seconds', 'pods')).toBe(4);
    queue.done('a');
    queue.done('b');
    json = await registry.getMetricsAsJSON();
    expect(sampleValue(json, 'workqueue_unfinished_work_seconds', 'pods')).toBe(0);
    expect(sampleValue(json, 'workqueue_longest_running_processor_seconds', 'pods')).toBe(0);
  });

  it('counts retries from addAfter and addRateLimited', async () => {
    const { registry, queue } = setup();
    queue.addAfter('a', 10);
    queue.addRateLimited('b');
    queue.addAfter('c', 0);
    expect(sampleValue(await registry.getMetricsAsJSON(), 'workqueue_retries_total', 'pods')).toBe(3);
  });

  it('lets several queues and providers share one registry, one label value each', async () => {
    const registry = new promClient.Registry();
    const clock = new FakeClock({ startMs: 0 });
    const q1 = new WorkQueue<string>({
      name: 'one',
      clock,
      metrics: createPromMetricsProvider({ registry, promClient }),
    });
    const q2 = new WorkQueue<string>({
      name: 'two',
      clock,
      metrics: createPromMetricsProvider({ registry, promClient }),
    });
    q1.add('a');
    q2.add('a');
    q2.add('b');
    await q2.get();
    await clock.advance(1000);
    const json = await registry.getMetricsAsJSON();
    expect(sampleValue(json, 'workqueue_depth', 'one')).toBe(1);
    expect(sampleValue(json, 'workqueue_depth', 'two')).toBe(1);
    expect(sampleValue(json, 'workqueue_unfinished_work_seconds', 'one')).toBe(0);
    expect(sampleValue(json, 'workqueue_unfinished_work_seconds', 'two')).toBe(1);
  });

  it('never touches the global registry', async () => {
    setup('isolated');
    expect(await promClient.register.getSingleMetric('workqueue_depth')).toBeUndefined();
  });

  it('refuses a registry holding a same-named metric of another kind', () => {
    const registry = new promClient.Registry();
    new promClient.Counter({ name: 'workqueue_depth', help: 'x', registers: [registry] });
    expect(
      () =>
        new WorkQueue<string>({ name: 'q', metrics: createPromMetricsProvider({ registry, promClient }) }),
    ).toThrow(MetricRegistrationError);
  });
});
