/**
 * client-go's client-side throttling (rest/config.go RESTClientFor, rest/request.go
 * tryThrottle): one token bucket per client config shared by every request, defaults 5/10
 * for a zero QPS/Burst, no limiter for a negative QPS, lists wait but watches do not, the
 * wait observed in rest_client_rate_limiter_duration_seconds{verb,host}, and a wait over
 * 50 ms logged as "Waited before sending request".
 */
import { TokenBucketRateLimiter } from '@nodeagent/core';
import { FakeClock, RecordingLogger } from '@nodeagent/core/testing';
import * as promClient from 'prom-client';
import { afterEach, describe, expect, it } from 'vitest';
import {
  DEFAULT_REST_CLIENT_BURST,
  DEFAULT_REST_CLIENT_QPS,
  RestListerWatcher,
  restClientRateLimiter,
  SharedInformerFactory,
  throttleRequest,
} from '../src/index.js';
import { ScriptedServer } from './scripted-server.js';

/** prom-client sets `metricName` on histogram values (its type omits it). */
const metricName = (v: object): string | undefined => (v as { metricName?: string }).metricName;

let server: ScriptedServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

const realWait = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** A pods lister-watcher on a fresh scripted server whose 1-token limiter is already empty. */
async function withEmptyBucket(): Promise<RestListerWatcher> {
  const clock = new FakeClock({ startMs: 0 });
  server = await new ScriptedServer().start();
  const limiter = new TokenBucketRateLimiter(1, 1, clock);
  expect(limiter.tryAccept()).toBe(true);
  const lw = new RestListerWatcher({
    kubeConfig: server.kubeConfig(),
    path: '/api/v1/pods',
    rateLimiter: limiter,
    clock,
  });
  return lw;
}

describe('restClientRateLimiter (client-go RESTClientFor)', () => {
  it('fills in client-go defaults for 0 and means no limit for a negative qps', () => {
    const defaults = restClientRateLimiter({ qps: 0, burst: 0 });
    expect(defaults?.qps).toBe(DEFAULT_REST_CLIENT_QPS);
    expect(defaults?.burst).toBe(DEFAULT_REST_CLIENT_BURST);
    expect([DEFAULT_REST_CLIENT_QPS, DEFAULT_REST_CLIENT_BURST]).toEqual([5, 10]);
    const kubelet = restClientRateLimiter({ qps: 50, burst: 100 });
    expect([kubelet?.qps, kubelet?.burst]).toEqual([50, 100]);
    expect(restClientRateLimiter({ qps: -1, burst: 10 })).toBeUndefined();
    expect(() => restClientRateLimiter({ qps: Number.NaN })).toThrow(/qps must be a number/);
    expect(() => restClientRateLimiter({ qps: 1, burst: -1 })).toThrow(
      /burst must be an integer >= 0, got -1/,
    );
  });
});

