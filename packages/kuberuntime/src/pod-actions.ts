/**
 * What to do to move a pod toward its spec (upstream `computePodActions` and
 * `computeInitContainerActions`): kill the pod, (re)create the sandbox, which init containers
 * (ordinary and sidecars, KEP-753) and containers to start, which to kill and why. Pure.
 *
 * @module
 */
import type { V1Container, V1Pod } from '@kubernetes/client-node';
import {
  type ContainerKillReason,
  type ContainerRuntimeStatus,
  findContainerStatusByName,
  isRestartableInitContainer,
  type PodStatus,
} from '@nodeagent/kubecontainer';
import { hashContainer } from './container-hash.js';
import {
  containerSucceeded,
  isInitContainerFailed,
  podRestartPolicy,
  shouldContainerBeRestarted,
  shouldRestartOnFailure,
} from './restart-policy.js';
import { podSandboxChanged } from './sandbox-changed.js';
import { newestFirst } from './status-order.js';

/** A running container to kill, and why. */
export interface ContainerToKill {
  /** CRI container ID. */
  readonly id: string;
  /** Container name. */
  readonly name: string;
  /** Its spec. */
  readonly container: V1Container;
  /** Human-readable message, as upstream's (e.g. "Container web definition changed, will be restarted"). */
  readonly message: string;
  /** Kill reason. */
  readonly reason: ContainerKillReason;
}

/** The actions {@link computePodActions} decided (upstream `podActions`). */
export interface PodActions {
  /** Stop every container and the sandbox first. */
  readonly killPod: boolean;
  /** Create a new sandbox. */
  readonly createSandbox: boolean;
  /** Current sandbox ID, `''` when none is usable. */
  readonly sandboxId: string;
  /** Attempt number of the sandbox to use / create. */
  readonly attempt: number;
  /** Indexes into `spec.initContainers` to start, in spec order. */
  readonly initContainersToStart: readonly number[];
  /** Indexes into `spec.containers` to start, in spec order. */
  readonly containersToStart: readonly number[];
  /** Running containers to kill first. */
  readonly containersToKill: readonly ContainerToKill[];
}

/** Probe results the decision consults (the prober's managers); unknown when absent. */
export interface PodActionsOptions {
  /** The liveness result of a running container: `failure` gets it restarted. */
  readonly liveness?: (containerId: string) => 'success' | 'failure' | undefined;
  /** The startup result of a running container: `failure` gets it restarted; sidecars wait for `success`. */
  readonly startup?: (containerId: string) => 'success' | 'failure' | undefined;
}

function containerChanged(container: V1Container, status: ContainerRuntimeStatus): boolean {
  return status.hash !== hashContainer(container);
}

function hasAnyRegularContainerCreated(pod: V1Pod, status: PodStatus): boolean {
  return (pod.spec?.containers ?? []).some((c) => {
    const s = findContainerStatusByName(status, c.name);
    return s !== undefined && (s.state === 'created' || s.state === 'running' || s.state === 'exited');
  });
}

interface Mutable {
  killPod: boolean;
  initContainersToStart: number[];
  containersToKill: Map<string, ContainerToKill>;
}

function kill(
  m: Mutable,
  status: ContainerRuntimeStatus,
  container: V1Container,
  message: string,
  reason: ContainerKillReason,
): void {
  m.containersToKill.set(status.id, { id: status.id, name: status.name, container, message, reason });
}

/** Init container decisions; returns whether the pod has been initialized (upstream `computeInitContainerActions`). */
function computeInitContainerActions(
  pod: V1Pod,
  status: PodStatus,
  m: Mutable,
  options: PodActionsOptions,
): boolean {
  const inits = pod.spec?.initContainers ?? [];
  if (inits.length === 0) return true;
  // A running or created app container means initialization already happened, even if init
  // container records were removed since.
  let podHasInitialized = (pod.spec?.containers ?? []).some((c) => {
    const s = findContainerStatusByName(status, c.name);
    return s !== undefined && (s.state === 'created' || s.state === 'running');
  });
  let previouslyInitialized = podHasInitialized;
  const restartOnFailure = shouldRestartOnFailure(pod);
  const toStart: number[] = [];
  // Walk backwards: completed init containers may have been removed, the last one known tells.
  for (let i = inits.length - 1; i >= 0; i--) {
    const container = inits[i] as V1Container;
    const sidecar = isRestartableInitContainer(container);
    const s = findContainerStatusByName(status, container.name);
    if (s === undefined) {
      if (previouslyInitialized && sidecar) toStart.push(i);
      continue;
    }
    if (previouslyInitialized && !sidecar) continue;
    switch (s.state) {
      case 'created':
        // Create and start happen in one step; a created init container failed to start.
        toStart.push(i);
        break;
      case 'running': {
        if (!sidecar) break;
        if (container.startupProbe != null) {
          const startup = options.startup?.(s.id);
          if (startup === undefined) break;
          if (startup === 'failure') {
            kill(m, s, container, `Init container ${container.name} failed startup probe`, 'StartupProbe');
            toStart.push(i);
            break;
          }
        }
        if (i === inits.length - 1) podHasInitialized = true;
        else if (!previouslyInitialized) toStart.push(i + 1);
        if (containerChanged(container, s)) {
          kill(m, s, container, `Init container ${container.name} definition changed`, '');
          toStart.push(i);
          break;
        }
        if (container.livenessProbe != null && options.liveness?.(s.id) === 'failure') {
          kill(m, s, container, `Init container ${container.name} failed liveness probe`, 'LivenessProbe');
          toStart.push(i);
        }
        break;
      }
      case 'exited':
        if (sidecar) {
          toStart.push(i);
          break;
        }
        if (isInitContainerFailed(s)) {
          if (!restartOnFailure) {
            m.killPod = true;
            m.initContainersToStart = [];
            return false;
          }
          toStart.push(i);
          break;
        }
        if (i === inits.length - 1) podHasInitialized = true;
        else toStart.push(i + 1);
        break;
      default:
        if (!sidecar && !restartOnFailure) {
          m.killPod = true;
          m.initContainersToStart = [];
          return false;
        }
        kill(
          m,
          s,
          container,
          `Init container is in "${s.state}" state, try killing it before restart`,
          'Unknown',
        );
        toStart.push(i);
    }
    previouslyInitialized = true;
  }
  if (!previouslyInitialized) toStart.push(0);
  m.initContainersToStart = toStart.reverse();
  return podHasInitialized;
}

