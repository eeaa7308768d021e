/**
 * Where the prober reports what it saw: an injected event recorder, e.g.
 * `podEventRecorder(recorder)` of `@nodeagent/events` (client-go's correlation, spam filter
 * and a queue that never blocks).
 *
 * @module
 */
import type { V1Container, V1Pod } from '@kubernetes/client-node';

/** An event's type, as the API spells it. */
export type ProbeEventType = 'Normal' | 'Warning';

/** Upstream's event reasons (`pkg/kubelet/events`): `Unhealthy` for failures and errors, `ProbeWarning` for warnings. */
export type ProbeEventReason = 'Unhealthy' | 'ProbeWarning';

/**
 * Records a container event (upstream `recorder.Eventf(ref, type, reason, message)`), e.g.
 * `Warning Unhealthy "Readiness probe failed: HTTP probe failed with statuscode: 503"`.
 * It must not block; a recorder that throws is logged and otherwise ignored.
 */
export type ProbeEventRecorder = (
  pod: V1Pod,
  container: V1Container,
  type: ProbeEventType,
  reason: ProbeEventReason,
  message: string,
) => void;
