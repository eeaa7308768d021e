/**
 * Pod IPs out of an IPv4 CIDR, the way host-local IPAM hands them out: the network
 * address and the gateway (`.1`) are never given, addresses are reused after release.
 *
 * @module
 */
import { status } from '@grpc/grpc-js';
import { FakeRuntimeConfigError, FakeRuntimeError } from './fake-error.js';

function parseIpv4(text: string): number | undefined {
  const parts = text.split('.');
  if (parts.length !== 4) return undefined;
  let value = 0;
  for (const part of parts) {
    if (!/^\d{1,3}$/.test(part)) return undefined;
    const octet = Number(part);
    if (octet > 255) return undefined;
    value = value * 256 + octet;
  }
  return value;
}

function formatIpv4(value: number): string {
  return [24, 16, 8, 0].map((shift) => Math.floor(value / 2 ** shift) % 256).join('.');
}

/** Allocates addresses of one IPv4 CIDR (prefix length 8 to 30). */
export class IpPool {
  /** The CIDR in canonical form, e.g. `10.88.0.0/16`. */
  readonly cidr: string;
  readonly #first: number;
  readonly #last: number;
  readonly #used = new Set<number>();
  #cursor: number;

  /** @throws FakeRuntimeConfigError when `cidr` is not an IPv4 CIDR with prefix 8..30. */
  constructor(cidr: string) {
    const [addr, bitsText, extra] = cidr.split('/');
    const base = addr === undefined ? undefined : parseIpv4(addr);
    const bits = Number(bitsText);
    if (base === undefined || extra !== undefined || !Number.isInteger(bits) || bits < 8 || bits > 30) {
      throw new FakeRuntimeConfigError(
        `podCidr "${cidr}" is not an IPv4 CIDR with a prefix length of 8 to 30 (e.g. "10.88.0.0/16")`,
      );
    }
    const size = 2 ** (32 - bits);
    const network = base - (base % size);
    this.cidr = `${formatIpv4(network)}/${bits}`;
    this.#first = network + 2; // skip the network address and the bridge gateway
    this.#last = network + size - 2; // skip the broadcast address
    this.#cursor = this.#first;
  }

  /** Whether `ip` lies inside this pool's CIDR. */
  contains(ip: string): boolean {
    const value = parseIpv4(ip);
    return value !== undefined && value >= this.#first - 2 && value <= this.#last + 1;
  }

  /** Takes the next free address (round-robin like host-local). @throws FakeRuntimeError RESOURCE_EXHAUSTED. */
  allocate(): string {
    const span = this.#last - this.#first + 1;
    for (let i = 0; i < span; i++) {
      const candidate = this.#cursor;
      this.#cursor = candidate >= this.#last ? this.#first : candidate + 1;
      if (!this.#used.has(candidate)) {
        this.#used.add(candidate);
        return formatIpv4(candidate);
      }
    }
    throw new FakeRuntimeError(status.RESOURCE_EXHAUSTED, `no free IP address left in pod CIDR ${this.cidr}`);
  }

  /** Returns `ip` to the pool; unknown addresses are ignored. */
  release(ip: string): void {
    const value = parseIpv4(ip);
    if (value !== undefined) this.#used.delete(value);
  }
}