describe('RestListerWatcher with a rate limiter', () => {
  it('a burst of N+5 lists with burst N: N go at once, the last 5 are sent 1/qps apart', async () => {
    const clock = new FakeClock({ startMs: 0 });
    server = await new ScriptedServer().start();
    server.clock = clock;
    const registry = new promClient.Registry();
    const logger = new RecordingLogger();
    const burst = 3;
    const limiter = new TokenBucketRateLimiter(10, burst, clock);
    const lws = [0, 1].map(
      (i) =>
        new RestListerWatcher({
          kubeConfig: (server as ScriptedServer).kubeConfig(),
          path: i === 0 ? '/api/v1/pods' : '/api/v1/nodes',
          metrics: { registry, promClient },
          rateLimiter: limiter,
          logger,
          clock,
        }),
    );
    const signal = new AbortController().signal;
    // Two lister-watchers of one client config share the bucket.
    const lists = Array.from({ length: burst + 5 }, (_, i) => lws[i % 2]?.list({}, signal));
    const s = server;
    await s.until(() => s.requests.length === burst);
    await realWait(30);
    expect(s.requests.length).toBe(burst);
    for (let i = 1; i <= 5; i++) {
      await clock.advance(99);
      await realWait(20);
      expect(s.requests.length).toBe(burst + i - 1);
      await clock.advance(1);
      await s.until(() => s.requests.length === burst + i);
    }
    await Promise.all(lists);
    expect(s.requests.map((r) => r.at)).toEqual([0, 0, 0, 100, 200, 300, 400, 500]);

    const host = new URL(s.url).host;
    const waited = await registry.getSingleMetric('rest_client_rate_limiter_duration_seconds')?.get();
    expect(waited?.type).toBe('histogram');
    const count = waited?.values.find(
      (v) => metricName(v) === 'rest_client_rate_limiter_duration_seconds_count',
    );
    const sum = waited?.values.find((v) => metricName(v) === 'rest_client_rate_limiter_duration_seconds_sum');
    expect(count).toMatchObject({ labels: { verb: 'GET', host }, value: 8 });
    expect(sum?.value).toBeCloseTo(0.1 + 0.2 + 0.3 + 0.4 + 0.5, 9);

    const waits = logger.records.filter((r) => r.msg === 'Waited before sending request');
    expect(waits.map((r) => [r.level, r.fields.delay])).toEqual([
      ['debug', '100ms'],
      ['debug', '200ms'],
      ['debug', '300ms'],
      ['debug', '400ms'],
      ['debug', '500ms'],
    ]);
    expect(waits[0]?.fields).toMatchObject({
      reason: 'client-side throttling, not priority and fairness',
      verb: 'GET',
    });
    for (const lw of lws) lw.close();
  });

  it('watches do not wait for a token (client-go does not rate-limit watches)', async () => {
    const lw = await withEmptyBucket();
    const ctrl = new AbortController();
    await lw.watch({ resourceVersion: '1' }, ctrl.signal);
    expect(server?.requestsOf('watch')).toHaveLength(1);
    ctrl.abort();
    lw.close();
  });

  it('a list aborted while it waits for a token is never sent', async () => {
    const lw = await withEmptyBucket();
    const ctrl = new AbortController();
    const list = lw.list({}, ctrl.signal);
    await realWait(20);
    ctrl.abort();
    await expect(list).rejects.toMatchObject({ name: 'AbortError' });
    expect(server?.requests).toHaveLength(0);
    lw.close();
  });

  it('the informer factory gives every lister-watcher the one limiter', async () => {
    const clock = new FakeClock({ startMs: 0 });
    server = await new ScriptedServer().start();
    const limiter = new TokenBucketRateLimiter(1, 2, clock);
    const factory = new SharedInformerFactory({
      kubeConfig: server.kubeConfig(),
      rateLimiter: limiter,
      defaults: { clock },
    });
    const pods = factory.pods();
    const nodes = factory.nodes();
    const services = factory.services();
    void factory.start().catch(() => {});
    const s = server;
    await s.until(() => s.requestsOf('list').length === 2);
    await realWait(30);
    expect(s.requestsOf('list')).toHaveLength(2); // the third informer's list waits for a token
    await s.until(
      () => s.requestsOf('list').length === 3,
      () => clock.advance(100),
    );
    await factory.stop();
    expect([pods, nodes, services]).toHaveLength(3);
  });
});

describe('throttleRequest logging', () => {
  it('logs a wait over 1 s at info, at most once per 10 s per limiter', async () => {
    const clock = new FakeClock({ startMs: 0 });
    const limiter = new TokenBucketRateLimiter(0.5, 1, clock); // 2 s per token
    const logger = new RecordingLogger();
    const throttle = {
      limiter,
      logger,
      clock,
      metrics: { requestResult() {}, requestLatency() {}, rateLimiterLatency() {} },
    };
    const url = new URL('https://10.0.0.1:6443/api/v1/nodes/n1');
    const waits = Array.from({ length: 4 }, () => throttleRequest(throttle, 'PATCH', url, undefined));
    await clock.advance(6000);
    await Promise.all(waits);
    const records = logger.records.filter((r) => r.msg === 'Waited before sending request');
    // Waits of 0, 2, 4 and 6 s: three at debug, and only the first long one at info.
    expect(records.filter((r) => r.level === 'debug').map((r) => r.fields.delay)).toEqual(['2s', '4s', '6s']);
    expect(records.filter((r) => r.level === 'info').map((r) => r.fields.delay)).toEqual(['2s']);
    expect(records[0]?.fields).toMatchObject({ verb: 'PATCH', URL: url.toString() });
  });
});
