/**
 * The kubelet's prober for Node.js: a {@link ProbeManager} with one worker per (pod UID,
 * container, probe type) that follows upstream's rules (initial results, initial delay, period,
 * timeout, thresholds, startup gating, hold after a liveness failure, jitter after a restart,
 * 3 attempts on probe errors, sidecars probed), the `httpGet`, `tcpSocket`, `exec` (CRI
 * `ExecSync`, {@link criCommandRunner}) and `grpc` probes of `pkg/probe` with upstream's
 * messages, the kubelet's events and metrics, and {@link applyProbeResults} (upstream
 * `UpdatePodStatus`). It reports; the runtime manager restarts containers ({@link RestartRequest}).
 *
 * @example
 * ```ts
 * import { ProbeManager } from '@nodeagent/prober';
 *
 * const statuses = new Map(); // pod UID → V1PodStatus, kept current by the agent
 * const manager = new ProbeManager({ statusProvider: { getPodStatus: (uid) => statuses.get(uid) } });
 * manager.on('result', (u) => console.log(u.probeType, u.containerName, u.result));
 * manager.on('restart', (r) => console.log(r.message, 'grace', r.gracePeriodSeconds));
 * await manager.start();
 * manager.addPod(pod);
 * ```
 *
 * @packageDocumentation
 */
export {
  type CommandResult,
  type CommandRunner,
  type CriCommandRunnerOptions,
  criCommandRunner,
  ExecTimeoutError,
} from './command-runner.js';
export type { ProbeEventReason, ProbeEventRecorder, ProbeEventType } from './event-recorder.js';
export { applyProbeResults, type ProbeResultsView } from './pod-status.js';
export type { PodStatusProvider } from './pod-status-provider.js';
export {
  type ProbeAttempt,
  ProbeManager,
  type ProbeManagerEvents,
  type ProbeResultUpdate,
  type RestartRequest,
} from './probe-manager.js';
export { DEFAULT_USER_AGENT, type ProbeManagerOptions } from './probe-manager-options.js';
export { type ProbeSpec, type ProbeTiming, probeSpec } from './probe-spec.js';
export {
  initialResult,
  PROBE_TYPES,
  type ProbeOutcome,
  type ProbeResult,
  type ProbeType,
  probeTypeLabel,
} from './probe-types.js';
export { formatPod, MAX_PROBE_ATTEMPTS } from './prober.js';
export { execProbe } from './probes/exec-probe.js';
export { grpcProbe } from './probes/grpc-probe.js';
export { httpProbe } from './probes/http-probe.js';
export { type HTTPProbeRequest, newHTTPProbeRequest } from './probes/http-request.js';
export { MAX_PROBE_OUTPUT_BYTES, type ProbeRun } from './probes/probe-run.js';
export { resolveContainerPort } from './probes/resolve-port.js';
export { tcpProbe } from './probes/tcp-probe.js';
export { type CachedProbeResult, ResultsManager, runtimeContainerId } from './results-manager.js';
