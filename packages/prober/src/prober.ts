/**
 * One probe of one container (upstream `prober.go`): build the action for the handler, run it
 * with up to 3 attempts while the action itself errors, map the outcome to a result and record
 * the kubelet's events.
 *
 * @module
 */
import type { V1Container, V1Pod, V1PodStatus, V1Probe } from '@kubernetes/client-node';
import type { Clock, Logger } from '@nodeagent/core';
import { expandContainerCommandOnlyStatic } from '@nodeagent/kubecontainer';
import { type CommandRunner, ExecTimeoutError } from './command-runner.js';
import type { ProbeEventReason, ProbeEventRecorder } from './event-recorder.js';
import type { ProbeType } from './probe-types.js';
import { probeTypeLabel } from './probe-types.js';
import { execProbe } from './probes/exec-probe.js';
import { grpcProbe } from './probes/grpc-probe.js';
import { httpProbeWith } from './probes/http-probe.js';
import { type HTTPProbeRequest, newHTTPProbeRequest } from './probes/http-request.js';
import { ProbeCancel } from './probes/probe-cancel.js';
import { errored, type ProbeRun } from './probes/probe-run.js';
import { resolveContainerPort } from './probes/resolve-port.js';
import { tcpProbeWith } from './probes/tcp-probe.js';
import { runtimeContainerId } from './results-manager.js';

/** Upstream `maxProbeRetries`: attempts while the probe action returns an error. */
export const MAX_PROBE_ATTEMPTS = 3;

/** What a prober needs. @internal */
export interface ProberDeps {
  readonly clock: Clock;
  readonly logger: Logger;
  readonly userAgent: string;
  readonly runtimeRequestTimeoutMs: number;
  readonly commandRunner: CommandRunner | undefined;
  readonly recorder: ProbeEventRecorder | undefined;
}

/** One probe to run. @internal */
export interface ProbeTarget {
  readonly type: ProbeType;
  readonly pod: V1Pod;
  readonly container: V1Container;
  readonly probe: V1Probe;
  readonly timeoutSeconds: number;
  /** Set for a malformed probe: every run is this error. */
  readonly invalid: string | undefined;
  /**
   * The worker's memo of what does not change between its runs (its container and probe are
   * fixed): the built HTTP request for the pod IP it was built for.
   */
  readonly memo?: ProbeMemo;
}

/** What a worker keeps between probe runs. @internal */
export interface ProbeMemo {
  /** The `httpGet` request and the pod IP it targets. */
  http?: { readonly podIP: string; readonly request: HTTPProbeRequest };
}

/** What {@link probeOnce} decided. @internal */
export interface ProbeVerdict {
  readonly result: 'success' | 'failure';
  /** Set when the probe errored: the worker discards the result. */
  readonly error: Error | undefined;
  /** The last run (outcome and output), for observers. */
  readonly run: ProbeRun;
}

/**
 * Runs `target` against `status` / `containerID` (upstream `prober.probe`); `cancel` is the
 * worker's light cancellation for `httpGet` and `tcpSocket` probes (one that follows `signal`
 * when not given). @internal
 */
export async function probeOnce(
  deps: ProberDeps,
  target: ProbeTarget,
  status: V1PodStatus,
  containerID: string,
  signal: AbortSignal,
  cancel?: ProbeCancel,
): Promise<ProbeVerdict> {
  if (cancel !== undefined) return probeWith(deps, target, status, containerID, signal, cancel);
  const follower = ProbeCancel.fromSignal(signal);
  try {
    return await probeWith(deps, target, status, containerID, signal, follower.cancel);
  } finally {
    follower.detach();
  }
}

function probeWith(
  deps: ProberDeps,
  target: ProbeTarget,
  status: V1PodStatus,
  containerID: string,
  signal: AbortSignal,
  cancel: ProbeCancel,
): Promise<ProbeVerdict> {
  // The steady state (one attempt that did not error) without an async frame per probe.
  return runAction(deps, target, status, containerID, signal, cancel).then((run) =>
    run.error === undefined || signal.aborted || cancel.aborted
      ? verdictOf(deps, target, run)
      : retry(deps, target, status, containerID, signal, cancel, run),
  );
}

/** Attempts 2 and 3 after a probe error (upstream retries while the action errors). */
async function retry(
  deps: ProberDeps,
  target: ProbeTarget,
  status: V1PodStatus,
  containerID: string,
  signal: AbortSignal,
  cancel: ProbeCancel,
  first: ProbeRun,
): Promise<ProbeVerdict> {
  let run = first;
  for (
    let attempt = 1;
    attempt < MAX_PROBE_ATTEMPTS && run.error !== undefined && !signal.aborted && !cancel.aborted;
    attempt++
  ) {
    run = await runAction(deps, target, status, containerID, signal, cancel);
  }
  return verdictOf(deps, target, run);
}

function verdictOf(deps: ProberDeps, target: ProbeTarget, run: ProbeRun): ProbeVerdict {
  if (run.error === undefined && run.outcome === 'success')
    return { result: 'success', error: undefined, run };
  const label = probeTypeLabel(target.type);
  if (run.error !== undefined) {
    record(
      deps,
      target,
      'Unhealthy',
      `${label} probe errored and resulted in ${run.outcome} state: ${run.error.message}`,
    );
    return { result: 'failure', error: run.error, run };
  }
  switch (run.outcome) {
    case 'warning':
      record(deps, target, 'ProbeWarning', `${label} probe warning: ${run.output}`);
      return { result: 'success', error: undefined, run };
    case 'failure':
      record(deps, target, 'Unhealthy', `${label} probe failed: ${run.output}`);
      return { result: 'failure', error: undefined, run };
    default:
      return { result: 'failure', error: undefined, run };
  }
}

