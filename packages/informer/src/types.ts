/**
 * The plain API JSON shapes the informer works with. Objects are never turned into class
 * instances and timestamps stay RFC 3339 strings, exactly as the API server sends them.
 *
 * @module
 */

/** The `metadata` of a Kubernetes object (the fields the informer reads; others pass through). */
export interface ObjectMeta {
  readonly name?: string;
  readonly namespace?: string;
  readonly uid?: string;
  readonly resourceVersion?: string;
  readonly labels?: Readonly<Record<string, string>>;
  readonly annotations?: Readonly<Record<string, string>>;
  readonly [field: string]: unknown;
}

/** Any Kubernetes object as plain JSON. */
export interface KubeObject {
  readonly apiVersion?: string;
  readonly kind?: string;
  readonly metadata?: ObjectMeta;
  readonly [field: string]: unknown;
}

/** `metav1.ListMeta` of a list response. */
export interface ListMeta {
  readonly resourceVersion?: string;
  readonly continue?: string;
  readonly remainingItemCount?: number;
}

/** A list response (`PodList`, …) as plain JSON. */
export interface ObjectList<T extends KubeObject = KubeObject> {
  readonly apiVersion?: string;
  readonly kind?: string;
  readonly metadata?: ListMeta;
  readonly items: readonly T[];
}

/** The event types of the watch protocol. */
export type WatchEventType = 'ADDED' | 'MODIFIED' | 'DELETED' | 'BOOKMARK' | 'ERROR';

/** One decoded watch event. For `ERROR` events `object` is a `Status`. */
export interface WatchEvent<T extends KubeObject = KubeObject> {
  readonly type: WatchEventType;
  readonly object: T;
}

/** A `metav1.Status` body, as the API server writes it on errors. */
export interface Status {
  readonly kind?: string;
  readonly apiVersion?: string;
  readonly status?: string;
  readonly message?: string;
  readonly reason?: string;
  readonly code?: number;
  readonly details?: unknown;
}

/** Selectors that scope both list and watch. */
export interface Selectors {
  /** e.g. `app=web,tier!=cache`. */
  readonly labelSelector?: string;
  /** e.g. `spec.nodeName=node-1`. */
  readonly fieldSelector?: string;
}

/** Query parameters of one list request. */
export interface ListOptions extends Selectors {
  /** `resourceVersion`: `"0"` (any, from cache), `""` (consistent read), or an RV (not older than). */
  readonly resourceVersion?: string;
  /** `resourceVersionMatch` (`NotOlderThan` or `Exact`). */
  readonly resourceVersionMatch?: string;
  /** Page size (`limit`). */
  readonly limit?: number;
  /** The continue token of the previous page. */
  readonly continue?: string;
}

/** Query parameters of one watch request. */
export interface WatchOptions extends Selectors {
  /** Watch from this resource version. */
  readonly resourceVersion?: string;
  /** `resourceVersionMatch`; only `NotOlderThan`, used with `sendInitialEvents`. */
  readonly resourceVersionMatch?: string;
  /** Ask for BOOKMARK events. */
  readonly allowWatchBookmarks?: boolean;
  /** Server-side timeout of the watch, in seconds. */
  readonly timeoutSeconds?: number;
  /** Streaming list: the server first sends the current state as ADDED events. */
  readonly sendInitialEvents?: boolean;
}

/** The annotation a BOOKMARK carries at the end of a streaming list's initial events. */
export const INITIAL_EVENTS_END_ANNOTATION = 'k8s.io/initial-events-end';
