/**
 * The protobuf reader responses are decoded with. CRI list responses are mostly strings (64-hex
 * IDs, image references, label and annotation keys and values: ~15 per container), and the
 * stock reader decodes every string over 32 bytes by allocating a subarray and calling
 * `TextDecoder`, and shorter ones through a temporary array: for 10,000 containers that is
 * roughly half of the decode time and most of its garbage. Node's Buffer slices UTF-8 straight
 * from the message buffer instead.
 *
 * @module
 */
import { BinaryReader } from '@bufbuild/protobuf/wire';

/**
 * A `BinaryReader` whose `string()` decodes with `Buffer#toString('utf8', start, end)`: the
 * same text for valid UTF-8, U+FFFD for invalid sequences (as the stock non-strict reader).
 */
export class CriWireReader extends BinaryReader {
  readonly #source: Buffer;
  /**
   * The generated decoders keep their recursion depth in this property of the reader; declaring
   * it here gives every reader the same shape from the start instead of adding it on first use.
   */
  __tsProtoDecodeDepth = 0;

  constructor(buf: Uint8Array) {
    super(buf);
    this.#source = Buffer.isBuffer(buf) ? buf : Buffer.from(buf.buffer, buf.byteOffset, buf.byteLength);
  }

  /**
   * Reads a length-delimited UTF-8 string (`strict`: throw on invalid UTF-8, via the stock
   * path). @throws RangeError past the end of the message.
   */
  override string(strict?: boolean): string {
    if (strict === true) return super.string(true);
    const len = this.uint32();
    const start = this.pos;
    const end = start + len;
    if (end > this.len) throw new RangeError('premature EOF');
    this.pos = end;
    return this.#source.toString(undefined, start, end);
  }
}
