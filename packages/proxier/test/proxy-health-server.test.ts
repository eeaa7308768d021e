import { FakeClock } from '@nodeagent/core/testing';
import * as promClient from 'prom-client';
import { afterEach, describe, expect, it } from 'vitest';
import {
  createProxierMetrics,
  goTime,
  InvalidBindAddressError,
  ProxyHealthServer,
  parseBindAddress,
  TO_BE_DELETED_TAINT,
} from '../src/index.js';

const T0 = Date.UTC(2025, 0, 2, 3, 4, 5, 600);
const servers: ProxyHealthServer[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.stop()));
});

async function start(
  clock: FakeClock,
  extra: Partial<ConstructorParameters<typeof ProxyHealthServer>[0]> = {},
  noNode = false,
) {
  const hs = new ProxyHealthServer({ bindAddress: '127.0.0.1:0', healthTimeoutMs: 60_000, clock, ...extra });
  servers.push(hs);
  // As upstream's tests: the node manager has this proxy's Node.
  if (!noNode) hs.syncNode({ metadata: { name: 'n' } });
  await hs.start();
  const port = hs.port!;
  const get = async (path: string) => {
    const res = await fetch(`http://127.0.0.1:${port}${path}`);
    return { status: res.status, headers: res.headers, body: (await res.json()) as Record<string, unknown> };
  };
  return { hs, get };
}

