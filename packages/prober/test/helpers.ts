// Builders shared by the prober tests: pods with probes, running statuses, a manager on a fake clock.
import type { V1Container, V1ContainerStatus, V1Pod, V1PodStatus, V1Probe } from '@kubernetes/client-node';
import { FakeClock } from '@nodeagent/core/testing';
import { ProbeManager, type ProbeManagerOptions } from '../src/index.js';
import { FakeCommandRunner, RecordingEventRecorder, StaticPodStatusProvider } from '../src/testing.js';

export const POD_UID = 'pod-uid-1';
export const CONTAINER = 'app';
export const CID = 'containerd://c1';

export const execProbe = (extra: Partial<V1Probe> = {}): V1Probe => ({
  exec: { command: ['/bin/true'] },
  periodSeconds: 1,
  ...extra,
});

export function podWith(
  probes: Partial<Pick<V1Container, 'livenessProbe' | 'readinessProbe' | 'startupProbe'>>,
  extra: { pod?: Partial<V1Pod>; container?: Partial<V1Container>; initContainers?: V1Container[] } = {},
): V1Pod {
  return {
    metadata: { name: 'web', namespace: 'default', uid: POD_UID, ...(extra.pod?.metadata ?? {}) },
    spec: {
      restartPolicy: 'Always',
      containers: [{ name: CONTAINER, image: 'busybox', ...probes, ...(extra.container ?? {}) }],
      ...(extra.initContainers ? { initContainers: extra.initContainers } : {}),
      ...(extra.pod?.spec ?? {}),
    },
  };
}

export function runningStatus(
  startedAt: Date,
  opts: { started?: boolean; containerID?: string; name?: string; init?: boolean } = {},
): V1PodStatus {
  const cs: V1ContainerStatus = {
    name: opts.name ?? CONTAINER,
    containerID: opts.containerID ?? CID,
    image: 'busybox',
    imageID: '',
    ready: false,
    restartCount: 0,
    state: { running: { startedAt } },
    ...(opts.started === undefined ? {} : { started: opts.started }),
  };
  return {
    phase: 'Running',
    podIP: '127.0.0.1',
    ...(opts.init ? { initContainerStatuses: [cs], containerStatuses: [] } : { containerStatuses: [cs] }),
  };
}

export interface Harness {
  clock: FakeClock;
  statuses: StaticPodStatusProvider;
  runner: FakeCommandRunner;
  recorder: RecordingEventRecorder;
  manager: ProbeManager;
}

export async function harness(options: Partial<ProbeManagerOptions> = {}): Promise<Harness> {
  const clock = new FakeClock();
  const statuses = new StaticPodStatusProvider();
  const runner = new FakeCommandRunner();
  const recorder = new RecordingEventRecorder();
  const manager = new ProbeManager({
    statusProvider: statuses,
    commandRunner: runner,
    recorder: recorder.record,
    clock,
    random: () => 0,
    ...options,
  });
  await manager.start();
  return { clock, statuses, runner, recorder, manager };
}

/** A started-at far enough in the past that no initial delay applies, but after the manager started. */
export function justStarted(clock: FakeClock): Date {
  return new Date(clock.now());
}

/** A started, running container status (what the status manager shows once `started` is set). */
export function startedContainer(name: string, containerID: string, startedAt: Date): V1ContainerStatus {
  return {
    name,
    containerID,
    image: 'x',
    imageID: '',
    ready: false,
    restartCount: 0,
    started: true,
    state: { running: { startedAt } },
  };
}
