/**
 * client-go's rest_client_* metrics for the informer's HTTP client: names, labels and
 * buckets as k8s.io/component-base/metrics/prometheus/restclient registers them, with the
 * values client-go's request.go records (`code` = HTTP status or `<error>`, `method` = verb,
 * `host` = the server URL's host:port; latency for lists, none for watches).
 */
import { KubeConfig } from '@kubernetes/client-node';
import * as promClient from 'prom-client';
import { afterEach, describe, expect, it } from 'vitest';
import { REST_CLIENT_DURATION_BUCKETS, RestListerWatcher, SharedInformerFactory } from '../src/index.js';
import { fail, ScriptedServer } from './scripted-server.js';

/** prom-client sets `metricName` on histogram values (its type omits it). */
const metricName = (v: object): string | undefined => (v as { metricName?: string }).metricName;

let server: ScriptedServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

describe('rest_client_* metrics', () => {
  it('counts lists and watches by code, method and host, and times lists with client-go buckets', async () => {
    server = await new ScriptedServer().start();
    const registry = new promClient.Registry();
    const lw = new RestListerWatcher({
      kubeConfig: server.kubeConfig(),
      path: '/api/v1/pods',
      metrics: { registry, promClient },
    });
    const host = new URL(server.url).host;
    const signal = new AbortController().signal;
    await lw.list({ resourceVersion: '0' }, signal);
    server.onList(fail(500, 'InternalError'));
    await expect(lw.list({ resourceVersion: '0' }, signal)).rejects.toThrow();
    const ctrl = new AbortController();
    const stream = await lw.watch({ resourceVersion: '1' }, ctrl.signal);
    ctrl.abort();
    await expect(
      (async () => {
        for await (const _ of stream) {
          /* none */
        }
      })(),
    ).rejects.toThrow();
    lw.close();

    const requests = (await registry.getSingleMetric('rest_client_requests_total')?.get())?.values ?? [];
    expect(requests).toContainEqual(
      expect.objectContaining({ labels: { code: '200', method: 'GET', host }, value: 2 }),
    );
    expect(requests).toContainEqual(
      expect.objectContaining({ labels: { code: '500', method: 'GET', host }, value: 1 }),
    );

    const latency = await registry.getSingleMetric('rest_client_request_duration_seconds')?.get();
    expect(latency?.type).toBe('histogram');
    const count = latency?.values.find((v) => metricName(v) === 'rest_client_request_duration_seconds_count');
    expect(count).toMatchObject({ labels: { verb: 'GET', host }, value: 2 }); // the two lists only
    const les = (latency?.values ?? [])
      .filter((v) => metricName(v) === 'rest_client_request_duration_seconds_bucket')
      .map((v) => v.labels.le);
    expect(les).toEqual([...REST_CLIENT_DURATION_BUCKETS, '+Inf']);
  });

  it('a request without a response is counted with code <error>', async () => {
    const kc = new KubeConfig();
    kc.loadFromOptions({
      clusters: [{ name: 'c', server: 'http://127.0.0.1:1', skipTLSVerify: false }],
      users: [{ name: 'u' }],
      contexts: [{ name: 'ctx', cluster: 'c', user: 'u' }],
      currentContext: 'ctx',
    });
    const registry = new promClient.Registry();
    const lw = new RestListerWatcher({
      kubeConfig: kc,
      path: '/api/v1/pods',
      metrics: { registry, promClient },
    });
    await expect(lw.list({}, new AbortController().signal)).rejects.toThrow();
    lw.close();
    const requests = (await registry.getSingleMetric('rest_client_requests_total')?.get())?.values ?? [];
    expect(requests).toEqual([
      expect.objectContaining({ labels: { code: '<error>', method: 'GET', host: '127.0.0.1:1' }, value: 1 }),
    ]);
  });

  it("the factory gives its RestListerWatchers the informers' registry", async () => {
    server = await new ScriptedServer().start();
    const registry = new promClient.Registry();
    const factory = new SharedInformerFactory({
      kubeConfig: server.kubeConfig(),
      defaults: { metrics: { registry, promClient } },
    });
    factory.pods();
    await factory.start();
    const ok = async () =>
      ((await registry.getSingleMetric('rest_client_requests_total')?.get())?.values ?? []).find(
        (v) => v.labels.code === '200',
      )?.value ?? 0;
    const deadline = Date.now() + 5000;
    while ((await ok()) < 2 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
    await factory.stop();
    expect(await ok()).toBe(2); // the list and the watch
  });
});
