/**
 * The plain-JSON object shape the server stores and serves.
 *
 * @module
 */

/** `metadata` of a stored object (the fields the server maintains, plus anything else). */
export interface ObjectMeta {
  name?: string;
  generateName?: string;
  namespace?: string;
  uid?: string;
  resourceVersion?: string;
  generation?: number;
  creationTimestamp?: string;
  deletionTimestamp?: string;
  deletionGracePeriodSeconds?: number;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  finalizers?: string[];
  ownerReferences?: Array<Record<string, unknown>>;
  [key: string]: unknown;
}

/** Any Kubernetes object as plain JSON (`apiVersion`, `kind`, `metadata`, anything else). */
export interface KubeObject {
  apiVersion?: string;
  kind?: string;
  metadata?: ObjectMeta;
  [key: string]: unknown;
}

/** A JSON value. */
export type JsonValue = string | number | boolean | null | JsonValue[] | { [key: string]: JsonValue };

/** Whether `v` is a plain JSON object (not an array, not null). */
export function isPlainObject(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}
