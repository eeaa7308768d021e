// Hostile probes through the manager, against real loopback servers: each gives upstream's
// failure message for its own container, and a healthy probe next to them keeps its schedule.
import type { V1Container, V1Probe } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { ProbeAttempt } from '../src/index.js';
import { harness, POD_UID, podWith, startedContainer } from './helpers.js';
import { freePort, type HttpTestServer, startHttpServer } from './servers.js';

describe('hostile probes stay with their container', () => {
  let server: HttpTestServer;
  beforeAll(async () => {
    const chunk = Buffer.alloc(1 << 20, 'y');
    server = await startHttpServer((req, res) => {
      if (req.url === '/ok') return void res.end('ok');
      if (req.url === '/503') {
        res.statusCode = 503;
        return void res.end();
      }
      if (req.url === '/loop') {
        res.writeHead(302, { Location: '/loop' });
        return void res.end();
      }
      if (req.url === '/huge') {
        res.writeHead(200);
        let n = 0;
        const pump = (): void => {
          while (n++ < 100) if (!res.write(chunk)) return void res.once('drain', pump);
          res.end();
        };
        return pump();
      }
      // '/hang': never answers
    });
  });
  afterAll(async () => {
    await server.close();
  });

  it('port 0, a missing named port, nobody listening, a hanging server, 100 MB, a redirect loop, a 503, a hanging exec', async () => {
    const h = await harness({ runtimeRequestTimeoutMs: 0 });
    h.runner.script = () => 'hang';
    const refused = await freePort();
    const p = server.port;
    const probe = (handler: Partial<V1Probe>): V1Probe => ({
      periodSeconds: 1,
      timeoutSeconds: 1,
      ...handler,
    });
    const containers: V1Container[] = [
      { name: 'ok', image: 'x', readinessProbe: probe({ httpGet: { port: p, path: '/ok' } }) },
      { name: 'port0', image: 'x', readinessProbe: probe({ httpGet: { port: 0, path: '/' } }) },
      { name: 'noname', image: 'x', readinessProbe: probe({ tcpSocket: { port: 'nope' as never } }) },
      { name: 'refused', image: 'x', readinessProbe: probe({ tcpSocket: { port: refused } }) },
      { name: 'hang', image: 'x', readinessProbe: probe({ httpGet: { port: p, path: '/hang' } }) },
      { name: 'huge', image: 'x', readinessProbe: probe({ httpGet: { port: p, path: '/huge' } }) },
      { name: 'loop', image: 'x', readinessProbe: probe({ httpGet: { port: p, path: '/loop' } }) },
      { name: 'fivehundred', image: 'x', readinessProbe: probe({ httpGet: { port: p, path: '/503' } }) },
      { name: 'exec', image: 'x', readinessProbe: probe({ exec: { command: ['sleep', '100'] } }) },
    ];
    const pod = podWith({});
    pod.spec = { containers };
    const startedAt = new Date(h.clock.now());
    const statuses = containers.map((c) => startedContainer(c.name, `containerd://${c.name}`, startedAt));
    h.statuses.set(POD_UID, { phase: 'Running', podIP: '127.0.0.1', containerStatuses: statuses });
    const attempts: ProbeAttempt[] = [];
    h.manager.on('probe', (a) => attempts.push(a));
    h.manager.addPod(pod);

    const okStarts = () =>
      attempts.filter((a) => a.containerName === 'ok').map((a) => a.startedAtMs - h.clock.now());
    for (let k = 0; k < 3; k++) {
      await h.clock.advance(k === 0 ? 0 : 1000);
      await vi.waitFor(() => expect(okStarts()).toHaveLength(k + 1), { timeout: 3000 });
    }
    // The healthy probe ran at 0, 1 s and 2 s of (fake) schedule.
    expect(okStarts()).toEqual([-2000, -1000, 0]);
    await vi.waitFor(() => expect(attempts.some((a) => a.containerName === 'hang')).toBe(true), {
      timeout: 3000,
    });
    await vi.waitFor(() => expect(attempts.some((a) => a.containerName === 'huge')).toBe(true), {
      timeout: 3000,
    });

    const first = (name: string) => h.recorder.events.find((e) => e.container === name)?.message;
    expect(first('ok')).toBeUndefined();
    expect(first('huge')).toBeUndefined();
    expect(h.manager.resultOf('readiness', 'containerd://huge')).toBe('success');
    expect(first('port0')).toBe(
      'Readiness probe errored and resulted in unknown state: invalid port number: 0',
    );
    expect(first('noname')).toBe(
      'Readiness probe errored and resulted in unknown state: strconv.Atoi: parsing "nope": invalid syntax',
    );
    expect(first('refused')).toBe(
      `Readiness probe failed: dial tcp 127.0.0.1:${refused}: connect: connection refused`,
    );
    expect(first('hang')).toBe(
      `Readiness probe failed: Get "http://127.0.0.1:${p}/hang": context deadline exceeded (Client.Timeout exceeded while awaiting headers)`,
    );
    expect(first('loop')).toBe('Readiness probe failed: Get "/loop": stopped after 10 redirects');
    expect(first('fivehundred')).toBe('Readiness probe failed: HTTP probe failed with statuscode: 503');
    expect(first('exec')).toBe('Readiness probe failed: command "sleep 100" timed out');
    expect(h.manager.resultOf('readiness', 'containerd://ok')).toBe('success');
    await h.manager.stop();
  });
});
