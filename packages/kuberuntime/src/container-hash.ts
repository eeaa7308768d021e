/**
 * The container spec hash the kubelet stores in `io.kubernetes.container.hash` and compares to
 * decide "Container … definition changed". Like upstream (v1.31+) only the name and image are
 * hashed, so agent upgrades never restart containers; FNV-1a 32-bit over the JSON of those
 * fields. (Upstream feeds the JSON through a spew printer first, so the numbers differ.)
 *
 * @module
 */
import type { V1Container, V1Pod } from '@kubernetes/client-node';

const FNV_OFFSET = 0x811c9dc5;
const FNV_PRIME = 0x01000193;

/** FNV-1a, 32 bits, over the UTF-8 bytes of `text`. */
export function fnv1a32(text: string): number {
  let hash = FNV_OFFSET;
  for (const byte of Buffer.from(text, 'utf8')) {
    hash ^= byte;
    hash = Math.imul(hash, FNV_PRIME) >>> 0;
  }
  return hash >>> 0;
}

/** The spec hash of a container (upstream `kubecontainer.HashContainer`). */
export function hashContainer(container: V1Container): bigint {
  // Keys sorted, as Go marshals a map.
  return BigInt(fnv1a32(JSON.stringify({ image: container.image ?? '', name: container.name })));
}

/**
 * The CrashLoopBackOff key of a container (upstream `GetStableKey`):
 * `<pod>_<namespace>_<uid>_<container>_<hash hex>`; editing the container resets its backoff.
 */
export function stableContainerKey(pod: V1Pod, container: V1Container): string {
  const m = pod.metadata;
  return `${m?.name ?? ''}_${m?.namespace ?? ''}_${m?.uid ?? ''}_${container.name}_${hashContainer(container).toString(16)}`;
}

/** A pod as the kubelet names it in messages (upstream `format.Pod`): `name_namespace(uid)`. */
export function formatPod(pod: V1Pod): string {
  return `${pod.metadata?.name ?? ''}_${pod.metadata?.namespace ?? ''}(${pod.metadata?.uid ?? ''})`;
}