describe('ProxyHealthServer (kube-proxy healthz semantics)', () => {
  it('is healthy at startup and while idle; lastUpdated reports "now" when healthy', async () => {
    const clock = new FakeClock({ startMs: T0 });
    const { get } = await start(clock);
    const r = await get('/healthz');
    expect(r.status).toBe(200);
    expect(r.headers.get('content-type')).toBe('application/json');
    expect(r.headers.get('x-content-type-options')).toBe('nosniff');
    // Nothing synced or queued yet: no per-family status (upstream's `omitempty`).
    expect(r.body).toEqual({
      lastUpdated: '2025-01-02T03:04:05.6Z',
      currentTime: '2025-01-02T03:04:05.6Z',
      nodeEligible: true,
      healthy: true,
    });
  });

  it('no Node seen yet: /healthz 503 with nodeEligible false (current upstream NodeEligible), /livez 200', async () => {
    const clock = new FakeClock({ startMs: T0 });
    const { hs, get } = await start(clock, {}, true);
    expect(hs.nodeEligible).toBe(false);
    const h = await get('/healthz');
    expect(h.status).toBe(503);
    expect(h.body).toEqual({
      lastUpdated: '0001-01-01T00:00:00Z',
      currentTime: '2025-01-02T03:04:05.6Z',
      nodeEligible: false,
      healthy: false,
    });
    expect((await get('/livez')).status).toBe(200);
    // The proxy itself is healthy (what health-check node ports report).
    expect(hs.isHealthy()).toBe(true);
    hs.syncNode({ metadata: { name: 'n' } });
    expect((await get('/healthz')).status).toBe(200);
  });

  it('becomes unhealthy when an update has been queued for 2 × syncPeriod without a sync', async () => {
    const clock = new FakeClock({ startMs: T0 });
    const { hs, get } = await start(clock);
    hs.updated(4);
    await clock.advance(1000);
    hs.queuedUpdate(4);
    await clock.advance(59_999);
    expect((await get('/healthz')).status).toBe(200);
    hs.queuedUpdate(4); // a later queue does not reset the oldest one
    await clock.advance(1);
    const r = await get('/healthz');
    expect(r.status).toBe(503);
    expect(r.body).toMatchObject({
      healthy: false,
      lastUpdated: goTime(T0), // the failing family's last successful sync
      status: { IPv4: { healthy: false, lastUpdated: goTime(T0) } },
    });
    expect((await get('/livez')).status).toBe(503);
    hs.updated(4);
    expect((await get('/healthz')).status).toBe(200);
    expect((await get('/livez')).body).toEqual({
      lastUpdated: goTime(clock.now()),
      currentTime: goTime(clock.now()),
      healthy: true,
      status: { IPv4: { healthy: true, lastUpdated: goTime(clock.now()) } },
    });
  });

  it('judges each family on its own (dual stack)', async () => {
    const clock = new FakeClock({ startMs: T0 });
    const { hs, get } = await start(clock);
    hs.queuedUpdate(4);
    hs.queuedUpdate(6);
    await clock.advance(30_000);
    hs.updated(4);
    await clock.advance(30_000);
    const r = await get('/healthz');
    expect(r.status).toBe(503);
    expect(r.body.status).toEqual({
      IPv4: { healthy: true, lastUpdated: goTime(T0 + 30_000) },
      IPv6: { healthy: false, lastUpdated: '0001-01-01T00:00:00Z' },
    });
  });

  it('a queued update that never gets a first sync turns unhealthy too', async () => {
    const clock = new FakeClock({ startMs: T0 });
    const { hs } = await start(clock);
    hs.queuedUpdate(4);
    await clock.advance(60_000);
    expect(hs.isHealthy()).toBe(false);
  });

  it.each([
    ['deletionTimestamp', { metadata: { name: 'n', deletionTimestamp: new Date(T0) } }],
    [
      'ToBeDeletedByClusterAutoscaler taint',
      { metadata: { name: 'n' }, spec: { taints: [{ key: TO_BE_DELETED_TAINT, effect: 'NoSchedule' }] } },
    ],
  ])('/healthz fails and /livez passes while the Node has a %s', async (_what, node) => {
    const clock = new FakeClock({ startMs: T0 });
    const { hs, get } = await start(clock);
    hs.syncNode(node);
    const h = await get('/healthz');
    expect(h.status).toBe(503);
    expect(h.body).toMatchObject({ nodeEligible: false, healthy: false });
    expect((await get('/livez')).status).toBe(200);
    expect(hs.isHealthy()).toBe(true); // what the health-check node ports report
    hs.syncNode({ metadata: { name: 'n' }, spec: { taints: [{ key: 'other', effect: 'NoSchedule' }] } });
    expect((await get('/healthz')).status).toBe(200);
  });

  it('answers 404 elsewhere and counts requests by code in kubeproxy_proxy_healthz_total', async () => {
    const clock = new FakeClock({ startMs: T0 });
    const registry = new promClient.Registry();
    const metrics = createProxierMetrics({ registry, promClient });
    const { hs, get } = await start(clock, { metrics });
    const res = await fetch(`http://127.0.0.1:${hs.port}/metrics`);
    expect(res.status).toBe(404);
    await get('/healthz');
    hs.syncNode({ metadata: { name: 'n', deletionTimestamp: new Date(T0) } });
    await get('/healthz');
    await get('/livez');
    const text = await registry.metrics();
    expect(text).toContain('kubeproxy_proxy_healthz_total{code="200"} 1');
    expect(text).toContain('kubeproxy_proxy_healthz_total{code="503"} 1');
    expect(text).toContain('kubeproxy_proxy_livez_total{code="200"} 1');
  });

  it('defaults to 0.0.0.0:10256 and parses bind addresses', () => {
    expect(parseBindAddress('0.0.0.0:10256', 1)).toEqual({ host: '0.0.0.0', port: 10256 });
    expect(parseBindAddress('[::]:10256', 1)).toEqual({ host: '::', port: 10256 });
    expect(parseBindAddress(':7', 1)).toEqual({ host: '', port: 7 });
    expect(parseBindAddress('127.0.0.1', 10256)).toEqual({ host: '127.0.0.1', port: 10256 });
    expect(parseBindAddress('fd00::1', 10256)).toEqual({ host: 'fd00::1', port: 10256 });
    expect(() => parseBindAddress('example.com:80', 1)).toThrow(InvalidBindAddressError);
    expect(() => parseBindAddress('1.2.3.4:99999', 1)).toThrow(InvalidBindAddressError);
    expect(() => new ProxyHealthServer({ bindAddress: 'nope:1' })).toThrow(InvalidBindAddressError);
  });

  it('formats times as Go marshals time.Time', () => {
    expect(goTime(Date.UTC(2025, 0, 2, 3, 4, 5, 0))).toBe('2025-01-02T03:04:05Z');
    expect(goTime(Date.UTC(2025, 0, 2, 3, 4, 5, 120))).toBe('2025-01-02T03:04:05.12Z');
    expect(goTime(undefined)).toBe('0001-01-01T00:00:00Z');
  });
});
