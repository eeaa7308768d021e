/**
 * A minimal, deterministic ustar writer (enough for OCI image layers and archives).
 * @module
 */

/** One member of a tar archive. */
export type TarEntry =
  | { readonly type: 'file'; readonly path: string; readonly data: Buffer; readonly mode?: number }
  | { readonly type: 'dir'; readonly path: string; readonly mode?: number }
  | { readonly type: 'symlink'; readonly path: string; readonly target: string };

/** Options for {@link buildTar}. */
export interface TarOptions {
  /** Modification time of every entry, seconds since the epoch. Fixed so output is reproducible. @default 0 */
  readonly mtimeSeconds?: number;
}

/** Thrown for entries the ustar format cannot hold. */
export class TarError extends Error {
  override readonly name = 'TarError';
}

const BLOCK = 512;

function octal(value: number, width: number): string {
  // width includes the terminating NUL
  const s = value.toString(8);
  if (s.length > width - 1) throw new TarError(`value ${value} does not fit a ${width}-byte tar field`);
  return s.padStart(width - 1, '0');
}

/** Split a path into ustar `prefix` (<=155 bytes) and `name` (<=100 bytes). */
function splitPath(path: string): { name: string; prefix: string } {
  if (Buffer.byteLength(path) <= 100) return { name: path, prefix: '' };
  for (let i = path.lastIndexOf('/'); i > 0; i = path.lastIndexOf('/', i - 1)) {
    const prefix = path.slice(0, i);
    const name = path.slice(i + 1);
    if (Buffer.byteLength(prefix) <= 155 && Buffer.byteLength(name) <= 100 && name) return { name, prefix };
  }
  throw new TarError(`path too long for ustar: ${path}`);
}

function header(entry: TarEntry, mtimeSeconds: number): Buffer {
  const h = Buffer.alloc(BLOCK);
  const path = entry.type === 'dir' && !entry.path.endsWith('/') ? `${entry.path}/` : entry.path;
  const { name, prefix } = splitPath(path);
  const size = entry.type === 'file' ? entry.data.length : 0;
  const mode = entry.type === 'symlink' ? 0o777 : (entry.mode ?? (entry.type === 'dir' ? 0o755 : 0o644));
  const typeflag = entry.type === 'file' ? '0' : entry.type === 'dir' ? '5' : '2';
  if (entry.type === 'symlink' && Buffer.byteLength(entry.target) > 100) {
    throw new TarError(`symlink target too long for ustar: ${entry.target}`);
  }
  h.write(name, 0, 100, 'utf8');
  h.write(octal(mode, 8), 100, 8, 'ascii');
  h.write(octal(0, 8), 108, 8, 'ascii'); // uid
  h.write(octal(0, 8), 116, 8, 'ascii'); // gid
  h.write(octal(size, 12), 124, 12, 'ascii');
  h.write(octal(mtimeSeconds, 12), 136, 12, 'ascii');
  h.write('        ', 148, 8, 'ascii'); // checksum is computed with this field as spaces
  h.write(typeflag, 156, 1, 'ascii');
  if (entry.type === 'symlink') h.write(entry.target, 157, 100, 'utf8');
  h.write('ustar\u000000', 257, 8, 'ascii'); // magic "ustar\0" + version "00"
  h.write('root', 265, 32, 'ascii'); // uname
  h.write('root', 297, 32, 'ascii'); // gname
  h.write(octal(0, 8), 329, 8, 'ascii'); // devmajor
  h.write(octal(0, 8), 337, 8, 'ascii'); // devminor
  h.write(prefix, 345, 155, 'utf8');
  let sum = 0;
  for (const byte of h) sum += byte;
  h.write(`${octal(sum, 7)}\u0000 `, 148, 8, 'ascii');
  return h;
}

/**
 * Serialise entries, in the given order, into an uncompressed ustar archive (owner root:root,
 * fixed mtime, terminated by two zero blocks). Same input → byte-identical output.
 */
export function buildTar(entries: readonly TarEntry[], opts: TarOptions = {}): Buffer {
  const mtime = opts.mtimeSeconds ?? 0;
  const parts: Buffer[] = [];
  const seen = new Set<string>();
  for (const entry of entries) {
    if (!entry.path || entry.path.startsWith('/') || entry.path.split('/').includes('..')) {
      throw new TarError(`tar paths must be relative and stay inside the archive: ${entry.path}`);
    }
    if (seen.has(entry.path)) throw new TarError(`duplicate tar entry: ${entry.path}`);
    seen.add(entry.path);
    parts.push(header(entry, mtime));
    if (entry.type === 'file') {
      parts.push(entry.data);
      const pad = (BLOCK - (entry.data.length % BLOCK)) % BLOCK;
      if (pad) parts.push(Buffer.alloc(pad));
    }
  }
  parts.push(Buffer.alloc(2 * BLOCK));
  return Buffer.concat(parts);
}
