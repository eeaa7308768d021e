/**
 * The core/v1 Event as plain API JSON, and the pieces a recorder builds it from: the type,
 * the involved object's reference and the reporting source.
 *
 * @module
 */

/** An event's type, as the API spells it (upstream `v1.EventTypeNormal` / `v1.EventTypeWarning`). */
export type EventType = 'Normal' | 'Warning';

/** The event types the API accepts. */
export const EVENT_TYPES: readonly EventType[] = ['Normal', 'Warning'];

/** A reference to the object an event is about (core/v1 `ObjectReference`). */
export interface ObjectReference {
  /** Kind, e.g. `Pod` or `Node`. */
  readonly kind?: string;
  /** Namespace; `''` or unset for cluster-scoped objects (the event then goes to `default`). */
  readonly namespace?: string;
  /** Name of the object. */
  readonly name?: string;
  /** UID of the object. */
  readonly uid?: string;
  /** `apiVersion` of the object, e.g. `v1`. */
  readonly apiVersion?: string;
  /** Resource version of the object when the event was recorded. */
  readonly resourceVersion?: string;
  /** Part of the object, e.g. `spec.containers{web}` for a container of a pod. */
  readonly fieldPath?: string;
}

/** Who reports the events (core/v1 `EventSource`): the kubelet is `{ component: 'kubelet', host: <node name> }`. */
export interface EventSource {
  /** Component name, e.g. `kubelet`. */
  readonly component?: string;
  /** Node name of the reporter. */
  readonly host?: string;
}

/** A core/v1 Event as the API serves it (timestamps are RFC 3339 strings). */
export interface CoreEvent {
  /** Always `v1`. */
  apiVersion?: string;
  /** Always `Event`. */
  kind?: string;
  /** Name (`<involved object name>.<hex unix nanoseconds>`), namespace and the server's fields. */
  metadata: {
    name?: string;
    namespace?: string;
    resourceVersion?: string;
    uid?: string;
    annotations?: Record<string, string>;
    creationTimestamp?: string;
  };
  /** The object the event is about. */
  involvedObject: ObjectReference;
  /** Machine-readable why, e.g. `Pulled` (see the reason constants). */
  reason?: string;
  /** Human-readable what. */
  message?: string;
  /** Who reported it. */
  source?: EventSource;
  /** First occurrence, RFC 3339. */
  firstTimestamp?: string;
  /** Latest occurrence, RFC 3339. */
  lastTimestamp?: string;
  /** Occurrences so far. */
  count?: number;
  /** `Normal` or `Warning`. */
  type?: string;
  /** Microsecond time of the event (events.k8s.io style); unset by this recorder, as client-go's. */
  eventTime?: string | null;
  /** The controller that emitted the event, e.g. `kubelet`. */
  reportingComponent?: string;
  /** The instance of the controller, e.g. the node name. */
  reportingInstance?: string;
}

/**
 * RFC 3339 with second precision (`2026-01-02T03:04:05Z`), as `metav1.Time` serializes:
 * the API server keeps whole seconds, so a patched timestamp reads back exactly.
 */
export function formatTime(ms: number): string {
  return new Date(Math.floor(ms / 1000) * 1000).toISOString().replace(/\.\d{3}Z$/, 'Z');
}
