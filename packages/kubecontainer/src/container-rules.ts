/**
 * Container rules the runtime manager and the prober both apply: sidecar detection (KEP-753)
 * and the grace period of a container kill (upstream `setTerminationGracePeriod`).
 *
 * @module
 */
import type { V1Container, V1Pod } from '@kubernetes/client-node';

/** The shortest stop window a container gets, seconds (upstream `minimumGracePeriodInSeconds`). */
export const MINIMUM_GRACE_PERIOD_SECONDS = 2;

/** Why a container is killed (upstream `containerKillReason`); `''` for a spec change or pod kill. */
export type ContainerKillReason = '' | 'StartupProbe' | 'LivenessProbe' | 'FailedPostStartHook' | 'Unknown';

/** Whether an init container is restartable, i.e. a sidecar (`restartPolicy: Always`, KEP-753). */
export function isRestartableInitContainer(container: V1Container): boolean {
  return container.restartPolicy === 'Always';
}

/**
 * Grace period of a kill, seconds (upstream `setTerminationGracePeriod`): the pod's deletion
 * grace; else, when the pod spec has a `terminationGracePeriodSeconds`, the failing probe's own
 * `terminationGracePeriodSeconds` for a `StartupProbe` / `LivenessProbe` kill, else the spec's;
 * else {@link MINIMUM_GRACE_PERIOD_SECONDS}. The caller raises values below the minimum.
 */
export function terminationGracePeriodSeconds(
  pod: V1Pod,
  container: V1Container,
  reason: ContainerKillReason,
): number {
  const deletion = pod.metadata?.deletionGracePeriodSeconds;
  if (deletion != null) return deletion;
  const spec = pod.spec?.terminationGracePeriodSeconds;
  if (spec == null) return MINIMUM_GRACE_PERIOD_SECONDS;
  if (reason === 'StartupProbe' && container.startupProbe?.terminationGracePeriodSeconds != null) {
    return container.startupProbe.terminationGracePeriodSeconds;
  }
  if (reason === 'LivenessProbe' && container.livenessProbe?.terminationGracePeriodSeconds != null) {
    return container.livenessProbe.terminationGracePeriodSeconds;
  }
  return spec;
}
