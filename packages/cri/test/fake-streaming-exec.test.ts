// The fake's Exec: a URL on its streaming server; a WebSocket upgrade with
// v5.channel.k8s.io (or v4) gets the command's stdout (channel 1), stderr (2) and the v4
// status (3: Success, or NonZeroExitCode with the exit code), as the kubelet's remotecommand
// server frames them; other protocols are refused with 403. SPDY/3.1 with v4.channel.k8s.io
// (what kube-apiserver's translator and client-go's SPDY executor send) runs the same over the
// streams the client opens.
import { connect } from 'node:net';
import { SpdyConnection, type SpdyStream } from '@nodeagent/core';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { parseClientFrames } from '../src/fake/streaming-server.js';
import { hasCriCode } from '../src/index.js';
import { createContainer, type FakeHarness, runPod, startFake } from './fake-fixtures.js';

/** Opens `url` as a WebSocket asking for `protocol`; the status line and the binary messages until close. */
function wsExchange(
  url: string,
  protocol: string,
  upgrade = 'websocket',
): Promise<{ head: string; messages: Buffer[] }> {
  const u = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(u.port), u.hostname, () => {
      socket.write(
        `GET ${u.pathname} HTTP/1.1\r\nHost: ${u.host}\r\nConnection: Upgrade\r\nUpgrade: ${upgrade}\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Protocol: ${protocol}\r\n\r\n`,
      );
    });
    let buf = Buffer.alloc(0);
    socket.on('data', (c: Buffer) => {
      buf = Buffer.concat([buf, c]);
    });
    socket.on('error', reject);
    socket.on('close', () => {
      const end = buf.indexOf('\r\n\r\n');
      const head = buf.subarray(0, end).toString();
      const { frames } = parseClientFrames(buf.subarray(end + 4));
      resolve({ head, messages: frames.filter((f) => f.opcode === 2).map((f) => f.payload) });
    });
  });
}

describe('FakeRuntime Exec over its streaming server', () => {
  let h: FakeHarness;
  let id: string;
  beforeEach(async () => {
    h = await startFake({
      defaultExec: (argv) =>
        argv[0] === 'echo'
          ? { stdout: `${argv.slice(1).join(' ')}\n`, stderr: '', exitCode: 0, durationMs: 0 }
          : { stdout: '', stderr: 'nope\n', exitCode: 7, durationMs: 0 },
    });
    id = await createContainer(h, await runPod(h), 'app');
  });
  afterEach(async () => {
    await h.close();
  });

  it('streams stdout and a Success status with v5.channel.k8s.io', async () => {
    const { url } = await h.cri.runtime.exec({
      containerId: id,
      cmd: ['echo', 'hi'],
      stdout: true,
      stderr: true,
    });
    const { head, messages } = await wsExchange(url, 'v5.channel.k8s.io');
    expect(head).toContain('101 Switching Protocols');
    expect(head).toContain('Sec-WebSocket-Protocol: v5.channel.k8s.io');
    const byChannel = (ch: number) =>
      messages
        .filter((m) => m[0] === ch)
        .map((m) => m.subarray(1).toString())
        .join('');
    expect(byChannel(1)).toBe('hi\n');
    expect(JSON.parse(byChannel(3))).toEqual({ metadata: {}, status: 'Success' });
  });

  it('reports a non-zero exit as NonZeroExitCode with the code (v4)', async () => {
    const { url } = await h.cri.runtime.exec({ containerId: id, cmd: ['bad'], stdout: true, stderr: true });
    const { messages } = await wsExchange(url, 'v4.channel.k8s.io');
    const err = messages
      .find((m) => m[0] === 2)
      ?.subarray(1)
      .toString();
    expect(err).toBe('nope\n');
    const status = JSON.parse(
      messages
        .find((m) => m[0] === 3)
        ?.subarray(1)
        .toString() ?? '{}',
    );
    expect(status).toMatchObject({
      status: 'Failure',
      reason: 'NonZeroExitCode',
      details: { causes: [{ reason: 'ExitCode', message: '7' }] },
    });
  });

  it('refuses unknown protocols (403), SPDY without v4 (403), other upgrades (400) and a used token (404)', async () => {
    const a = await h.cri.runtime.exec({ containerId: id, cmd: ['echo'], stdout: true });
    expect((await wsExchange(a.url, 'channel.k8s.io')).head).toContain('403');
    expect((await wsExchange(a.url, 'v4.channel.k8s.io', 'SPDY/3.1')).head).toContain('403');
    expect((await wsExchange(a.url, 'v4.channel.k8s.io', 'h2c')).head).toContain('400');
    await wsExchange(a.url, 'v5.channel.k8s.io');
    expect((await wsExchange(a.url, 'v5.channel.k8s.io')).head).toContain('404');
  });

  it('runs over SPDY/3.1 v4.channel.k8s.io with the streams the client opens', async () => {
    const { url } = await h.cri.runtime.exec({
      containerId: id,
      cmd: ['sh', '-c', 'exit 7'],
      stdout: true,
      stderr: true,
      stdin: true,
    });
    const u = new URL(url);
    const socket = connect(Number(u.port), u.hostname);
    socket.write(
      `POST ${u.pathname} HTTP/1.1\r\nHost: ${u.host}\r\nConnection: Upgrade\r\nUpgrade: SPDY/3.1\r\nX-Stream-Protocol-Version: v4.channel.k8s.io\r\nX-Stream-Protocol-Version: v3.channel.k8s.io\r\nContent-Length: 0\r\n\r\n`,
    );
    const head = await new Promise<{ text: string; rest: Buffer }>((resolve) => {
      let buf = Buffer.alloc(0);
      const onData = (c: Buffer): void => {
        buf = Buffer.concat([buf, c]);
        const end = buf.indexOf('\r\n\r\n');
        if (end < 0) return;
        socket.off('data', onData);
        resolve({ text: buf.toString('latin1', 0, end), rest: buf.subarray(end + 4) });
      };
      socket.on('data', onData);
    });
    expect(head.text).toContain('101 Switching Protocols');
    expect(head.text).toContain('X-Stream-Protocol-Version: v4.channel.k8s.io');
    const conn = new SpdyConnection(socket, { server: false, head: head.rest });
    const collect = (s: SpdyStream): Promise<string> =>
      new Promise((resolve) => {
        let out = '';
        s.read(
          (c) => {
            out += c.toString();
          },
          () => resolve(out),
        );
      });
    const error = collect(await conn.createStream({ streamtype: ['error'] }));
    (await conn.createStream({ streamtype: ['stdin'] })).end();
    const stdout = collect(await conn.createStream({ streamtype: ['stdout'] }));
    const stderr = collect(await conn.createStream({ streamtype: ['stderr'] }));
    expect(await stdout).toBe('');
    expect(await stderr).toBe('nope\n');
    expect(JSON.parse(await error)).toMatchObject({
      status: 'Failure',
      reason: 'NonZeroExitCode',
      details: { causes: [{ reason: 'ExitCode', message: '7' }] },
    });
    socket.destroy();
  });

  it('rejects an exec without streams or into an unknown container', async () => {
    await expect(h.cri.runtime.exec({ containerId: id, cmd: ['echo'] })).rejects.toSatisfy((e) =>
      hasCriCode(e, 'INVALID_ARGUMENT'),
    );
    await expect(h.cri.runtime.exec({ containerId: 'nope', cmd: ['echo'], stdout: true })).rejects.toSatisfy(
      (e) => hasCriCode(e, 'NOT_FOUND'),
    );
  });
});
