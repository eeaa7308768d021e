/**
 * Container and init container statuses of the API from the runtime's (upstream
 * `convertToAPIContainerStatuses`): state, lastState from the previous instance, restart
 * count, start-failure reasons (CrashLoopBackOff, ImagePullBackOff, …), ready and started.
 *
 * @module
 */
import type { V1Container, V1ContainerState, V1ContainerStatus, V1Pod } from '@kubernetes/client-node';
import {
  type ContainerRuntimeStatus,
  findContainerStatusByName,
  isRestartableInitContainer,
  type PodStatus,
} from '@nodeagent/kubecontainer';
import type { PodStatusOptions } from './pod-status-options.js';
import { shouldContainerBeRestarted } from './restart-policy.js';

const CONTAINER_CREATING = 'ContainerCreating';
const POD_INITIALIZING = 'PodInitializing';

function isoDate(ms: number): Date {
  return new Date(ms);
}

function convert(
  cs: ContainerRuntimeStatus,
  old: V1ContainerStatus | undefined,
  runtimeName: string,
  specImage: string | undefined,
): V1ContainerStatus {
  const cid = `${runtimeName}://${cs.id}`;
  // Runtimes that echo the image ID we created the container from report no name: show the spec's.
  const image = /^sha256:[0-9a-f]+$/.test(cs.image) && specImage ? specImage : cs.image;
  const status: V1ContainerStatus = {
    name: cs.name,
    restartCount: cs.restartCount,
    image,
    imageID: cs.imageRef,
    containerID: cid,
    ready: false,
    state: {},
  };
  if (cs.state === 'running') status.state = { running: { startedAt: isoDate(cs.startedAt) } };
  else if (cs.state === 'created') status.state = { waiting: {} };
  else if (cs.state === 'exited') {
    status.state = {
      terminated: {
        exitCode: cs.exitCode,
        ...(cs.reason ? { reason: cs.reason } : {}),
        ...(cs.message ? { message: cs.message } : {}),
        startedAt: isoDate(cs.startedAt),
        finishedAt: isoDate(cs.finishedAt),
        containerID: cid,
      },
    };
  } else if (old?.state?.running != null) {
    status.state = {
      terminated: {
        reason: 'ContainerStatusUnknown',
        message: 'The container could not be located when the pod was terminated',
        exitCode: 137,
      },
    };
    status.restartCount = (old.restartCount ?? 0) + 1;
  } else status.state = { waiting: {} };
  return status;
}

/**
 * The API statuses of `containers` (regular ones sorted by name, init containers in spec
 * order), given the previous API statuses.
 */
export function convertContainerStatuses(
  pod: V1Pod,
  podStatus: PodStatus,
  previous: readonly V1ContainerStatus[],
  containers: readonly V1Container[],
  hasInit: boolean,
  isInit: boolean,
  options: PodStatusOptions,
): V1ContainerStatus[] {
  const oldByName = new Map(previous.map((s) => [s.name, s]));
  const defaultWaiting: V1ContainerState = {
    waiting: { reason: hasInit ? POD_INITIALIZING : CONTAINER_CREATING },
  };
  const statuses = new Map<string, V1ContainerStatus>();
  for (const c of containers) {
    const old = oldByName.get(c.name);
    let s: V1ContainerStatus = {
      name: c.name,
      image: c.image ?? '',
      imageID: '',
      state: defaultWaiting,
      ready: false,
      restartCount: 0,
    };
    if (old !== undefined) {
      if (old.state?.terminated != null) s = { ...old };
      else {
        s.restartCount = old.restartCount;
        if (old.lastState !== undefined) s.lastState = old.lastState;
      }
    }
    statuses.set(c.name, s);
  }
  // A container that was running and vanished from the runtime did terminate.
  for (const c of containers) {
    if (podStatus.containerStatuses.some((cs) => cs.name === c.name)) continue;
    const old = oldByName.get(c.name);
    if (old === undefined || old.state?.terminated != null || old.state?.running == null) continue;
    const s = statuses.get(c.name) as V1ContainerStatus;
    if (s.state?.waiting?.reason !== defaultWaiting.waiting?.reason || s.lastState?.terminated != null)
      continue;
    s.lastState = {
      terminated: {
        reason: 'ContainerStatusUnknown',
        message:
          'The container could not be located when the pod was deleted.  The container used to be Running',
        exitCode: 137,
      },
    };
    if (pod.metadata?.deletionTimestamp == null) s.restartCount += 1;
  }
  const seen = new Map<string, number>();
  for (const cs of podStatus.containerStatuses) {
    if (!statuses.has(cs.name)) continue;
    const n = seen.get(cs.name) ?? 0;
    if (n >= 2) continue;
    const converted = convert(
      cs,
      oldByName.get(cs.name),
      options.runtimeName ?? 'containerd',
      containers.find((c) => c.name === cs.name)?.image,
    );
    if (n === 0) statuses.set(cs.name, converted);
    else (statuses.get(cs.name) as V1ContainerStatus).lastState = converted.state as V1ContainerState;
    seen.set(cs.name, n + 1);
  }
  for (const c of containers) {
    if (isInit) {
      const s = findContainerStatusByName(podStatus, c.name);
      if (s !== undefined && s.state === 'exited' && s.exitCode === 0 && !isRestartableInitContainer(c))
        continue;
    }
    if (!shouldContainerBeRestarted(c, pod, podStatus)) continue;
    const cached = options.reasonCache?.get(pod.metadata?.uid ?? '', c.name);
    if (cached === undefined) continue;
    const s = statuses.get(c.name) as V1ContainerStatus;
    if (s.state?.terminated != null) s.lastState = s.state;
    s.state = { waiting: { reason: cached.reason, message: cached.message } };
  }
  // Readiness and started, as the probe manager would set them.
  for (const c of containers) {
    const s = statuses.get(c.name) as V1ContainerStatus;
    const running = s.state?.running != null;
    const cid = s.containerID ?? '';
    const id = cid.includes('://') ? cid.slice(cid.indexOf('://') + 3) : cid;
    const started = running && (c.startupProbe == null || options.probes?.startup?.(id) === 'success');
    s.started = started;
    const sidecarOrRegular = !isInit || isRestartableInitContainer(c);
    if (!sidecarOrRegular) {
      s.ready = s.state?.terminated?.exitCode === 0;
      continue;
    }
    s.ready = started && (c.readinessProbe == null || options.probes?.readiness?.(id) === 'success');
  }
  const out = containers.map((c) => statuses.get(c.name) as V1ContainerStatus);
  return isInit ? out : out.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
}
