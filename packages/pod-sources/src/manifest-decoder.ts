/**
 * Decoding manifests (upstream `tryDecodeSinglePod` / `tryDecodePodList`): YAML or JSON, one
 * `v1` Pod, or for URLs also a `v1` PodList. Anything else (a Deployment, a list of strings,
 * several YAML documents) is refused with a {@link PodSourceError} naming the input.
 *
 * @module
 */
import type { V1Pod } from '@kubernetes/client-node';
import { parseAllDocuments } from 'yaml';
import { PodSourceError } from './errors.js';
import { type StaticPodOrigin, staticPodFrom } from './static-pod-defaults.js';

/** Largest manifest read, bytes (upstream `maxConfigLength`, 10 MiB). */
export const MAX_MANIFEST_BYTES = 10 * 1024 * 1024;

function parseObject(text: string, origin: StaticPodOrigin): Record<string, unknown> {
  const docs = parseAllDocuments(text).filter((d) => d.contents !== null);
  if (docs.length !== 1) {
    throw new PodSourceError(
      'Undecodable',
      origin.source,
      origin.location,
      docs.length === 0
        ? 'no object in the manifest'
        : `expected one object, found ${docs.length} YAML documents`,
    );
  }
  const doc = docs[0];
  if (doc === undefined || doc.errors.length > 0) {
    throw new PodSourceError(
      'Undecodable',
      origin.source,
      origin.location,
      doc?.errors[0]?.message ?? 'not YAML',
    );
  }
  const value: unknown = doc.toJS();
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    throw new PodSourceError('Undecodable', origin.source, origin.location, 'the manifest is not an object');
  }
  return value as Record<string, unknown>;
}

function kindOf(obj: Record<string, unknown>): string {
  return `${String(obj.apiVersion ?? '<no apiVersion>')} ${String(obj.kind ?? '<no kind>')}`;
}

/**
 * Decodes the manifest into defaulted, validated pods: one for a Pod, each item for a PodList
 * (when `allowList`). @throws PodSourceError
 */
export function decodeManifest(text: string, origin: StaticPodOrigin, allowList = false): V1Pod[] {
  const obj = parseObject(text, origin);
  if (obj.apiVersion === 'v1' && obj.kind === 'Pod') return [staticPodFrom(obj as V1Pod, origin)];
  if (allowList && obj.apiVersion === 'v1' && obj.kind === 'PodList') {
    const items = Array.isArray(obj.items) ? (obj.items as V1Pod[]) : [];
    return items.map((item) => staticPodFrom(item, origin));
  }
  throw new PodSourceError(
    'NotAPod',
    origin.source,
    origin.location,
    `expected a v1 Pod${allowList ? ' or PodList' : ''}, got ${kindOf(obj)}`,
  );
}
