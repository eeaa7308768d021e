// SPDY/3.1 framing: the header dictionary, header blocks across a shared zlib context (as Go's
// framer compresses them, with the dictionary), and two connections talking over a socket pair.
import { connect, createServer, type Socket } from 'node:net';
import { constants, createDeflate, inflateSync } from 'node:zlib';
import { afterEach, describe, expect, it } from 'vitest';
import {
  encodeSpdyHeaderBlock,
  SPDY_HEADER_DICTIONARY,
  SpdyConnection,
  SpdyFrameReader,
  SpdyFrameType,
  SpdyHeaderCompressor,
  SpdyHeaderDecompressor,
  SpdyProtocolError,
  type SpdyStream,
  spdyControlFrame,
  spdyDataFrame,
} from '../src/spdy.js';

function deflateWithDictionary(blocks: Buffer[]): Promise<Buffer[]> {
  const d = createDeflate({ dictionary: SPDY_HEADER_DICTIONARY });
  const out: Buffer[] = [];
  let chunks: Buffer[] = [];
  d.on('data', (c: Buffer) => chunks.push(c));
  return blocks
    .reduce(
      (p, b) =>
        p.then(
          () =>
            new Promise<void>((resolve) => {
              d.write(b);
              d.flush(constants.Z_SYNC_FLUSH, () => {
                out.push(Buffer.concat(chunks));
                chunks = [];
                resolve();
              });
            }),
        ),
      Promise.resolve(),
    )
    .then(() => out);
}

describe('SPDY/3 header blocks', () => {
  it('builds the 1423-byte SPDY/3 dictionary', () => {
    expect(SPDY_HEADER_DICTIONARY.length).toBe(1423);
    expect(SPDY_HEADER_DICTIONARY.subarray(0, 11).toString('latin1')).toBe('\0\0\0\x07options');
    expect(SPDY_HEADER_DICTIONARY.subarray(-6).toString('latin1')).toBe('enq=0.');
  });

  it('inflates consecutive dictionary-compressed blocks of one zlib stream (what Go sends)', async () => {
    const a = encodeSpdyHeaderBlock({ streamtype: ['error'] });
    const b = encodeSpdyHeaderBlock({ streamtype: ['stdout'], port: ['80', '81'] });
    const [ca, cb] = await deflateWithDictionary([a, b]);
    const dec = new SpdyHeaderDecompressor();
    expect(await dec.decompress(ca as Buffer)).toEqual({ streamtype: ['error'] });
    expect(await dec.decompress(cb as Buffer)).toEqual({ streamtype: ['stdout'], port: ['80', '81'] });
    dec.close();
  });

  it('compresses as a valid zlib stream of stored blocks', () => {
    const c = new SpdyHeaderCompressor();
    const one = c.compress({ streamtype: ['stdin'] });
    const two = c.compress({ 'X-Big': ['x'.repeat(70_000)] });
    const raw = inflateSync(Buffer.concat([one, two]), { finishFlush: constants.Z_SYNC_FLUSH });
    const first = encodeSpdyHeaderBlock({ streamtype: ['stdin'] });
    expect(raw.subarray(0, first.length)).toEqual(first);
    expect(raw.subarray(first.length).equals(encodeSpdyHeaderBlock({ 'x-big': ['x'.repeat(70_000)] }))).toBe(
      true,
    );
  });

  it('rejects a truncated header block and a bad zlib stream with SpdyProtocolError', async () => {
    const dec = new SpdyHeaderDecompressor();
    await expect(dec.decompress(Buffer.from([1, 2, 3, 4, 5]))).rejects.toThrow(SpdyProtocolError);
    dec.close();
    const reader = new SpdyFrameReader();
    const bad = spdyControlFrame(SpdyFrameType.Ping, 0, Buffer.alloc(4));
    bad.writeUInt16BE(0x8002, 0);
    expect(() => reader.push(bad)).toThrow('unsupported SPDY version 2');
  });

  it('splits frames arriving byte by byte', () => {
    const reader = new SpdyFrameReader();
    const bytes = Buffer.concat([
      spdyDataFrame(3, 1, Buffer.from('hi')),
      spdyControlFrame(6, 0, Buffer.alloc(4)),
    ]);
    const frames = [];
    for (const b of bytes) frames.push(...reader.push(Buffer.from([b])));
    expect(frames).toEqual([
      { control: false, streamId: 3, flags: 1, data: Buffer.from('hi') },
      { control: true, type: 6, flags: 0, payload: Buffer.alloc(4) },
    ]);
  });
});

