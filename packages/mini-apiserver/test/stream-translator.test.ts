// kube-apiserver's WebSocket handling of pods/exec, pods/attach and pods/portforward, against a
// kubelet that speaks only SPDY (fake-spdy-kubelet.ts):
// - the WebSocket framing of the server side (handshake, masking, fragmentation, ping, close);
// - v5.channel.k8s.io exec translated to SPDY v4 (upstream StreamTranslatorHandler): output
//   channels, stdin and its v5 close signal, the exit code / internal error on channel 3,
//   resize, a kubelet refusal as Status, the SPDY request the kubelet gets;
// - SPDY/3.1+portforward.k8s.io tunnelled (upstream TunnelingHandler);
// - the real kubectl (1.32: WebSocket first) for exec, exec -i and port-forward, with the
//   server's request log showing one WebSocket GET per command and no SPDY fallback.
import { spawn, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { connect, createServer, type Server, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSelfSignedTls, type MiniApiServer } from '../src/index.js';
import { decodeErrorStream, exitCodeStatus } from '../src/stream-translator.js';
import { encodeWsFrame, webSocketAccept } from '../src/websocket.js';
import { type FakeSpdyKubelet, startFakeSpdyKubelet } from './fake-spdy-kubelet.js';
import { pod, start } from './helpers.js';

const kubectlMissing = spawnSync('kubectl', ['version', '--client'], { encoding: 'utf8' }).status !== 0;
if (kubectlMissing && process.env.CI !== 'true')
  console.warn('\n*** kubectl not found: skipping the kubectl stream tests ***\n');

/** A masked client frame. */
function clientFrame(opcode: number, payload: Buffer, fin = true): Buffer {
  const mask = randomBytes(4);
  const masked = Buffer.from(payload);
  for (let i = 0; i < masked.length; i++) masked[i] = (masked[i] as number) ^ (mask[i & 3] as number);
  const len = payload.length;
  const head =
    len < 126
      ? Buffer.from([(fin ? 0x80 : 0) | opcode, 0x80 | len])
      : Buffer.from([(fin ? 0x80 : 0) | opcode, 0x80 | 126, len >> 8, len & 0xff]);
  return Buffer.concat([head, mask, masked]);
}

interface WsClient {
  readonly status: number;
  readonly headers: Record<string, string>;
  readonly body: string;
  readonly socket: Socket;
  /** Messages received (opcode, payload). */
  readonly messages: { opcode: number; data: Buffer }[];
  send(channel: number, data: string | Buffer): void;
  sendRaw(frame: Buffer): void;
  closed: Promise<void>;
  waitFor(pred: () => boolean): Promise<void>;
}

function wsConnect(server: MiniApiServer, path: string, protocols: string): Promise<WsClient> {
  const u = new URL(server.url);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(u.port), u.hostname);
    const key = randomBytes(16).toString('base64');
    socket.on('connect', () =>
      socket.write(
        `GET ${path} HTTP/1.1\r\nHost: x\r\nConnection: Upgrade\r\nUpgrade: websocket\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Key: ${key}\r\nSec-WebSocket-Protocol: ${protocols}\r\n\r\n`,
      ),
    );
    socket.on('error', reject);
    let buf = Buffer.alloc(0);
    let client: (WsClient & { headers: Record<string, string> }) | undefined;
    const messages: { opcode: number; data: Buffer }[] = [];
    let resolveClosed: () => void = () => {};
    const closed = new Promise<void>((r) => {
      resolveClosed = r;
    });
    const waiters: (() => void)[] = [];
    socket.on('close', () => {
      resolveClosed();
      for (const w of waiters) w();
    });
    socket.on('data', (c: Buffer) => {
      buf = Buffer.concat([buf, c]);
      if (client === undefined) {
        const end = buf.indexOf('\r\n\r\n');
        if (end < 0) return;
        const [statusLine = '', ...lines] = buf.toString('latin1', 0, end).split('\r\n');
        const headers: Record<string, string> = {};
        for (const l of lines)
          headers[l.slice(0, l.indexOf(':')).toLowerCase()] = l.slice(l.indexOf(':') + 1).trim();
        const status = Number(statusLine.split(' ')[1]);
        buf = buf.subarray(end + 4);
        client = {
          status,
          headers,
          body: status === 101 ? '' : buf.toString(),
          socket,
          messages,
          closed,
          send: (channel, data) =>
            socket.write(clientFrame(2, Buffer.concat([Buffer.from([channel]), Buffer.from(data)]))),
          sendRaw: (frame) => socket.write(frame),
          waitFor: (pred) =>
            new Promise<void>((res, rej) => {
              const check = (): void => {
                if (pred()) res();
                else if (socket.destroyed) rej(new Error('socket closed'));
                else waiters.push(check);
              };
              check();
            }),
        };
        resolve(client);
        if (status !== 101) return;
      }
      for (;;) {
        if (buf.length < 2) break;
        let len = (buf[1] as number) & 0x7f;
        let p = 2;
        if (len === 126) {
          len = buf.readUInt16BE(2);
          p = 4;
        } else if (len === 127) {
          len = Number(buf.readBigUInt64BE(2));
          p = 10;
        }
        if (buf.length < p + len) break;
        messages.push({ opcode: (buf[0] as number) & 0x0f, data: Buffer.from(buf.subarray(p, p + len)) });
        buf = buf.subarray(p + len);
      }
      for (const w of waiters.splice(0)) w();
    });
  });
}

