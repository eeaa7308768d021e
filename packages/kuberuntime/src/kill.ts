/**
 * Graceful kill (upstream `killContainer`, `killContainersWithSyncResult`,
 * `killPodWithSyncResult`): preStop hook within the grace period, StopContainer with what is
 * left (at least 2 s), app containers in parallel, sidecars after them in reverse order, then
 * the sandboxes.
 *
 * @module
 */
import type { V1Container, V1Pod } from '@kubernetes/client-node';
import type { Clock, Logger } from '@nodeagent/core';
import { type CriClient, isNotFound } from '@nodeagent/cri';
import {
  type ContainerKillReason,
  type ContainerRuntimeStatus,
  MINIMUM_GRACE_PERIOD_SECONDS,
  type PodStatus,
  terminationGracePeriodSeconds,
} from '@nodeagent/kubecontainer';
import { errorMessage, SyncErrorReason, SyncStepError } from './errors.js';
import type { RuntimeEventRecorder } from './event-recorder.js';
import { restoreSpecsFromLabels } from './labels.js';
import { type HandlerRunnerDeps, runLifecycleHandler } from './lifecycle-handlers.js';
import { PodSyncResult } from './sync-result.js';
import { TerminationOrdering } from './termination-ordering.js';

/** What the kill path needs. */
export interface KillDeps {
  /** The runtime service (StopContainer, StopPodSandbox, ExecSync). */
  readonly cri: Pick<CriClient, 'runtime'>;
  /** Grace periods and hook timeouts run on it. */
  readonly clock: Clock;
  /** Kill progress. */
  readonly logger: Logger;
  /** CRI deadline added to the grace period of StopContainer, ms. */
  readonly runtimeRequestTimeoutMs: number;
  /** Handler runner overrides (HTTP client). */
  readonly httpGet?: HandlerRunnerDeps['httpGet'];
  /** `Killing` and `FailedPreStopHook` events; must not throw. @default none */
  readonly recorder?: RuntimeEventRecorder;
}

/** The spec of container `name` among the pod's containers and init containers. */
export function containerSpec(pod: V1Pod, name: string): V1Container | undefined {
  return [...(pod.spec?.containers ?? []), ...(pod.spec?.initContainers ?? [])].find((c) => c.name === name);
}

async function runPreStop(
  deps: KillDeps,
  pod: V1Pod,
  status: ContainerRuntimeStatus,
  container: V1Container,
  graceSeconds: number,
  podIp: string,
): Promise<number> {
  const handler = container.lifecycle?.preStop;
  if (handler == null) return 0;
  const log = deps.logger;
  const start = deps.clock.now();
  const abort = new AbortController();
  const hook = runLifecycleHandler(
    { runtime: deps.cri.runtime, clock: deps.clock, ...(deps.httpGet ? { httpGet: deps.httpGet } : {}) },
    status.id,
    container,
    handler,
    podIp,
    abort.signal,
  ).then(
    () => log.debug({ pod: pod.metadata?.name, container: container.name }, 'PreStop hook completed'),
    (err: unknown) => {
      if (!abort.signal.aborted) {
        log.warn(
          { pod: pod.metadata?.name, container: container.name, err: errorMessage(err) },
          'PreStop hook failed',
        );
        // Not the hook's output: it may hold secrets (as upstream).
        deps.recorder?.(pod, container, 'Warning', 'FailedPreStopHook', 'PreStopHook failed');
      }
    },
  );
  let timer: { cancel(): void } | undefined;
  await Promise.race([
    hook,
    new Promise<void>((resolve) => {
      timer = deps.clock.setTimeout(() => {
        log.info(
          { pod: pod.metadata?.name, container: container.name, graceSeconds },
          'PreStop hook not completed in grace period',
        );
        abort.abort(new Error('grace period over'));
        resolve();
      }, graceSeconds * 1000);
    }),
  ]);
  timer?.cancel();
  return Math.floor((deps.clock.now() - start) / 1000);
}

/** Options of {@link killContainer}. */
export interface KillContainerOptions {
  /** Event message; default `Stopping container <name>`. */
  readonly message?: string;
  /** Why (probe kills use the probe's grace period). @default "" */
  readonly reason?: ContainerKillReason;
  /** Replaces the computed grace period, seconds. */
  readonly gracePeriodOverrideSeconds?: number | undefined;
  /** Sidecar ordering of a whole-pod kill. */
  readonly ordering?: TerminationOrdering | undefined;
  /** Pod IP for httpGet hooks. @default "" */
  readonly podIp?: string;
}

