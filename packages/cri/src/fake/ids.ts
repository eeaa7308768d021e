/**
 * Object IDs the way containerd shapes them (64 lowercase hex digits), but
 * deterministic: the n-th ID of a fake is the same on every run, so test output and
 * snapshots stay stable. Lookups accept a unique prefix, as containerd's do.
 *
 * @module
 */
import { createHash } from 'node:crypto';
import { status } from '@grpc/grpc-js';
import { FakeRuntimeError } from './fake-error.js';

/** Hands out 64-hex-digit IDs derived from a seed and a counter. */
export class IdGenerator {
  #counter = 0;

  readonly #seed: string;
  constructor(seed: string) {
    this.#seed = seed;
  }

  /** The next ID for an object of `kind` ("sandbox", "container"). */
  next(kind: string): string {
    this.#counter += 1;
    return createHash('sha256').update(`${this.#seed}/${kind}/${this.#counter}`).digest('hex');
  }
}

/**
 * Finds the key of `map` equal to `idOrPrefix`, or the only key that starts with it.
 * Returns `undefined` when nothing matches; throws `INVALID_ARGUMENT` when a prefix
 * matches several IDs (containerd's truncindex refuses ambiguous prefixes too).
 */
export function resolveId<V>(map: ReadonlyMap<string, V>, idOrPrefix: string): string | undefined {
  if (idOrPrefix === '') return undefined;
  if (map.has(idOrPrefix)) return idOrPrefix;
  let found: string | undefined;
  for (const id of map.keys()) {
    if (!id.startsWith(idOrPrefix)) continue;
    if (found !== undefined) {
      throw new FakeRuntimeError(status.INVALID_ARGUMENT, `id prefix "${idOrPrefix}" is ambiguous`);
    }
    found = id;
  }
  return found;
}

/**
 * The full ID a list filter names: the ID itself, the only ID it prefixes, or (when the
 * prefix is unknown or ambiguous) the filter value unchanged, which then matches nothing.
 */
export function normalizeFilterId<V>(map: ReadonlyMap<string, V>, idOrPrefix: string): string {
  try {
    return resolveId(map, idOrPrefix) ?? idOrPrefix;
  } catch {
    return idOrPrefix;
  }
}
