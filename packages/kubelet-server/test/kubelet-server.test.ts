// The kubelet server's endpoints on the fake runtime, with upstream's answers
// (pkg/kubelet/server/server.go): /pods, /runningpods/, /healthz, metrics and summary
// providers, /containerLogs with its validation and errors, the read-only port's subset.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Fixture, get, startFixture } from './fixture.js';

const summaryCalls: string[] = [];

describe('KubeletServer endpoints', () => {
  let f: Fixture;
  beforeAll(async () => {
    f = await startFixture({
      readOnlyPort: 0,
      healthzPort: 0,
      healthChecks: { syncloop: () => undefined },
      metrics: { metrics: async () => 'kubelet_running_pods 1\n' },
      cadvisorMetrics: { metrics: async () => 'container_cpu_usage_seconds_total 1\n' },
      summary: {
        get: async (update) => {
          summaryCalls.push(`get(${update})`);
          return { node: { nodeName: 'node1' }, pods: [] } as never;
        },
        getCpuAndMemory: async () => {
          summaryCalls.push('getCpuAndMemory');
          return { node: { nodeName: 'node1' }, pods: [] } as never;
        },
      },
    });
  });
  afterAll(async () => {
    await f?.stop();
  });

  it('serves /pods as a v1 PodList of the pod manager pods', async () => {
    const r = await get(`${f.server.url}/pods`);
    expect(r.status).toBe(200);
    const list = JSON.parse(r.body);
    expect(list).toMatchObject({ kind: 'PodList', apiVersion: 'v1', metadata: {} });
    expect(list.items.map((p: { metadata: { name: string } }) => p.metadata.name)).toEqual(['web']);
  });

  it('serves /runningpods/ from the runtime: ready sandboxes with their running containers', async () => {
    const list = JSON.parse((await get(`${f.server.url}/runningpods/`)).body);
    expect(list.items).toEqual([
      {
        metadata: { name: 'web', namespace: 'default', uid: 'uid-web' },
        spec: { containers: [{ name: 'app', image: 'busybox', resources: {} }] },
        status: {},
      },
    ]);
  });

  it('serves /healthz with ping, log and the injected checks on the main and healthz ports', async () => {
    expect((await get(`${f.server.url}/healthz`)).body).toBe('ok');
    expect((await get(`${f.server.url}/healthz?verbose`)).body).toBe(
      '[+]ping ok\n[+]log ok\n[+]syncloop ok\nhealthz check passed\n',
    );
    expect((await get(`${f.server.healthzUrl}/healthz/syncloop`)).body).toBe('ok');
    expect((await get(`${f.server.healthzUrl}/pods`)).status).toBe(404);
  });

  it('serves the injected metrics and the summary', async () => {
    const m = await get(`${f.server.url}/metrics`);
    expect(m.body).toBe('kubelet_running_pods 1\n');
    expect(m.headers['content-type']).toBe('text/plain; version=0.0.4; charset=utf-8');
    expect((await get(`${f.server.url}/metrics/cadvisor`)).body).toContain(
      'container_cpu_usage_seconds_total',
    );
    expect((await get(`${f.server.url}/metrics/resource`)).status).toBe(404); // not injected
    expect(JSON.parse((await get(`${f.server.url}/stats/summary`)).body).node.nodeName).toBe('node1');
  });

  it('/stats/summary: only_cpu_and_memory=true (once, exactly) → GetCPUAndMemoryStats; GET cached, POST updated', async () => {
    // Upstream handleSummary: Form["only_cpu_and_memory"] must have one value equal to "true".
    summaryCalls.length = 0;
    const base = `${f.server.url}/stats/summary`;
    await get(`${base}?only_cpu_and_memory=true`);
    await get(`${base}/?only_cpu_and_memory=1`);
    await get(`${base}?only_cpu_and_memory=true&only_cpu_and_memory=true`);
    await get(`${base}?only_cpu_and_memory=True`);
    await get(base, { method: 'POST' });
    await get(`${base}?only_cpu_and_memory=true`, { method: 'POST' });
    expect(summaryCalls).toEqual([
      'getCpuAndMemory',
      'get(false)',
      'get(false)',
      'get(false)',
      'get(true)',
      'getCpuAndMemory',
    ]);
    expect((await get(base, { method: 'PUT' })).status).toBe(405);
  });

  it('streams a container log, with tailLines, timestamps and limitBytes', async () => {
    const url = `${f.server.url}/containerLogs/default/web/app`;
    const all = await get(url);
    expect(all.status).toBe(200);
    expect(all.body).toBe('new line 1\nnew line 2\nwarn\nnew line 3\n');
    expect((await get(`${url}?tailLines=1`)).body).toBe('new line 3\n');
    expect((await get(`${url}?tail=2`)).body).toBe('warn\nnew line 3\n');
    expect((await get(`${url}?limitBytes=4`)).body).toBe('new ');
    expect((await get(`${url}?timestamps=true&tailLines=1`)).body).toMatch(
      /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{9}Z new line 3\n$/,
    );
  });

  it('reads the previous instance with previous=true', async () => {
    expect((await get(`${f.server.url}/containerLogs/default/web/app?previous=true`)).body).toBe(
      'old line\n',
    );
  });

  it('answers upstream errors for bad log requests', async () => {
    const base = `${f.server.url}/containerLogs/default/web/app`;
    expect(await get(`${base}?tailLines=-1`)).toMatchObject({
      status: 422,
      body: '{"message": "Invalid request."}',
    });
    expect(await get(`${base}?limitBytes=0`)).toMatchObject({ status: 422 });
    expect(await get(`${base}?sinceSeconds=0`)).toMatchObject({ status: 422 });
    expect(await get(`${base}?sinceSeconds=1&sinceTime=2024-01-01T00:00:00Z`)).toMatchObject({ status: 422 });
    expect(await get(`${base}?sinceTime=garbage`)).toMatchObject({
      status: 400,
      body: '{"message": "Unable to decode query."}',
    });
    expect(await get(`${f.server.url}/containerLogs/default/nope/app`)).toMatchObject({
      status: 404,
      body: 'pod "nope" does not exist',
    });
    expect(await get(`${f.server.url}/containerLogs/default/web/nope`)).toMatchObject({
      status: 404,
      body: 'container "nope" not found in pod "web"',
    });
  });

  it('refuses a streaming endpoint without an upgrade', async () => {
    expect(
      await get(`${f.server.url}/exec/default/web/app?command=ls&output=1`, { method: 'POST' }),
    ).toMatchObject({
      status: 400,
      body: 'Upgrade request required',
    });
  });

  it('serves only the default handlers on the read-only port, without authentication', async () => {
    const ro = f.server.readOnlyUrl ?? '';
    expect(ro.startsWith('http://')).toBe(true);
    expect((await get(`${ro}/pods`)).status).toBe(200);
    expect((await get(`${ro}/healthz`)).body).toBe('ok');
    expect((await get(`${ro}/metrics`)).status).toBe(200);
    expect((await get(`${ro}/containerLogs/default/web/app`)).status).toBe(404);
    expect((await get(`${ro}/runningpods/`)).status).toBe(404);
  });
});

