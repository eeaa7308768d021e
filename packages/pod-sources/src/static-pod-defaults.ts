/**
 * The defaults the kubelet gives pods from a file or URL (upstream `config/common.go`,
 * `applyDefaults`), and the validation they must pass before they run.
 *
 * The UID, when the manifest has none, is current upstream's recipe: FNV-1a 128 over a dump of
 * the decoded pod followed by `host:<node>` `file:<path>` (file) or `url:<url>` (http),
 * hex-encoded. Upstream dumps the Go struct with spew (`hash.DeepHashObject`); we dump the
 * decoded object as JSON with sorted keys, so the same manifest gets a different (but equally
 * stable) UID than under a real kubelet. Either way, editing the manifest gives a new UID,
 * i.e. a new pod.
 *
 * @module
 */
import type { V1Pod } from '@kubernetes/client-node';
import { PodSourceError } from './errors.js';
import { Fnv128a } from './fnv128a.js';
import { CONFIG_HASH_ANNOTATION } from './pod-update.js';

/** Where a static pod came from. */
export interface StaticPodOrigin {
  /** The node's name (appended to the pod name, lower-cased). */
  readonly nodeName: string;
  /** `file` or `http`. */
  readonly source: 'file' | 'http';
  /** The manifest's path (file) or the URL (http). */
  readonly location: string;
}

/** JSON with object keys sorted at every level: the same object always gives the same text. */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

/** The UID of a static pod without one: FNV-1a 128 of the pod, then `host:<node>file:<path>` or `url:<url>`, hex. */
export function staticPodUid(pod: V1Pod, origin: StaticPodOrigin): string {
  // Upstream writes the source after the object (DeepHashObject resets the hasher first).
  const hash = new Fnv128a().update(canonicalJson(pod));
  if (origin.source === 'file') hash.update(`host:${origin.nodeName}`).update(`file:${origin.location}`);
  else hash.update(`url:${origin.location}`);
  return hash.hex();
}

/**
 * Returns a copy of `pod` with upstream's defaults: the UID (kept when the manifest sets one),
 * the name suffixed with `-<lower-cased node name>`, namespace `default` when unset,
 * `spec.nodeName`, the `kubernetes.io/config.hash` annotation, for file pods a toleration of
 * every NoExecute taint, and phase Pending.
 */
export function applyStaticPodDefaults(pod: V1Pod, origin: StaticPodOrigin): V1Pod {
  const out = structuredClone(pod);
  out.metadata ??= {};
  const metadata = out.metadata;
  if (metadata.uid === undefined || metadata.uid === '') metadata.uid = staticPodUid(pod, origin);
  metadata.name = `${metadata.name ?? ''}-${origin.nodeName.toLowerCase()}`;
  if (metadata.namespace === undefined || metadata.namespace === '') metadata.namespace = 'default';
  out.spec ??= { containers: [] };
  const spec = out.spec;
  spec.nodeName = origin.nodeName;
  metadata.annotations = { ...(metadata.annotations ?? {}), [CONFIG_HASH_ANNOTATION]: metadata.uid };
  if (origin.source === 'file') {
    // AddOrUpdateTolerationInPod: an equal toleration is not added twice.
    const tolerations = spec.tolerations ?? [];
    const present = tolerations.some(
      (t) =>
        t.operator === 'Exists' &&
        t.effect === 'NoExecute' &&
        (t.key ?? '') === '' &&
        t.tolerationSeconds === undefined,
    );
    if (!present) spec.tolerations = [...tolerations, { operator: 'Exists', effect: 'NoExecute' }];
  }
  out.status = { ...(out.status ?? {}), phase: 'Pending' };
  return out;
}

const DNS_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
const DNS_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;

/**
 * The field errors of a defaulted static pod (the part of `ValidatePod` a manifest most often
 * gets wrong), upstream's `field: message` style; empty when valid.
 */
export function validateStaticPod(pod: V1Pod): string[] {
  const errors: string[] = [];
  const name = pod.metadata?.name ?? '';
  if (name === '' || name.startsWith('-'))
    errors.push('metadata.name: Required value: name or generateName is required');
  else if (name.length > 253 || !DNS_SUBDOMAIN.test(name)) {
    errors.push(
      `metadata.name: Invalid value: ${JSON.stringify(name)}: a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.'`,
    );
  }
  const ns = pod.metadata?.namespace ?? '';
  if (ns.length > 63 || !DNS_LABEL.test(ns)) {
    errors.push(
      `metadata.namespace: Invalid value: ${JSON.stringify(ns)}: a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-'`,
    );
  }
  const containers = pod.spec?.containers ?? [];
  if (containers.length === 0) errors.push('spec.containers: Required value');
  const seen = new Set<string>();
  for (const [i, c] of [...(pod.spec?.initContainers ?? []), ...containers].entries()) {
    const path =
      i < (pod.spec?.initContainers?.length ?? 0)
        ? `spec.initContainers[${i}]`
        : `spec.containers[${i - (pod.spec?.initContainers?.length ?? 0)}]`;
    if (c.name === undefined || c.name === '') errors.push(`${path}.name: Required value`);
    else if (!DNS_LABEL.test(c.name) || c.name.length > 63)
      errors.push(`${path}.name: Invalid value: ${JSON.stringify(c.name)}`);
    else if (seen.has(c.name)) errors.push(`${path}.name: Duplicate value: ${JSON.stringify(c.name)}`);
    else seen.add(c.name);
    if (c.image === undefined || c.image.trim() === '') errors.push(`${path}.image: Required value`);
  }
  return errors;
}

/** Defaults and validates one decoded pod; throws {@link PodSourceError} `Invalid`. */
export function staticPodFrom(pod: V1Pod, origin: StaticPodOrigin): V1Pod {
  const defaulted = applyStaticPodDefaults(pod, origin);
  const errors = validateStaticPod(defaulted);
  if (errors.length > 0) {
    throw new PodSourceError(
      'Invalid',
      origin.source,
      origin.location,
      `invalid pod: [${errors.join(', ')}]`,
    );
  }
  return defaulted;
}
