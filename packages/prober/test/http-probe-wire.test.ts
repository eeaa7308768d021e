// The httpGet probe on the wire, against scripted raw TCP servers: the bytes it sends, and how it
// reads what comes back as Go's net/http client does (net/http response.go, transfer.go,
// internal/chunked.go, transport.go), with the texts the kubelet's probe messages carry.
import { createServer, type Server, type Socket } from 'node:net';
import type { V1Container } from '@kubernetes/client-node';
import { afterEach, describe, expect, it } from 'vitest';
import { DEFAULT_USER_AGENT, httpProbe, newHTTPProbeRequest } from '../src/index.js';

const container: V1Container = { name: 'c' };
const servers: Server[] = [];
afterEach(async () => {
  for (const s of servers.splice(0)) await new Promise((r) => s.close(r));
});

/**
 * A server that reads one request head, hands it to `script` and lets the script write the raw
 * response in pieces (each write a separate TCP segment is not guaranteed, but the reader must
 * not care).
 */
async function scripted(
  script: (socket: Socket, head: string) => void,
): Promise<{ port: number; heads: string[] }> {
  const heads: string[] = [];
  const server = createServer((socket) => {
    let buf = '';
    socket.on('error', () => {});
    socket.on('data', (d) => {
      buf += d.toString('latin1');
      const end = buf.indexOf('\r\n\r\n');
      if (end !== -1 && heads.length < 1000) {
        const head = buf.slice(0, end + 4);
        buf = '';
        heads.push(head);
        script(socket, head);
      }
    });
  });
  servers.push(server);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { port: (server.address() as { port: number }).port, heads };
}

const probe = (port: number, extra: Record<string, unknown> = {}, timeoutMs = 1000) =>
  httpProbe(
    newHTTPProbeRequest(
      { port: port as never, path: '/hz', ...extra },
      container,
      '127.0.0.1',
      DEFAULT_USER_AGENT,
    ),
    timeoutMs,
  );

const pause = () => new Promise((r) => setTimeout(r, 20));

describe('httpGet on the wire', () => {
  it("sends Go's request: Host (port kept), User-Agent, Connection: close, then the headers sorted", async () => {
    const s = await scripted((sock) => sock.end('HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok'));
    expect(await probe(s.port, { httpHeaders: [{ name: 'x-a', value: '1' }] })).toEqual({
      outcome: 'success',
      output: 'ok',
    });
    expect(s.heads[0]).toBe(
      `GET /hz HTTP/1.1\r\nHost: 127.0.0.1:${s.port}\r\nUser-Agent: ${DEFAULT_USER_AGENT}\r\nConnection: close\r\nAccept: */*\r\nX-A: 1\r\n\r\n`,
    );
  });

  it('reads a chunked body split across writes, chunk extensions and trailers included', async () => {
    const s = await scripted(async (sock) => {
      sock.write('HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n4;ext=1\r\nhe');
      await pause();
      sock.write('ll\r\n');
      await pause();
      sock.write('1\r\no\r\n0\r\nX-Trailer: t\r\n\r\n');
      // The connection stays open: the terminal chunk ends the body, not the close.
    });
    expect(await probe(s.port)).toEqual({ outcome: 'success', output: 'hello' });
  });

  it('a Content-Length body completes without waiting for the close', async () => {
    const s = await scripted((sock) => sock.write('HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nfine!'));
    expect(await probe(s.port, {}, 5000)).toEqual({ outcome: 'success', output: 'fine!' });
  });

  it('a body without length is read until the close', async () => {
    const s = await scripted(async (sock) => {
      sock.write('HTTP/1.0 200 OK\r\n\r\npart one, ');
      await pause();
      sock.end('part two');
    });
    expect(await probe(s.port)).toEqual({ outcome: 'success', output: 'part one, part two' });
  });

  it('skips informational heads (100 Continue, 103 Early Hints)', async () => {
    const s = await scripted((sock) =>
      sock.end(
        'HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 103 Early Hints\r\nLink: </a>\r\n\r\nHTTP/1.1 204 No Content\r\n\r\n',
      ),
    );
    expect(await probe(s.port)).toEqual({ outcome: 'success', output: '' });
  });

  it('accepts bare LF line endings, as Go does', async () => {
    const s = await scripted((sock) => sock.end('HTTP/1.1 503 Busy\nContent-Length: 0\n\n'));
    expect(await probe(s.port)).toEqual({
      outcome: 'failure',
      output: 'HTTP probe failed with statuscode: 503',
    });
  });

  it('caps a chunked body at 10 KiB and closes the connection', async () => {
    let closed = false;
    const s = await scripted((sock) => {
      sock.on('close', () => {
        closed = true;
      });
      sock.write('HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n');
      const chunk = `1000\r\n${'y'.repeat(0x1000)}\r\n`;
      for (let i = 0; i < 8; i++) sock.write(chunk);
    });
    const run = await probe(s.port);
    expect(run.outcome).toBe('success');
    expect(run.output).toBe('y'.repeat(10 * 1024));
    await expect.poll(() => closed).toBe(true);
  });

  it("malformed responses fail with Go's ReadResponse texts", async () => {
    const cases: [string, string][] = [
      ['garbage\r\n\r\n', 'malformed HTTP response "garbage"'],
      ['HTTP/1.1 20 OK\r\n\r\n', 'malformed HTTP status code "20"'],
      ['HTTP/x 200 OK\r\n\r\n', 'malformed HTTP version "HTTP/x"'],
      ['HTTP/1.1 200 OK\r\nno colon here\r\n\r\n', 'malformed MIME header line: no colon here'],
      ['HTTP/1.1 200 OK\r\nContent-Length: ten\r\n\r\n', 'bad Content-Length "ten"'],
    ];
    for (const [response, text] of cases) {
      const s = await scripted((sock) => sock.end(response));
      expect(await probe(s.port)).toEqual({
        outcome: 'failure',
        output: `Get "http://127.0.0.1:${s.port}/hz": ${text}`,
      });
    }
  });

  it('a close before any response is EOF; a short body is an unexpected EOF (a probe error)', async () => {
    const none = await scripted((sock) => sock.end());
    expect(await probe(none.port)).toEqual({
      outcome: 'failure',
      output: `Get "http://127.0.0.1:${none.port}/hz": EOF`,
    });
    const short = await scripted((sock) => sock.end('HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nabc'));
    const run = await probe(short.port);
    expect(run.outcome).toBe('failure');
    expect(run.error?.message).toBe('unexpected EOF');
    const badChunk = await scripted((sock) =>
      sock.end('HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n'),
    );
    expect((await probe(badChunk.port)).error?.message).toBe('invalid byte in chunk length');
  });

  it('a body that stalls past the deadline: the reading-body timeout text', async () => {
    const s = await scripted((sock) => sock.write('HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\nabc'));
    const run = await probe(s.port, {}, 300);
    expect(run.error?.message).toBe(
      'context deadline exceeded (Client.Timeout or context cancellation while reading body)',
    );
  });

  it('a header value with a control character is not sent (Go leaves the value out of the error)', async () => {
    const s = await scripted((sock) => sock.end('HTTP/1.1 200 OK\r\n\r\n'));
    expect(
      await probe(s.port, { httpHeaders: [{ name: 'X-Token', value: 'secret\r\nInjected: 1' }] }),
    ).toEqual({
      outcome: 'failure',
      output: `Get "http://127.0.0.1:${s.port}/hz": net/http: invalid header field value for "X-Token"`,
    });
    expect(s.heads).toHaveLength(0);
  });
});
