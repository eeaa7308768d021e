// The client's response reader decodes exactly what the stock protobuf reader decodes: any
// strings (multi-byte, invalid UTF-8, empty, long), nested messages and maps, and it fails
// the same way on a truncated message.
import { BinaryReader, BinaryWriter } from '@bufbuild/protobuf/wire';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { type Container, ListContainersResponse } from '../src/gen/runtime/v1/api.js';
import { CriWireReader } from '../src/wire-reader.js';

const text = fc.oneof(fc.string({ maxLength: 80 }), fc.string({ unit: 'grapheme', maxLength: 40 }));
const strings = fc.dictionary(text, text, { maxKeys: 4 });
const container: fc.Arbitrary<Container> = fc.record({
  id: text,
  podSandboxId: text,
  metadata: fc.option(fc.record({ name: text, attempt: fc.nat() }), { nil: undefined }),
  image: fc.option(
    fc.record({
      image: text,
      annotations: strings,
      userSpecifiedImage: text,
      runtimeHandler: text,
      imageRef: text,
    }),
    { nil: undefined },
  ),
  imageRef: text,
  state: fc.constantFrom(0, 1, 2, 3),
  createdAt: fc.bigInt({ min: -(2n ** 63n), max: 2n ** 63n - 1n }),
  labels: strings,
  annotations: strings,
  imageId: text,
});

describe('CriWireReader', () => {
  it('decodes list responses like the stock reader', () => {
    fc.assert(
      fc.property(fc.array(container, { maxLength: 6 }), (containers) => {
        const bytes = Buffer.from(ListContainersResponse.encode({ containers }).finish());
        const ours = ListContainersResponse.decode(new CriWireReader(bytes));
        expect(ours).toEqual(ListContainersResponse.decode(bytes));
        expect(ours).toEqual(ListContainersResponse.fromPartial({ containers }));
        // A plain Uint8Array (not a Buffer) works too.
        expect(ListContainersResponse.decode(new CriWireReader(new Uint8Array(bytes)))).toEqual(ours);
      }),
      { numRuns: 200 },
    );
  });

  it('replaces invalid UTF-8 like the stock reader and honours strict mode', () => {
    for (const raw of [[0xff], [0x61, 0xc3], [0xe2, 0x28, 0xa1], [0xf0, 0x9f, 0x98], [0xed, 0xa0, 0x80]]) {
      const w = new BinaryWriter();
      w.bytes(Uint8Array.from(raw));
      const bytes = Buffer.from(w.finish());
      expect(new CriWireReader(bytes).string()).toBe(new BinaryReader(bytes).string());
      expect(() => new CriWireReader(bytes).string(true)).toThrow();
    }
  });

  it('rejects a string running past the end of the message', () => {
    const bytes = Buffer.from([0x05, 0x61, 0x62]);
    expect(() => new CriWireReader(bytes).string()).toThrow(RangeError);
    expect(() =>
      ListContainersResponse.decode(new CriWireReader(Buffer.from([0x0a, 0x04, 0x0a, 0x09, 0x61]))),
    ).toThrow(RangeError);
  });
});
