// The server side of RFC 6455 (websocket.ts) on a plain socket pair: message limits (1009),
// protocol errors (1002: unexpected continuation, reserved bits, fragmented control frame),
// the closing handshake echoing the client's code, and frame encoding lengths.
import { randomBytes } from 'node:crypto';
import { connect, createServer, type Server, type Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { encodeWsFrame, WebSocketConnection, type WebSocketConnectionOptions } from '../src/websocket.js';

function masked(first: number, payload: Buffer): Buffer {
  const mask = randomBytes(4);
  const body = Buffer.from(payload);
  for (let i = 0; i < body.length; i++) body[i] = (body[i] as number) ^ (mask[i & 3] as number);
  return Buffer.concat([Buffer.from([first, 0x80 | payload.length]), mask, body]);
}

describe('WebSocketConnection', () => {
  let server: Server | undefined;
  afterEach(() => server?.close());

  async function pair(opts: WebSocketConnectionOptions): Promise<{ client: Socket; received: () => Buffer }> {
    server = createServer((s) => {
      new WebSocketConnection(s, Buffer.alloc(0), opts);
    });
    await new Promise<void>((r) => server?.listen(0, '127.0.0.1', r));
    const port = (server.address() as { port: number }).port;
    const client = await new Promise<Socket>((r) => {
      const c = connect(port, '127.0.0.1', () => r(c));
    });
    let got = Buffer.alloc(0);
    client.on('data', (c: Buffer) => {
      got = Buffer.concat([got, c]);
    });
    return { client, received: () => got };
  }
  const closed = (s: Socket) => new Promise<void>((r) => (s.destroyed ? r() : s.on('close', () => r())));

  it('closes with 1009 past maxMessageBytes, also across fragments', async () => {
    const messages: string[] = [];
    const { client, received } = await pair({
      maxMessageBytes: 8,
      onMessage: (d) => messages.push(d.toString()),
    });
    client.write(masked(0x82, Buffer.from('12345678')));
    client.write(masked(0x02, Buffer.from('12345')));
    client.write(masked(0x80, Buffer.from('6789')));
    await closed(client);
    expect(messages).toEqual(['12345678']);
    expect(received().subarray(0, 2)).toEqual(Buffer.from([0x88, 2 + 'message too big'.length]));
    expect(received().readUInt16BE(2)).toBe(1009);
  });

  it('closes with 1002 on an unexpected continuation, reserved bits or a fragmented ping', async () => {
    for (const bad of [
      masked(0x80, Buffer.from('x')),
      masked(0xc2, Buffer.from('x')),
      masked(0x09, Buffer.from('x')),
    ]) {
      const { client, received } = await pair({});
      client.write(bad);
      await closed(client);
      expect(received().readUInt16BE(2)).toBe(1002);
      server?.close();
    }
  });

  it('answers a close frame with the same code and reports it', async () => {
    let seen: [number, string] | undefined;
    const { client, received } = await pair({
      onClose: (code, reason) => {
        seen = [code, reason];
      },
    });
    const payload = Buffer.concat([Buffer.from([0x0f, 0xa0]), Buffer.from('bye')]);
    client.write(masked(0x88, payload));
    await closed(client);
    expect(received()).toEqual(Buffer.from([0x88, 2, 0x0f, 0xa0]));
    expect(seen).toEqual([4000, 'bye']);
  });

  it('encodes 7-bit, 16-bit and 64-bit payload lengths', () => {
    expect(encodeWsFrame(2, Buffer.alloc(125)).subarray(0, 2)).toEqual(Buffer.from([0x82, 125]));
    expect(encodeWsFrame(2, Buffer.alloc(126)).subarray(0, 4)).toEqual(Buffer.from([0x82, 126, 0, 126]));
    const big = encodeWsFrame(1, Buffer.alloc(70_000), false);
    expect(big[0]).toBe(0x01);
    expect(big[1]).toBe(127);
    expect(big.readBigUInt64BE(2)).toBe(70_000n);
  });
});
