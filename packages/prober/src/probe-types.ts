/**
 * The prober's vocabulary: the three probe types, the results a worker publishes (upstream
 * `pkg/kubelet/prober/results`) and the outcomes a probe action returns (upstream `pkg/probe`).
 *
 * @module
 */

/** Which probe of a container (upstream `probeType`). */
export type ProbeType = 'liveness' | 'readiness' | 'startup';

/** Every probe type, in upstream's declaration order. */
export const PROBE_TYPES: readonly ProbeType[] = ['liveness', 'readiness', 'startup'];

/**
 * A published probe result (upstream `results.Result`): `unknown` is the startup probe's
 * initial value and what a startup run below its threshold leaves.
 */
export type ProbeResult = 'success' | 'failure' | 'unknown';

/**
 * What one run of a probe action found (upstream `probe.Result`): `warning` is logically a
 * success with something worth an event (a redirect that was not followed).
 */
export type ProbeOutcome = 'success' | 'warning' | 'failure' | 'unknown';

/** The capitalised name upstream prints in events, logs and the `probe_type` label. */
export function probeTypeLabel(type: ProbeType): 'Liveness' | 'Readiness' | 'Startup' {
  return type === 'liveness' ? 'Liveness' : type === 'readiness' ? 'Readiness' : 'Startup';
}

/** The value a worker publishes for a new container before probing (upstream `initialValue`). */
export function initialResult(type: ProbeType): ProbeResult {
  return type === 'readiness' ? 'failure' : type === 'liveness' ? 'success' : 'unknown';
}