describe('a followed log whose client stops reading', () => {
  let f: Fixture;
  beforeAll(async () => {
    f = await startFixture();
  });
  afterAll(async () => {
    await f?.stop();
  });

  it('holds the file reader at the socket buffers instead of reading the file into memory', async () => {
    const { appendFile } = await import('node:fs/promises');
    const { join } = await import('node:path');
    const { request } = await import('node:https');
    const line = `${new Date().toISOString()} stdout F ${'y'.repeat(1000)}\n`;
    const chunk = line.repeat(10_000); // ~10 MB
    for (let i = 0; i < 6; i++) await appendFile(join(f.logDir, 'app', '1.log'), chunk);
    const req = request(`${f.server.url}/containerLogs/default/web/app?follow=true`, {
      rejectUnauthorized: false,
    });
    const res = await new Promise<import('node:http').IncomingMessage>((resolve) =>
      req.on('response', resolve).end(),
    );
    res.pause(); // the client stops reading
    // Wait for the reader to stall: two samples 300 ms apart that agree.
    let first = -1;
    let second = -2;
    for (let i = 0; i < 30 && second !== first; i++) {
      first = f.server.logStreams[0]?.bytesRead ?? 0;
      await new Promise((r) => setTimeout(r, 300));
      second = f.server.logStreams[0]?.bytesRead ?? 0;
    }
    // Stalled (no growth while paused), at what the loopback socket buffers hold: far below the 60 MB file.
    expect(second).toBe(first);
    expect(second).toBeLessThan(16 * 1024 * 1024);
    expect(second).toBeGreaterThan(0);
    req.destroy();
    for (let i = 0; i < 100 && f.server.logStreams.length > 0; i++)
      await new Promise((r) => setTimeout(r, 20));
    expect(f.server.logStreams).toEqual([]); // the reader ended with the client
  });
});

describe('enableServer false (the kubelet’s --enable-server=false)', () => {
  it('serves no authenticated API, but the read-only port and /healthz still answer', async () => {
    const f = await startFixture({ enableServer: false, readOnlyPort: 0, healthzPort: 0 });
    try {
      expect(() => f.server.url).toThrow('KubeletServer: the main server is not listening');
      expect((await get(`${f.server.healthzUrl}/healthz`)).body).toBe('ok');
      const list = JSON.parse((await get(`${f.server.readOnlyUrl}/pods`)).body);
      expect(list.items.map((p: { metadata: { name: string } }) => p.metadata.name)).toEqual(['web']);
    } finally {
      await f.stop();
    }
  });
});
