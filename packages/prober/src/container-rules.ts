/**
 * The few kubelet container rules the prober applies itself: sidecars, `$(VAR)` expansion of
 * exec commands, and the grace period of a probe kill.
 *
 * `@nodeagent/kuberuntime` has the same rules internally (it does not export them); they are
 * small enough to keep here rather than make the prober depend on the runtime manager.
 *
 * @module
 */
import type { V1Container, V1Pod } from '@kubernetes/client-node';

/** A restartable init container (sidecar): an init container with `restartPolicy: Always`. */
export function isRestartableInitContainer(container: V1Container): boolean {
  return container.restartPolicy === 'Always';
}

/**
 * `$(NAME)` expansion (upstream `third_party/forked/golang/expansion`): `$$` escapes,
 * unresolved names stay as written.
 */
export function expand(input: string, lookup: (name: string) => string | undefined): string {
  let out = '';
  let i = 0;
  while (i < input.length) {
    const ch = input[i] as string;
    if (ch !== '$' || i + 1 >= input.length) {
      out += ch;
      i++;
      continue;
    }
    const next = input[i + 1] as string;
    if (next === '$') {
      out += '$';
      i += 2;
    } else if (next === '(') {
      const close = input.indexOf(')', i + 2);
      if (close === -1) {
        out += '$(';
        i += 2;
      } else {
        const name = input.slice(i + 2, close);
        out += lookup(name) ?? `$(${name})`;
        i = close + 1;
      }
    } else {
      out += `$${next}`;
      i += 2;
    }
  }
  return out;
}

/** The kubelet's minimum kill grace period, seconds. */
const MINIMUM_GRACE_PERIOD_SECONDS = 2;

/**
 * Grace period of a probe kill, seconds (upstream `setTerminationGracePeriod`): the pod's
 * deletion grace, else (when the pod has a termination grace) the probe's
 * `terminationGracePeriodSeconds`, else the pod's, else 2.
 */
export function probeKillGracePeriodSeconds(
  pod: V1Pod,
  container: V1Container,
  probeType: 'liveness' | 'startup',
): number {
  const deletion = pod.metadata?.deletionGracePeriodSeconds;
  if (deletion != null) return deletion;
  const spec = pod.spec?.terminationGracePeriodSeconds;
  if (spec == null) return MINIMUM_GRACE_PERIOD_SECONDS;
  const probe = probeType === 'liveness' ? container.livenessProbe : container.startupProbe;
  return probe?.terminationGracePeriodSeconds ?? spec;
}
