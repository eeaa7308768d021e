// `kubectl exec` output through the mini-apiserver: 32 MiB of stdout from a SPDY-only kubelet
// (test/fake-spdy-kubelet.ts, bytes from memory) read by a client, either over WebSocket v5
// (translated: the server unframes SPDY and frames WebSocket) or over SPDY (the reference: the
// server splices bytes, what kubectl's SPDY fallback used before). Everything runs in this
// process, so CPU includes the fake kubelet and the client on both sides. Prints the median CPU
// ms and wall ms of STREAM_BENCH_ROUNDS alternating rounds. Asserts nothing about speed.
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SpdyConnection } from '@nodeagent/core';
import { afterAll, beforeAll, it } from 'vitest';
import { createSelfSignedTls, type MiniApiServer, startMiniApiServer } from '../src/index.js';
import { type FakeSpdyKubelet, startFakeSpdyKubelet } from '../test/fake-spdy-kubelet.js';

const ROUNDS = Number(process.env.STREAM_BENCH_ROUNDS ?? 5);
const BYTES = Number(process.env.STREAM_BENCH_BYTES ?? 32 * 1024 * 1024);
let server: MiniApiServer;
let kubelet: FakeSpdyKubelet;
let dir: string;

beforeAll(async () => {
  const tls = await createSelfSignedTls({ hosts: ['127.0.0.1'] });
  kubelet = await startFakeSpdyKubelet(tls);
  dir = await mkdtemp(join(tmpdir(), 'stream-bench-'));
  server = await startMiniApiServer({ kubeletClient: {}, kubeconfigPath: join(dir, 'kubeconfig') });
  server.store.create('pods', {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: 'web', namespace: 'default' },
    spec: { nodeName: 'n1', containers: [{ name: 'app', image: 'busybox' }] },
  });
  server.store.create('nodes', {
    metadata: { name: 'n1' },
    status: {
      addresses: [{ type: 'InternalIP', address: '127.0.0.1' }],
      daemonEndpoints: { kubeletEndpoint: { Port: kubelet.port } },
    },
  });
});
afterAll(async () => {
  await server?.stop();
  await kubelet?.stop();
  if (dir) await rm(dir, { recursive: true, force: true });
});

const PATH = `/api/v1/namespaces/default/pods/web/exec?command=blob&command=${BYTES}&stdout=true`;

function overWebSocket(): Promise<number> {
  const u = new URL(server.url);
  return new Promise((resolve, reject) => {
    const s = connect(Number(u.port), u.hostname, () =>
      s.write(
        `GET ${PATH} HTTP/1.1\r\nHost: x\r\nConnection: Upgrade\r\nUpgrade: websocket\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Key: ${randomBytes(16).toString('base64')}\r\nSec-WebSocket-Protocol: v5.channel.k8s.io\r\n\r\n`,
      ),
    );
    let buf: Buffer = Buffer.alloc(0);
    let headDone = false;
    let stdout = 0;
    s.on('error', reject);
    s.on('data', (c: Buffer) => {
      buf = buf.length === 0 ? c : Buffer.concat([buf, c]);
      if (!headDone) {
        const end = buf.indexOf('\r\n\r\n');
        if (end < 0) return;
        headDone = true;
        buf = buf.subarray(end + 4);
      }
      for (;;) {
        if (buf.length < 2) return;
        let len = (buf[1] as number) & 0x7f;
        let p = 2;
        if (len === 126) {
          if (buf.length < 4) return;
          len = buf.readUInt16BE(2);
          p = 4;
        } else if (len === 127) {
          if (buf.length < 10) return;
          len = Number(buf.readBigUInt64BE(2));
          p = 10;
        }
        if (buf.length < p + len) return;
        const opcode = (buf[0] as number) & 0x0f;
        if (opcode === 2 && buf[p] === 1) stdout += len - 1;
        buf = buf.subarray(p + len);
        if (opcode === 8) {
          s.destroy();
          resolve(stdout);
          return;
        }
      }
    });
  });
}

function overSpdy(): Promise<number> {
  const u = new URL(server.url);
  return new Promise((resolve, reject) => {
    const s = connect(Number(u.port), u.hostname, () =>
      s.write(
        `POST ${PATH} HTTP/1.1\r\nHost: x\r\nConnection: Upgrade\r\nUpgrade: SPDY/3.1\r\nX-Stream-Protocol-Version: v4.channel.k8s.io\r\nContent-Length: 0\r\n\r\n`,
      ),
    );
    s.on('error', reject);
    let buf: Buffer = Buffer.alloc(0);
    const onData = (c: Buffer): void => {
      buf = Buffer.concat([buf, c]);
      const end = buf.indexOf('\r\n\r\n');
      if (end < 0) return;
      s.off('data', onData);
      const conn = new SpdyConnection(s, { server: false, head: buf.subarray(end + 4) });
      void (async () => {
        const error = await conn.createStream({ streamtype: ['error'] });
        const out = await conn.createStream({ streamtype: ['stdout'] });
        let stdout = 0;
        const done = Promise.all([
          new Promise<void>((r) =>
            error.read(
              () => {},
              () => r(),
            ),
          ),
          new Promise<void>((r) =>
            out.read(
              (d) => {
                stdout += d.length;
              },
              () => r(),
            ),
          ),
        ]);
        await done;
        s.destroy();
        resolve(stdout);
      })().catch(reject);
    };
    s.on('data', onData);
  });
}

async function measure(fn: () => Promise<number>): Promise<{ cpuMs: number; wallMs: number }> {
  const cpu = process.cpuUsage();
  const t0 = performance.now();
  const got = await fn();
  if (got !== BYTES) throw new Error(`read ${got} bytes of ${BYTES}`);
  const used = process.cpuUsage(cpu);
  return { cpuMs: (used.user + used.system) / 1000, wallMs: performance.now() - t0 };
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? 0;

it('prints WebSocket→SPDY translated exec output next to the SPDY splice of the same output', async () => {
  const cases: Record<string, () => Promise<number>> = {
    'SPDY client, spliced (reference)': overSpdy,
    'WebSocket v5 client, translated': overWebSocket,
  };
  const results: Record<string, { cpu: number[]; wall: number[] }> = {};
  for (let round = 0; round < ROUNDS; round++) {
    for (const [name, fn] of Object.entries(cases)) {
      const r = await measure(fn);
      results[name] ??= { cpu: [], wall: [] };
      results[name].cpu.push(r.cpuMs);
      results[name].wall.push(r.wallMs);
    }
  }
  console.log(`\nexec stdout of ${BYTES} bytes through the mini-apiserver, median of ${ROUNDS} rounds`);
  for (const [name, r] of Object.entries(results)) {
    console.log(
      `  ${name.padEnd(36)} CPU ${median(r.cpu).toFixed(0).padStart(6)} ms   wall ${median(r.wall).toFixed(0).padStart(6)} ms`,
    );
  }
});
