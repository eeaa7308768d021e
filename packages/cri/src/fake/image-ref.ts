/**
 * Docker-style image reference normalisation (`busybox` →
 * `docker.io/library/busybox:latest`), as containerd applies it before looking an
 * image up.
 *
 * @module
 */

/** Returns the fully qualified form of `ref`: registry host, repository path, and a tag or digest. */
export function normalizeImageRef(ref: string): string {
  const trimmed = ref.trim();
  if (trimmed === '') return trimmed;
  const at = trimmed.indexOf('@');
  const namePart = at >= 0 ? trimmed.slice(0, at) : trimmed;
  const digest = at >= 0 ? trimmed.slice(at) : '';
  const slash = namePart.indexOf('/');
  const first = slash >= 0 ? namePart.slice(0, slash) : '';
  const hasDomain = slash >= 0 && (first.includes('.') || first.includes(':') || first === 'localhost');
  let name = namePart;
  if (!hasDomain) name = slash >= 0 ? `docker.io/${namePart}` : `docker.io/library/${namePart}`;
  const lastSlash = name.lastIndexOf('/');
  const hasTag = name.indexOf(':', lastSlash) >= 0;
  if (!hasTag && digest === '') name = `${name}:latest`;
  return name + digest;
}

/** Whether `ref` names an image ID (`sha256:<hex>`) rather than a repository. */
export function isImageId(ref: string): boolean {
  return /^sha256:[0-9a-f]{1,64}$/.test(ref);
}
