/**
 * FNV-1a, 128 bits (Go's `hash/fnv.New128a`), which upstream's static pod UIDs use.
 *
 * @module
 */

const OFFSET_BASIS = 0x6c62272e07bb014262b821756295c58dn;
const PRIME = (1n << 88n) + 0x13bn;
const MASK = (1n << 128n) - 1n;

/** An incremental FNV-1a 128 hash. */
export class Fnv128a {
  #h = OFFSET_BASIS;

  /** Adds the UTF-8 bytes of `data`. */
  update(data: string | Uint8Array): this {
    const bytes = typeof data === 'string' ? new TextEncoder().encode(data) : data;
    let h = this.#h;
    for (const b of bytes) h = ((h ^ BigInt(b)) * PRIME) & MASK;
    this.#h = h;
    return this;
  }

  /** The 16-byte sum, hex-encoded (big-endian, as Go's `Sum(nil)`). */
  hex(): string {
    return this.#h.toString(16).padStart(32, '0');
  }
}