function freeze(
  m: Mutable,
  base: { createSandbox: boolean; sandboxId: string; attempt: number },
  containersToStart: number[],
): PodActions {
  return {
    killPod: m.killPod,
    createSandbox: base.createSandbox,
    sandboxId: base.sandboxId,
    attempt: base.attempt,
    initContainersToStart: m.initContainersToStart,
    containersToStart,
    containersToKill: [...m.containersToKill.values()],
  };
}

/**
 * Decides what to do with a pod given its runtime status (upstream `computePodActions`).
 *
 * @example
 * ```ts
 * const actions = computePodActions(pod, podStatus);
 * if (actions.createSandbox) console.log('new sandbox, attempt', actions.attempt);
 * ```
 */
export function computePodActions(
  pod: V1Pod,
  rawStatus: PodStatus,
  options: PodActionsOptions = {},
): PodActions {
  const status = newestFirst(rawStatus);
  const sandbox = podSandboxChanged(pod, status);
  const m: Mutable = { killPod: sandbox.changed, initContainersToStart: [], containersToKill: new Map() };
  const base = { createSandbox: sandbox.changed, sandboxId: sandbox.sandboxId, attempt: sandbox.attempt };
  const containers = pod.spec?.containers ?? [];

  if (sandbox.changed) {
    // A finished Never pod whose sandbox is gone stays finished: just make sure it is killed.
    if (!shouldRestartOnFailure(pod) && sandbox.attempt !== 0 && status.containerStatuses.length !== 0) {
      return freeze(m, { ...base, createSandbox: false }, []);
    }
    const toStart: number[] = [];
    containers.forEach((c, idx) => {
      if (podRestartPolicy(pod) === 'OnFailure' && containerSucceeded(c, status)) return;
      toStart.push(idx);
    });
    if (hasAnyRegularContainerCreated(pod, status) && toStart.length === 0) {
      return freeze(m, { ...base, createSandbox: false }, []);
    }
    if ((pod.spec?.initContainers ?? []).length !== 0) {
      m.initContainersToStart = [0];
      return freeze(m, base, []);
    }
    return freeze(m, base, toStart);
  }

  const initialized = computeInitContainerActions(pod, status, m, options);
  if (m.killPod || !initialized) return freeze(m, base, []);

  const toStart: number[] = [];
  let keepCount = 0;
  containers.forEach((container, idx) => {
    const s = findContainerStatusByName(status, container.name);
    if (s === undefined || s.state !== 'running') {
      if (shouldContainerBeRestarted(container, pod, status)) {
        toStart.push(idx);
        if (s !== undefined && s.state === 'unknown') {
          kill(
            m,
            s,
            container,
            `Container is in "${s.state}" state, try killing it before restart`,
            'Unknown',
          );
        }
      }
      return;
    }
    let message: string;
    let reason: ContainerKillReason = '';
    let restart = shouldRestartOnFailure(pod);
    if (containerChanged(container, s)) {
      message = `Container ${container.name} definition changed`;
      restart = true; // the spec changed: restart whatever the policy
    } else if (options.liveness?.(s.id) === 'failure') {
      message = `Container ${container.name} failed liveness probe`;
      reason = 'LivenessProbe';
    } else if (options.startup?.(s.id) === 'failure') {
      message = `Container ${container.name} failed startup probe`;
      reason = 'StartupProbe';
    } else {
      keepCount++;
      return;
    }
    if (restart) {
      message = `${message}, will be restarted`;
      toStart.push(idx);
    }
    kill(m, s, container, message, reason);
  });

  if (keepCount === 0 && toStart.length === 0) {
    m.killPod = true;
    // Sidecars must not keep a finished pod alive.
    m.initContainersToStart = [];
  }
  return freeze(m, base, toStart);
}