const channelText = (c: WsClient, ch: number): string =>
  Buffer.concat(
    c.messages.filter((m) => m.opcode === 2 && m.data[0] === ch).map((m) => m.data.subarray(1)),
  ).toString();
const closeFrame = (c: WsClient) => c.messages.find((m) => m.opcode === 8);

describe('WebSocket → SPDY stream translation', () => {
  let server: MiniApiServer;
  let kubelet: FakeSpdyKubelet;
  let podListener: Server;
  let podPort = 0;
  let dir = '';
  let env: NodeJS.ProcessEnv = {};

  beforeAll(async () => {
    const tls = await createSelfSignedTls({ hosts: ['127.0.0.1'] });
    kubelet = await startFakeSpdyKubelet(tls);
    dir = await mkdtemp(join(tmpdir(), 'stream-translator-'));
    server = await start({ kubeletClient: {}, kubeconfigPath: join(dir, 'kubeconfig') });
    env = { ...process.env, KUBECONFIG: join(dir, 'kubeconfig'), HOME: dir };
    server.store.create('pods', pod('web', { nodeName: 'n1', status: { phase: 'Running' } }));
    server.store.create('pods', {
      ...pod('multi', { nodeName: 'n1', status: { phase: 'Running' } }),
      spec: {
        nodeName: 'n1',
        containers: ['app', 'refused', 'broken'].map((name) => ({ name, image: 'busybox' })),
      },
    });
    server.store.create('pods', pod('lost', { nodeName: 'n2', status: { phase: 'Running' } }));
    server.store.create('nodes', {
      metadata: { name: 'n2' },
      status: {
        addresses: [{ type: 'InternalIP', address: '127.0.0.1' }],
        daemonEndpoints: { kubeletEndpoint: { Port: 1 } },
      },
    });
    server.store.create('nodes', {
      metadata: { name: 'n1' },
      status: {
        addresses: [{ type: 'InternalIP', address: '127.0.0.1' }],
        daemonEndpoints: { kubeletEndpoint: { Port: kubelet.port } },
      },
    });
    podListener = createServer((s) => {
      s.on('data', (c: Buffer) => s.write(`pod got: ${c.toString()}`));
      s.on('error', () => {});
    });
    await new Promise<void>((r) => podListener.listen(0, '127.0.0.1', r));
    podPort = (podListener.address() as { port: number }).port;
  });
  afterAll(async () => {
    await server?.stop();
    await kubelet?.stop();
    podListener?.close();
    if (dir !== '') await rm(dir, { recursive: true, force: true });
  });

  const exec = (query: string) => `/api/v1/namespaces/default/pods/web/exec?${query}`;

  it('runs exec over SPDY v4 and reports output and the exit code on the v5 channels', async () => {
    const c = await wsConnect(
      server,
      exec(
        'command=sh&command=-c&command=echo%20hi%3B%20echo%20oops%20%3E%262%3B%20exit%203&stdout=true&stderr=true',
      ),
      'v5.channel.k8s.io, v4.channel.k8s.io',
    );
    expect(c.status).toBe(101);
    expect(c.headers['sec-websocket-protocol']).toBe('v5.channel.k8s.io');
    expect(c.headers['sec-websocket-accept']).toBeTruthy();
    await c.waitFor(() => closeFrame(c) !== undefined);
    // The first message is the empty "connected" message on the lowest writable channel.
    expect(c.messages[0]?.data).toEqual(Buffer.from([1]));
    expect(channelText(c, 1)).toBe('hi\n');
    expect(channelText(c, 2)).toBe('oops\n');
    expect(JSON.parse(channelText(c, 3))).toEqual({
      metadata: {},
      status: 'Failure',
      message: 'command terminated with non-zero exit code: command terminated with exit code 3',
      reason: 'NonZeroExitCode',
      details: { causes: [{ reason: 'ExitCode', message: '3' }] },
    });
    expect(closeFrame(c)?.data.readUInt16BE(0)).toBe(1000);
    c.sendRaw(clientFrame(8, Buffer.from([0x03, 0xe8])));
    await c.closed;
    // The kubelet got a SPDY POST with the SPDY protocols, not the WebSocket request.
    const k = kubelet.requests.at(-1);
    expect(k).toMatchObject({
      method: 'POST',
      path: '/exec/default/web/app?output=1&error=1&command=sh&command=-c&command=echo+hi%3B+echo+oops+%3E%262%3B+exit+3',
      upgrade: 'SPDY/3.1',
      protocols: 'v4.channel.k8s.io, v3.channel.k8s.io, v2.channel.k8s.io',
    });
    expect(server.podStreamCounts.get('translated 200')).toBeGreaterThanOrEqual(1);
  });

  it('feeds stdin (fragmented messages too) and closes it on the v5 close signal', async () => {
    const c = await wsConnect(
      server,
      exec('command=cat&stdin=true&stdout=true&stderr=true'),
      'v5.channel.k8s.io',
    );
    expect(c.status).toBe(101);
    c.send(0, 'line one\n');
    // One message in two fragments: [0, "frag"] + "mented\n".
    c.sendRaw(clientFrame(2, Buffer.concat([Buffer.from([0]), Buffer.from('frag')]), false));
    c.sendRaw(clientFrame(9, Buffer.from('ping!'))); // a ping between fragments
    c.sendRaw(clientFrame(0, Buffer.from('mented\n')));
    await c.waitFor(() => channelText(c, 1).includes('fragmented'));
    expect(c.messages.find((m) => m.opcode === 0xa)?.data.toString()).toBe('ping!');
    c.send(255, Buffer.from([0])); // close stdin
    await c.waitFor(() => closeFrame(c) !== undefined);
    expect(channelText(c, 1)).toBe('line one\nfragmented\n');
    expect(JSON.parse(channelText(c, 3))).toEqual({ metadata: {}, status: 'Success' });
    c.socket.destroy();
  });

  it('forwards tty resize events to the SPDY resize stream', async () => {
    const c = await wsConnect(
      server,
      exec('command=cat&stdin=true&stdout=true&tty=true'),
      'v5.channel.k8s.io',
    );
    c.send(4, '{"Width":80,"Height":24}');
    c.send(4, '{"Width":120,');
    c.send(4, '"Height":40}');
    c.send(0, 'x\n');
    await c.waitFor(() => channelText(c, 1).includes('x'));
    await new Promise((r) => setTimeout(r, 100));
    c.send(255, Buffer.from([0]));
    await c.waitFor(() => closeFrame(c) !== undefined);
    expect(kubelet.resizes.join('')).toBe('{"Width":80,"Height":24}\n{"Width":120,"Height":40}\n');
    c.socket.destroy();
  });

  it('answers a non-exit failure as an InternalError status', async () => {
    const c = await wsConnect(server, exec('command=fail-internal&stdout=true'), 'v5.channel.k8s.io');
    await c.waitFor(() => closeFrame(c) !== undefined);
    expect(JSON.parse(channelText(c, 3))).toEqual({
      metadata: {},
      status: 'Failure',
      message: 'Internal error occurred: runtime broke',
      reason: 'InternalError',
      details: { causes: [{ message: 'runtime broke' }] },
      code: 500,
    });
    c.socket.destroy();
  });

  it('reports a kubelet refusal (its Status, or its text) and an unreachable kubelet on channel 3', async () => {
    const status = async (podName: string, container: string): Promise<unknown> => {
      const c = await wsConnect(
        server,
        `/api/v1/namespaces/default/pods/${podName}/exec?command=true&stdout=true&container=${container}`,
        'v5.channel.k8s.io',
      );
      expect(c.status).toBe(101);
      await c.waitFor(() => closeFrame(c) !== undefined);
      c.socket.destroy();
      return JSON.parse(channelText(c, 3));
    };
    expect(await status('multi', 'refused')).toMatchObject({
      status: 'Failure',
      message: 'pod does not exist',
      reason: 'NotFound',
      code: 404,
    });
    expect(await status('multi', 'broken')).toEqual({
      metadata: {},
      status: 'Failure',
      message: 'Internal error occurred: unable to upgrade connection: no luck',
      reason: 'InternalError',
      details: { causes: [{ message: 'unable to upgrade connection: no luck' }] },
      code: 500,
    });
    expect(await status('lost', 'app')).toMatchObject({
      reason: 'InternalError',
      message: expect.stringMatching(/^Internal error occurred: error dialing backend: connect ECONNREFUSED/),
    });
    expect(server.podStreamCounts.get('translated 404')).toBe(1);
  });

  it('passes v4-only WebSocket and SPDY requests through unchanged', async () => {
    const before = kubelet.requests.length;
    const c = await wsConnect(server, exec('command=true&stdout=true'), 'v4.channel.k8s.io');
    // The fake kubelet refuses WebSocket: its answer reaches the client as is.
    expect(c.status).toBe(400);
    expect(kubelet.requests.slice(before)).toMatchObject([{ method: 'GET', upgrade: 'websocket' }]);
    c.socket.destroy();
  });

  it('rejects unmasked client frames with 1002', async () => {
    const c = await wsConnect(server, exec('command=cat&stdin=true&stdout=true'), 'v5.channel.k8s.io');
    c.sendRaw(encodeWsFrame(2, Buffer.from([0, 65])));
    await c.closed;
    const close = closeFrame(c);
    expect(close?.data.readUInt16BE(0)).toBe(1002);
    expect(close?.data.toString('utf8', 2)).toBe('client frames must be masked');
  });

  it('tunnels SPDY/3.1+portforward.k8s.io byte for byte and names the kubelet protocol', async () => {
    const c = await wsConnect(
      server,
      `/api/v1/namespaces/default/pods/web/portforward?ports=${podPort}`,
      'SPDY/3.1+portforward.k8s.io, portforward.k8s.io',
    );
    expect(c.status).toBe(101);
    expect(c.headers['sec-websocket-protocol']).toBe('SPDY/3.1+portforward.k8s.io');
    expect(kubelet.requests.at(-1)).toMatchObject({
      method: 'POST',
      path: `/portForward/default/web?port=${podPort}`,
      upgrade: 'SPDY/3.1',
      protocols: 'portforward.k8s.io',
    });
    c.socket.destroy();
    expect(server.podStreamCounts.get('tunneled 101')).toBeGreaterThanOrEqual(1);
  });

  it('returns the handshake accept value of RFC 6455 and refuses a bad handshake with 400', async () => {
    expect(webSocketAccept('dGhlIHNhbXBsZSBub25jZQ==')).toBe('s3pPLMBiTxaQ9kYGzzhZRbK+xOo=');
    const u = new URL(server.url);
    const answer = (headers: string) =>
      new Promise<string>((resolve) => {
        const s = connect(Number(u.port), u.hostname, () =>
          s.write(
            `GET ${exec('command=true&stdout=true')} HTTP/1.1\r\nHost: x\r\nConnection: Upgrade\r\nUpgrade: websocket\r\nSec-WebSocket-Protocol: v5.channel.k8s.io\r\n${headers}\r\n`,
          ),
        );
        let text = '';
        s.on('data', (c: Buffer) => {
          text += c.toString();
        });
        s.on('close', () => resolve(text));
      });
    const noVersion = await answer('Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n');
    expect(noVersion).toMatch(/^HTTP\/1\.1 400/);
    expect(noVersion).toContain("13 not found in 'Sec-Websocket-Version' header");
    const badKey = await answer('Sec-WebSocket-Version: 13\r\nSec-WebSocket-Key: short\r\n');
    expect(badKey).toContain('Base64 encoded value of 16-byte in length');
  });

  it('decodes the kubelet error stream as client-go does', () => {
    const v4 = 'v4.channel.k8s.io';
    expect(decodeErrorStream(v4, '')).toEqual({ ok: true });
    expect(decodeErrorStream(v4, JSON.stringify(exitCodeStatus(7)))).toEqual({ exitCode: 7 });
    expect(decodeErrorStream(v4, '{"status":"Failure","reason":"NonZeroExitCode"}')).toEqual({
      error: 'error stream protocol error: details must be set',
    });
    expect(
      decodeErrorStream(
        v4,
        '{"status":"Failure","reason":"NonZeroExitCode","details":{"causes":[{"reason":"ExitCode","message":"x"}]}}',
      ),
    ).toEqual({ error: 'error stream protocol error: invalid exit code value "x"' });
    expect(decodeErrorStream('v3.channel.k8s.io', 'some text')).toEqual({ error: 'some text' });
  });

  describe.skipIf(kubectlMissing && process.env.CI !== 'true')('with the real kubectl', () => {
    function kubectl(
      args: string[],
      input?: string,
    ): Promise<{ code: number; stdout: string; stderr: string }> {
      return new Promise((resolve) => {
        const child = spawn('kubectl', args, { env });
        let stdout = '';
        let stderr = '';
        child.stdout.on('data', (c: Buffer) => {
          stdout += c.toString();
        });
        child.stderr.on('data', (c: Buffer) => {
          stderr += c.toString();
        });
        const timer = setTimeout(() => child.kill(), 20_000);
        child.on('close', (code) => {
          clearTimeout(timer);
          resolve({ code: code ?? -1, stdout, stderr });
        });
        child.stdin.end(input);
      });
    }
    const execRequests = () =>
      server.requests
        .filter((r) => r.path === '/api/v1/namespaces/default/pods/web/exec')
        .map((r) => `${r.method} ${r.upgrade}`);

    it('kubectl exec gets the output and exit code 3 over WebSocket, no SPDY fallback', async () => {
      if (kubectlMissing) throw new Error('kubectl is required under CI=true');
      const before = execRequests().length;
      const r = await kubectl(['exec', 'web', '--', 'sh', '-c', 'echo hi; exit 3']);
      expect(r).toMatchObject({ code: 3, stdout: 'hi\n' });
      expect(r.stderr).toContain('command terminated with exit code 3');
      expect(execRequests().slice(before)).toEqual(['GET websocket']);
    });

    it('kubectl exec -i sends stdin and ends it', async () => {
      const before = execRequests().length;
      const r = await kubectl(
        ['exec', '-i', 'web', '--', 'sh', '-c', 'tr a-z A-Z; echo done'],
        'hello stdin\n',
      );
      expect(r).toMatchObject({ code: 0, stdout: 'HELLO STDIN\ndone\n' });
      expect(execRequests().slice(before)).toEqual(['GET websocket']);
    });

    it('kubectl port-forward moves bytes through the WebSocket tunnel', { timeout: 30_000 }, async () => {
      const pfPath = '/api/v1/namespaces/default/pods/web/portforward';
      const before = server.requests.filter((r) => r.path === pfPath).length;
      const child = spawn(
        'kubectl',
        ['port-forward', 'pod/web', `:${podPort}`, ...(process.env.PF_DEBUG ? ['-v=8'] : [])],
        { env },
      );
      let pfErr = '';
      child.stderr.on('data', (c: Buffer) => {
        pfErr += c.toString();
      });
      try {
        const local = await new Promise<number>((resolve, reject) => {
          let out = '';
          child.stdout.on('data', (c: Buffer) => {
            out += c.toString();
            const m = /Forwarding from 127\.0\.0\.1:(\d+)/.exec(out);
            if (m) resolve(Number(m[1]));
          });
          let err = '';
          child.stderr.on('data', (c: Buffer) => {
            err += c.toString();
          });
          child.on('close', () => reject(new Error(`kubectl port-forward exited: ${out} ${err}`)));
        });
        const reply = await new Promise<string>((resolve, reject) => {
          const s = connect(local, '127.0.0.1', () => s.write('hello pod'));
          s.on('data', (c: Buffer) => {
            resolve(c.toString());
            s.destroy();
          });
          s.on('error', reject);
        });
        expect(reply).toBe('pod got: hello pod');
        const pf = server.requests.filter((r) => r.path === pfPath).slice(before);
        expect(pf.map((r) => `${r.method} ${r.upgrade}`)).toEqual(['GET websocket']);
      } catch (err) {
        throw new Error(`${(err as Error).message}; kubectl: ${pfErr}`);
      } finally {
        child.kill();
      }
    });
  });
});