describe('SpdyConnection', () => {
  const cleanup: (() => void)[] = [];
  afterEach(() => {
    for (const c of cleanup.splice(0)) c();
  });

  async function pair(onStream: (s: SpdyStream) => void): Promise<SpdyConnection> {
    const server = createServer((sock: Socket) => {
      new SpdyConnection(sock, { server: true, onStream });
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    cleanup.push(() => server.close());
    const port = (server.address() as { port: number }).port;
    const sock = await new Promise<Socket>((r) => {
      const s = connect(port, '127.0.0.1', () => r(s));
    });
    cleanup.push(() => sock.destroy());
    return new SpdyConnection(sock, { server: false });
  }

  it('answers the peer pings and pings on its own interval', async () => {
    const server = createServer((sock: Socket) => {
      new SpdyConnection(sock, { server: true });
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    cleanup.push(() => server.close());
    const port = (server.address() as { port: number }).port;
    const sock = await new Promise<Socket>((r) => {
      const s = connect(port, '127.0.0.1', () => r(s));
    });
    cleanup.push(() => sock.destroy());
    const frames: { type: number; id: number }[] = [];
    const reader = new SpdyFrameReader();
    const writes: Buffer[] = [];
    const origWrite = sock.write.bind(sock);
    sock.write = ((chunk: Buffer, ...rest: never[]) => {
      writes.push(Buffer.from(chunk));
      return origWrite(chunk, ...rest);
    }) as typeof sock.write;
    sock.on('data', (c: Buffer) => {
      for (const f of reader.push(c))
        if (f.control) frames.push({ type: f.type, id: f.payload.readUInt32BE(0) });
    });
    const client = new SpdyConnection(sock, { server: false, pingIntervalMs: 20 });
    for (let i = 0; i < 200 && frames.length < 2; i++) await new Promise((r) => setTimeout(r, 10));
    // The server echoed the client's pings (odd ids 1, 3, ...).
    expect(frames.slice(0, 2)).toEqual([
      { type: SpdyFrameType.Ping, id: 1 },
      { type: SpdyFrameType.Ping, id: 3 },
    ]);
    expect(writes.length).toBeGreaterThanOrEqual(2);
    client.close();
  });

  it('opens streams, carries data both ways with FIN, and ends streams when the socket closes', async () => {
    const seen: string[] = [];
    const client = await pair((s) => {
      seen.push(`${s.id}:${s.headers.streamtype?.[0]}`);
      let got = '';
      s.read(
        (c) => {
          got += c.toString();
        },
        () => {
          s.write(Buffer.from(`echo:${got}`));
          s.end();
        },
      );
    });
    const a = await client.createStream({ streamtype: ['stdin'] });
    const b = await client.createStream({ streamtype: ['stdout'] });
    expect([a.id, b.id]).toEqual([1, 3]);
    const reply = new Promise<string>((resolve) => {
      let out = '';
      b.read(
        (c) => {
          out += c.toString();
        },
        () => resolve(out),
      );
    });
    b.write(Buffer.from('x'.repeat(100_000)));
    b.end();
    expect(await reply).toBe(`echo:${'x'.repeat(100_000)}`);
    expect(seen).toEqual(['1:stdin', '3:stdout']);
    const ended = new Promise<boolean>((resolve) => a.read(() => {}, resolve));
    client.socket.destroy();
    expect(await ended).toBe(false);
    await expect(client.createStream({})).rejects.toThrow('SPDY connection closed');
  });
});
