// The agent's ApiClient as a client-go REST client: every request waits for a token of the
// client config's limiter (shared with the informers' lists, as client-go's clientset shares
// one per config), and is counted in rest_client_requests_total{code,method,host},
// rest_client_request_duration_seconds{verb,host} and
// rest_client_rate_limiter_duration_seconds{verb,host}.

import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { KubeConfig } from '@kubernetes/client-node';
import { TokenBucketRateLimiter } from '@nodeagent/core';
import { FakeClock, RecordingLogger } from '@nodeagent/core/testing';
import { RestListerWatcher } from '@nodeagent/informer';
import * as promClient from 'prom-client';
import { afterEach, describe, expect, it } from 'vitest';
import { ApiClient } from '../src/api-client.js';

/** prom-client sets `metricName` on histogram values (its type omits it). */
const metricName = (v: object): string | undefined => (v as { metricName?: string }).metricName;
const realWait = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

interface Seen {
  readonly method: string;
  readonly path: string;
  readonly at: number;
}

/** Answers every request 200 `{}` (404 for /missing), recording the fake time it arrived. */
async function startServer(clock: FakeClock) {
  const seen: Seen[] = [];
  const server = http.createServer((req, res) => {
    seen.push({ method: req.method ?? '', path: req.url ?? '', at: clock.now() });
    req.resume();
    req.on('end', () => {
      const missing = req.url?.startsWith('/missing');
      res.writeHead(missing ? 404 : 200, { 'Content-Type': 'application/json' });
      res.end(missing ? '{"kind":"Status","reason":"NotFound","code":404}' : '{"items":[]}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const kc = new KubeConfig();
  kc.loadFromOptions({
    clusters: [{ name: 'c', server: url, skipTLSVerify: false }],
    users: [{ name: 'u' }],
    contexts: [{ name: 'ctx', cluster: 'c', user: 'u' }],
    currentContext: 'ctx',
  });
  return {
    seen,
    kc,
    host: new URL(url).host,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

async function until(cond: () => boolean): Promise<void> {
  const deadline = Date.now() + 5000;
  while (!cond()) {
    if (Date.now() > deadline) throw new Error('timed out');
    await realWait(5);
  }
}

let cleanup: (() => Promise<void>) | undefined;
afterEach(async () => {
  await cleanup?.();
  cleanup = undefined;
});

describe('ApiClient rate limit and rest_client_* metrics', () => {
  it('N+5 requests with burst N, shared with an informer list: N at once, the last 5 paced 1/qps', async () => {
    const clock = new FakeClock({ startMs: 0 });
    const srv = await startServer(clock);
    const limiter = new TokenBucketRateLimiter(20, 4, clock); // 50 ms per token
    const registry = new promClient.Registry();
    const logger = new RecordingLogger();
    const api = new ApiClient(srv.kc, {
      rateLimiter: limiter,
      metrics: { registry, promClient },
      logger,
      clock,
    });
    const lw = new RestListerWatcher({
      kubeConfig: srv.kc,
      path: '/api/v1/pods',
      rateLimiter: limiter,
      clock,
    });
    cleanup = async () => {
      api.close();
      lw.close();
      await srv.close();
    };
    // The informer's list takes the first token; the ApiClient's eight requests share the rest.
    const list = lw.list({}, new AbortController().signal);
    await until(() => srv.seen.length === 1);
    const requests: Promise<unknown>[] = [
      list,
      api.patch('/api/v1/nodes/n1/status', 'strategic', { status: {} }),
      api.create('/api/v1/namespaces/default/events', { kind: 'Event' }),
      api.replace('/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases/n1', { kind: 'Lease' }),
      api.get('/api/v1/nodes/n1'),
      api.delete('/api/v1/namespaces/default/pods/p'),
      api.get('/missing'),
      api.patch('/api/v1/namespaces/default/pods/p/status', 'merge', {}),
      api.get('/api/v1/nodes/n2'),
    ];
    await until(() => srv.seen.length === 4);
    await realWait(30);
    expect(srv.seen).toHaveLength(4);
    for (let i = 1; i <= 5; i++) {
      await clock.advance(49);
      await realWait(20);
      expect(srv.seen).toHaveLength(4 + i - 1);
      await clock.advance(1);
      await until(() => srv.seen.length === 4 + i);
    }
    await Promise.all(requests);
    expect(srv.seen.map((s) => s.at)).toEqual([0, 0, 0, 0, 50, 100, 150, 200, 250]);
    // The three that found tokens may arrive in any order; the five that waited, in call order.
    expect(
      srv.seen
        .slice(1, 4)
        .map((s) => s.method)
        .sort(),
    ).toEqual(['PATCH', 'POST', 'PUT']);
    expect(srv.seen.slice(4).map((s) => `${s.method} ${s.path}`)).toEqual([
      'GET /api/v1/nodes/n1',
      'DELETE /api/v1/namespaces/default/pods/p',
      'GET /missing',
      'PATCH /api/v1/namespaces/default/pods/p/status',
      'GET /api/v1/nodes/n2',
    ]);

    const host = srv.host;
    const counts = (await registry.getSingleMetric('rest_client_requests_total')?.get())?.values ?? [];
    // The ApiClient's 8 requests (the lister-watcher reports to no registry here).
    expect(counts).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ labels: { code: '200', method: 'PATCH', host }, value: 2 }),
        expect.objectContaining({ labels: { code: '200', method: 'POST', host }, value: 1 }),
        expect.objectContaining({ labels: { code: '200', method: 'PUT', host }, value: 1 }),
        expect.objectContaining({ labels: { code: '200', method: 'GET', host }, value: 2 }),
        expect.objectContaining({ labels: { code: '404', method: 'GET', host }, value: 1 }),
        expect.objectContaining({ labels: { code: '200', method: 'DELETE', host }, value: 1 }),
      ]),
    );
    const duration =
      (await registry.getSingleMetric('rest_client_request_duration_seconds')?.get())?.values ?? [];
    const durationCount = duration
      .filter((v) => metricName(v) === 'rest_client_request_duration_seconds_count')
      .reduce((n, v) => n + v.value, 0);
    expect(durationCount).toBe(8);
    const waited =
      (await registry.getSingleMetric('rest_client_rate_limiter_duration_seconds')?.get())?.values ?? [];
    const waitSum = waited
      .filter((v) => metricName(v) === 'rest_client_rate_limiter_duration_seconds_sum')
      .reduce((n, v) => n + v.value, 0);
    // The ApiClient's waits: 0, 0, 0 (PATCH, POST, PUT), then 50..250 ms for the last five.
    expect(waitSum).toBeCloseTo(0.05 + 0.1 + 0.15 + 0.2 + 0.25, 9);
    const getWait = waited.find(
      (v) => metricName(v) === 'rest_client_rate_limiter_duration_seconds_count' && v.labels.verb === 'GET',
    );
    expect(getWait).toMatchObject({ labels: { verb: 'GET', host }, value: 3 });

    // Waits over 50 ms are logged as client-go logs them; 50 ms itself is not "longer than".
    expect(
      logger.records.filter((r) => r.msg === 'Waited before sending request').map((r) => r.fields.delay),
    ).toEqual(['100ms', '150ms', '200ms', '250ms']);
  });

  it('a request aborted while it waits is never sent; its wait and latency are observed, no result', async () => {
    const clock = new FakeClock({ startMs: 0 });
    const srv = await startServer(clock);
    const limiter = new TokenBucketRateLimiter(1, 1, clock);
    const registry = new promClient.Registry();
    const api = new ApiClient(srv.kc, { rateLimiter: limiter, metrics: { registry, promClient }, clock });
    cleanup = async () => {
      api.close();
      await srv.close();
    };
    await api.get('/api/v1/nodes/n1');
    const ctrl = new AbortController();
    const waiting = api.get('/api/v1/nodes/n2', ctrl.signal);
    await clock.advance(300);
    ctrl.abort();
    await expect(waiting).rejects.toMatchObject({ name: 'AbortError' });
    expect(srv.seen.map((s) => s.path)).toEqual(['/api/v1/nodes/n1']);
    const counts = (await registry.getSingleMetric('rest_client_requests_total')?.get())?.values ?? [];
    expect(counts.reduce((n, v) => n + v.value, 0)).toBe(1);
    const waited =
      (await registry.getSingleMetric('rest_client_rate_limiter_duration_seconds')?.get())?.values ?? [];
    const sum = waited.find((v) => metricName(v) === 'rest_client_rate_limiter_duration_seconds_sum');
    expect(sum?.value).toBeCloseTo(0.3, 9);
    // The given-back token: the next request goes at 1 s, not 2 s.
    const next = api.get('/api/v1/nodes/n3');
    await clock.advance(700);
    await next;
    expect(srv.seen.at(-1)).toMatchObject({ path: '/api/v1/nodes/n3', at: 1000 });
  });

  it('without a limiter nothing waits, and requests are still counted', async () => {
    const clock = new FakeClock({ startMs: 0 });
    const srv = await startServer(clock);
    const registry = new promClient.Registry();
    const api = new ApiClient(srv.kc, { metrics: { registry, promClient } });
    cleanup = async () => {
      api.close();
      await srv.close();
    };
    await Promise.all(Array.from({ length: 30 }, (_, i) => api.get(`/api/v1/nodes/n${i}`)));
    expect(srv.seen).toHaveLength(30);
    const counts = (await registry.getSingleMetric('rest_client_requests_total')?.get())?.values ?? [];
    expect(counts).toContainEqual(
      expect.objectContaining({ labels: { code: '200', method: 'GET', host: srv.host }, value: 30 }),
    );
    // No limiter, no wait observed (client-go observes only when the client has a limiter).
    expect(
      (await registry.getSingleMetric('rest_client_rate_limiter_duration_seconds')?.get())?.values,
    ).toEqual([]);
  });
});
