import { createServer } from 'node:net';
import { buildProxySnapshots } from '@nodeagent/proxy-state';
import { freePort } from '@nodeagent/test-support/free-port';
import { afterEach, describe, expect, it } from 'vitest';
import { healthCheckNodePorts, localReadyEndpoints, ServiceHealthServer } from '../src/index.js';

const servers: ServiceHealthServer[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()));
});

async function get(port: number) {
  const res = await fetch(`http://127.0.0.1:${port}/`);
  return { status: res.status, headers: res.headers, text: await res.text() };
}

describe('ServiceHealthServer (health-check node ports)', () => {
  it('answers 200 with the local endpoint count, 503 without local endpoints, as upstream', async () => {
    let healthy = true;
    const hcs = new ServiceHealthServer({ bindAddresses: ['127.0.0.1'], proxyHealthy: () => healthy });
    servers.push(hcs);
    const port = await freePort();
    await hcs.syncServices(new Map([['ns1/web', port]]));
    let r = await get(port);
    expect(r.status).toBe(503);
    expect(r.headers.get('x-load-balancing-endpoint-weight')).toBe('0');
    hcs.syncEndpoints(new Map([['ns1/web', 2]]));
    r = await get(port);
    expect(r.status).toBe(200);
    expect(r.headers.get('content-type')).toBe('application/json');
    expect(r.headers.get('x-content-type-options')).toBe('nosniff');
    expect(r.headers.get('x-load-balancing-endpoint-weight')).toBe('2');
    expect(r.text).toBe(
      '{\n\t"service": {\n\t\t"namespace": "ns1",\n\t\t"name": "web"\n\t},\n\t"localEndpoints": 2,\n\t"serviceProxyHealthy": true\n}',
    );
    expect(JSON.parse(r.text)).toEqual({
      service: { namespace: 'ns1', name: 'web' },
      localEndpoints: 2,
      serviceProxyHealthy: true,
    });
    healthy = false; // an unhealthy proxy fails every health check
    r = await get(port);
    expect(r.status).toBe(503);
    expect(JSON.parse(r.text)).toMatchObject({ localEndpoints: 2, serviceProxyHealthy: false });
    healthy = true;
    hcs.syncEndpoints(new Map()); // missing → 0
    expect((await get(port)).status).toBe(503);
  });

  it('opens and closes servers as services come and go or change port', async () => {
    const hcs = new ServiceHealthServer({ bindAddresses: ['127.0.0.1'] });
    servers.push(hcs);
    const [p1, p2, p3] = [await freePort(), await freePort(), await freePort()];
    await hcs.syncServices(
      new Map([
        ['a/one', p1],
        ['a/two', p2],
      ]),
    );
    expect([...hcs.services]).toEqual([
      ['a/one', p1],
      ['a/two', p2],
    ]);
    await hcs.syncServices(new Map([['a/two', p3]]));
    expect([...hcs.services]).toEqual([['a/two', p3]]);
    await expect(get(p1)).rejects.toThrow();
    await expect(get(p2)).rejects.toThrow();
    expect((await get(p3)).status).toBe(503);
    await hcs.close();
    await expect(get(p3)).rejects.toThrow();
  });

  it('reports a port it cannot open and retries it on the next sync', async () => {
    const blocker = createServer();
    await new Promise<void>((r) => blocker.listen(0, '127.0.0.1', r));
    const port = (blocker.address() as { port: number }).port;
    const errors: [string, number][] = [];
    const hcs = new ServiceHealthServer({
      bindAddresses: ['127.0.0.1'],
      onListenError: (svc, p) => errors.push([svc, p]),
    });
    servers.push(hcs);
    await hcs.syncServices(new Map([['ns/busy', port]]));
    expect(errors).toEqual([['ns/busy', port]]);
    expect(hcs.services.size).toBe(0);
    await new Promise<void>((r) => blocker.close(() => r()));
    await hcs.syncServices(new Map([['ns/busy', port]]));
    expect(hcs.services.get('ns/busy')).toBe(port);
  });

  it('derives ports and unique ready local endpoint IPs from snapshots', () => {
    const svc = (name: string, extra: Record<string, unknown>) => ({
      metadata: { namespace: 'ns', name },
      spec: {
        type: 'LoadBalancer',
        clusterIP: `172.30.0.${name.length}`,
        externalTrafficPolicy: 'Local',
        ports: [
          { name: 'a', port: 80, nodePort: 30080 },
          { name: 'b', port: 443, nodePort: 30443 },
        ],
        ...extra,
      },
    });
    const { v4 } = buildProxySnapshots({
      nodeName: 'me',
      nodeIPs: ['192.168.0.2'],
      services: [svc('lb', { healthCheckNodePort: 32000 }), svc('other', { healthCheckNodePort: 32001 })],
      endpointSlices: [
        {
          metadata: { namespace: 'ns', name: 'lb-1', labels: { 'kubernetes.io/service-name': 'lb' } },
          addressType: 'IPv4',
          ports: [
            { name: 'a', port: 8080 },
            { name: 'b', port: 8443 },
          ],
          endpoints: [
            { addresses: ['10.0.0.1'], nodeName: 'me' },
            {
              addresses: ['10.0.0.2'],
              nodeName: 'me',
              conditions: { ready: false, serving: true, terminating: true },
            },
            { addresses: ['10.0.0.3'], nodeName: 'elsewhere' },
          ],
        },
      ],
    });
    const ports = healthCheckNodePorts([v4]);
    expect([...ports]).toEqual([
      ['ns/lb', 32000],
      ['ns/other', 32001],
    ]);
    // 10.0.0.1 serves two ports but counts once; terminating and remote endpoints do not count.
    expect([...localReadyEndpoints([v4], ports)]).toEqual([['ns/lb', 1]]);
  });
});
