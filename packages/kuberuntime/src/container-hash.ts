/**
 * The container spec hash the kubelet stores in `io.kubernetes.container.hash` and compares to
 * decide "Container … definition changed". Bit-for-bit upstream's `HashContainer` (v1.31+):
 * Go's `json.Marshal` of the map `{"image": …, "name": …}` (keys sorted, HTML-safe escaping),
 * printed by `hashutil.DeepHashObject` (spew `%#v` of a `[]byte`: `([]uint8)[123 34 …]`, each
 * byte in decimal, one space apart) and hashed with FNV-1a 32. So containers a real kubelet
 * created are adopted without a restart.
 *
 * @module
 */
import type { V1Container, V1Pod } from '@kubernetes/client-node';
import { goJsonString } from './go-json.js';

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

/**
 * What upstream's `DeepHashObject` writes into the hasher for a container: spew's `%#v` of the
 * JSON bytes of `{"image","name"}` (`([]uint8)[…]`, decimal bytes).
 */
export function containerHashInput(container: V1Container): string {
  const json = `{"image":${goJsonString(container.image ?? '')},"name":${goJsonString(container.name)}}`;
  return `([]uint8)[${Buffer.from(json, 'utf8').join(' ')}]`;
}

/** The spec hash of a container (upstream `kubecontainer.HashContainer`). */
export function hashContainer(container: V1Container): bigint {
  return BigInt(fnv1a32(containerHashInput(container)));
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