/**
 * Kills one container gracefully. Without `pod` (an orphan after an agent restart) the pod and
 * container are restored from the container's labels and annotations.
 * @throws SyncStepError KillContainerError when StopContainer fails (NOT_FOUND counts as stopped)
 */
export async function killContainer(
  deps: KillDeps,
  pod: V1Pod | undefined,
  status: ContainerRuntimeStatus,
  options: KillContainerOptions = {},
): Promise<void> {
  let p: V1Pod;
  let spec: V1Container | undefined;
  if (pod !== undefined) {
    p = pod;
    spec = containerSpec(pod, status.name);
    if (spec === undefined) {
      throw new SyncStepError(
        SyncErrorReason.KillContainerError,
        `failed to get containerSpec "${status.name}" (id="${status.id}") in pod "${pod.metadata?.name ?? ''}" when killing container for reason "${options.message ?? ''}"`,
      );
    }
  } else {
    const restored = restoreSpecsFromLabels(status.labels, status.annotations);
    p = restored.pod;
    spec = restored.container;
  }
  let grace = terminationGracePeriodSeconds(p, spec, options.reason ?? '');
  const message = options.message || `Stopping container ${spec.name}`;
  deps.logger.info({ pod: p.metadata?.name, container: spec.name, containerId: status.id }, message);
  deps.recorder?.(p, spec, 'Normal', 'Killing', message);
  if (options.gracePeriodOverrideSeconds !== undefined) grace = options.gracePeriodOverrideSeconds;
  if (spec.lifecycle?.preStop != null && grace > 0) {
    grace -= await runPreStop(deps, p, status, spec, grace, options.podIp ?? '');
  }
  if (options.ordering !== undefined && grace > 0) {
    grace -= await options.ordering.waitForTurn(spec.name, grace);
  }
  if (grace < MINIMUM_GRACE_PERIOD_SECONDS) grace = MINIMUM_GRACE_PERIOD_SECONDS;
  deps.logger.debug(
    { pod: p.metadata?.name, container: spec.name, graceSeconds: grace },
    'Killing container with a grace period',
  );
  try {
    await deps.cri.runtime.stopContainer(
      { containerId: status.id, timeout: BigInt(grace) },
      { timeoutMs: deps.runtimeRequestTimeoutMs + grace * 1000 },
    );
  } catch (err) {
    if (!isNotFound(err)) {
      throw new SyncStepError(SyncErrorReason.KillContainerError, errorMessage(err), { cause: err });
    }
  }
  options.ordering?.containerTerminated(spec.name);
}

/**
 * Kills a pod: every running container (app containers in parallel, sidecars after them in
 * reverse order), then stops every sandbox. Failures are reported per step, never thrown.
 */
export async function killPod(
  deps: KillDeps,
  pod: V1Pod | undefined,
  status: PodStatus,
  gracePeriodOverrideSeconds?: number,
): Promise<PodSyncResult> {
  const result = new PodSyncResult();
  const running = status.containerStatuses.filter((c) => c.state === 'running');
  const ordering =
    pod === undefined
      ? undefined
      : new TerminationOrdering(
          pod,
          running.map((c) => c.name),
          deps.clock,
        );
  const podIp = status.ips[0] ?? '';
  await Promise.all(
    running.map(async (c) => {
      const step = result.add('KillContainer', c.name);
      try {
        await killContainer(deps, pod, c, {
          reason: 'Unknown',
          gracePeriodOverrideSeconds,
          ordering,
          podIp,
        });
      } catch (err) {
        step.error =
          err instanceof SyncStepError
            ? err
            : new SyncStepError(SyncErrorReason.KillContainerError, errorMessage(err));
      }
    }),
  );
  const sandboxStep = result.add('KillPodSandbox', status.id);
  for (const sandbox of status.sandboxStatuses) {
    try {
      await deps.cri.runtime.stopPodSandbox({ podSandboxId: sandbox.id });
    } catch (err) {
      if (!isNotFound(err)) {
        sandboxStep.error = new SyncStepError(SyncErrorReason.KillPodSandboxError, errorMessage(err), {
          cause: err,
        });
      }
    }
  }
  return result;
}