/** Upstream `format.Pod`: `name_namespace(uid)`. */
export function formatPod(pod: V1Pod): string {
  return `${pod.metadata?.name ?? ''}_${pod.metadata?.namespace ?? ''}(${pod.metadata?.uid ?? ''})`;
}

/**
 * One attempt. `httpGet` and `tcpSocket` (the common probes) are started without an async
 * frame: their promises never reject here (a failure to start is a probe error, as before).
 */
function runAction(
  deps: ProberDeps,
  target: ProbeTarget,
  status: V1PodStatus,
  containerID: string,
  signal: AbortSignal,
  cancel: ProbeCancel,
): Promise<ProbeRun> {
  if (target.invalid !== undefined) return Promise.resolve(errored(target.invalid));
  const { probe, container } = target;
  if (probe.exec != null || (probe.httpGet == null && probe.tcpSocket == null)) {
    return runOtherAction(deps, target, status, containerID, signal);
  }
  const timeoutMs = target.timeoutSeconds * 1000;
  const podIP = status.podIP ?? '';
  try {
    if (probe.httpGet != null) {
      let request = target.memo?.http?.podIP === podIP ? target.memo.http.request : undefined;
      if (request === undefined) {
        request = newHTTPProbeRequest(probe.httpGet, container, podIP, deps.userAgent);
        if (target.memo !== undefined) target.memo.http = { podIP, request };
      }
      return httpProbeWith(request, timeoutMs, cancel, true);
    }
    const tcp = probe.tcpSocket as NonNullable<V1Probe['tcpSocket']>;
    const port = resolveContainerPort(tcp.port, container);
    return tcpProbeWith(tcp.host || podIP, port, timeoutMs, cancel, true);
  } catch (error) {
    return Promise.resolve(errored(messageOf(error)));
  }
}

/** `exec`, `grpc` and a probe without a handler. */
async function runOtherAction(
  deps: ProberDeps,
  target: ProbeTarget,
  status: V1PodStatus,
  containerID: string,
  signal: AbortSignal,
): Promise<ProbeRun> {
  const { probe, container } = target;
  const timeoutMs = target.timeoutSeconds * 1000;
  const podIP = status.podIP ?? '';
  try {
    if (probe.exec != null) {
      if (deps.commandRunner === undefined)
        return errored('exec probes need a commandRunner (none configured)');
      const command = expandContainerCommandOnlyStatic((probe.exec.command ?? []).map(String), container.env);
      const runner = deps.commandRunner;
      return await withDeadline(
        deps,
        timeoutMs,
        signal,
        (s) => execProbe(runner, runtimeContainerId(containerID), command, timeoutMs, s),
        () => ({ outcome: 'failure', output: new ExecTimeoutError(command, timeoutMs).message }),
      );
    }
    if (probe.grpc != null) {
      const port = Number(probe.grpc.port ?? 0);
      return await grpcProbe(
        podIP,
        port,
        String(probe.grpc.service ?? ''),
        timeoutMs,
        deps.userAgent,
        signal,
      );
    }
  } catch (error) {
    return errored(messageOf(error));
  }
  return errored(`missing probe handler for ${formatPod(target.pod)}:${container.name}`);
}

/**
 * Gives `fn` a signal that aborts at the probe timeout plus the runtime request timeout (the
 * kubelet's ExecSync deadline) or with `parent`; a runner that never answers is cut off there.
 */
async function withDeadline(
  deps: ProberDeps,
  timeoutMs: number,
  parent: AbortSignal,
  fn: (signal: AbortSignal) => Promise<ProbeRun>,
  onTimeout: () => ProbeRun,
): Promise<ProbeRun> {
  const controller = new AbortController();
  let timedOut = false;
  let onGiveUp: () => void = () => {};
  const gaveUp = new Promise<void>((resolve) => {
    onGiveUp = resolve;
  });
  const timer = deps.clock.setTimeout(() => {
    timedOut = true;
    controller.abort(new Error('context deadline exceeded'));
    onGiveUp();
  }, timeoutMs + deps.runtimeRequestTimeoutMs);
  const onAbort = (): void => {
    controller.abort(parent.reason);
    onGiveUp();
  };
  parent.addEventListener('abort', onAbort, { once: true });
  try {
    const work = fn(controller.signal);
    work.catch(() => {});
    const result = await Promise.race([work, gaveUp.then(() => undefined)]);
    // Past the deadline the runner's own answer (often the abort) does not matter: it timed out.
    if (timedOut) return onTimeout();
    return result ?? errored('context canceled');
  } finally {
    timer.cancel();
    parent.removeEventListener('abort', onAbort);
  }
}

function record(deps: ProberDeps, target: ProbeTarget, reason: ProbeEventReason, message: string): void {
  if (deps.recorder === undefined) return;
  try {
    deps.recorder(target.pod, target.container, 'Warning', reason, message);
  } catch (error) {
    deps.logger.error({ err: error, reason, message }, 'probe event recorder failed');
  }
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
