// The whole agent in process with its embedded defaults (mini-apiserver + FakeRuntime), on
// real time with short settings: pods reach Running with an IP, crash loops back off with a
// growing restart count, graceful deletes stop containers and remove the pod, the Node is
// Ready, the Lease is renewed, /healthz answers, and orphaned runtime pods are stopped.
import type { V1Lease, V1Node, V1Pod } from '@kubernetes/client-node';
import { ContainerState, PodSandboxState } from '@nodeagent/cri';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RunningAgent, runAgent } from '../src/agent.js';
import { EMBEDDED_BUSYBOX_IMAGE } from '../src/embedded-runtime.js';
import { FAST_AGENT_TIMINGS, makePod, shContainer, testLogger, waitFor } from './helpers.js';

const NODE = 'test-node';
const IMAGE = EMBEDDED_BUSYBOX_IMAGE;

describe('reference agent with embedded defaults', () => {
  let agent: RunningAgent;
  const store = () => {
    if (!agent.apiServer) throw new Error('no embedded API server');
    return agent.apiServer.store;
  };
  const getPod = (name: string) => store().tryGet('pods', 'default', name) as V1Pod | undefined;
  const createPod = (pod: V1Pod) => agent.api.create('/api/v1/namespaces/default/pods', pod);

  beforeAll(async () => {
    agent = await runAgent({
      nodeName: NODE,
      podCidr: '10.77.0.0/24',
      nodeIp: '192.0.2.10',
      healthPort: 0,
      ...FAST_AGENT_TIMINGS,
      leaseDurationSeconds: 1,
      logger: testLogger(),
    });
  });
  afterAll(async () => {
    await agent?.stop();
  });

  it('registers the Node as Ready with the four conditions, capacity, allocatable, addresses, nodeInfo and podCIDR', async () => {
    const node = await waitFor('Ready node', () => {
      const n = store().tryGet('nodes', '', NODE) as V1Node | undefined;
      return n?.status?.conditions?.find((c) => c.type === 'Ready')?.status === 'True' ? n : undefined;
    });
    expect(node.metadata?.labels).toMatchObject({
      'kubernetes.io/hostname': NODE,
      'kubernetes.io/os': 'linux',
    });
    expect(node.spec?.podCIDR).toBe('10.77.0.0/24');
    expect(node.status?.capacity?.pods).toBe('110');
    expect(Number(node.status?.capacity?.cpu)).toBeGreaterThan(0);
    expect(node.status?.capacity?.memory).toMatch(/^\d+(Ki|Mi|Gi)?$/);
    // allocatable = capacity − the 100Mi hard eviction threshold (no reservations given)
    expect(node.status?.allocatable?.memory).not.toBe(node.status?.capacity?.memory);
    expect(node.status?.addresses).toContainEqual({ type: 'InternalIP', address: '192.0.2.10' });
    expect(node.status?.nodeInfo?.kubeletVersion).toBe('v1.36.0-nodeagent');
    expect(node.status?.nodeInfo?.containerRuntimeVersion).toBe('fakeRuntime://0.1.0');
    expect(node.status?.conditions?.map((c) => `${c.type}=${c.status}:${c.reason}`)).toEqual([
      'MemoryPressure=False:KubeletHasSufficientMemory',
      'DiskPressure=False:KubeletHasNoDiskPressure',
      'PIDPressure=False:KubeletHasSufficientPID',
      'Ready=True:KubeletReady',
    ]);
    expect(node.status?.daemonEndpoints?.kubeletEndpoint?.Port).toBe(10250);
  });

  it('renews the Lease in kube-node-lease, owned by the Node', async () => {
    const first = await waitFor(
      'lease',
      () => store().tryGet('leases', 'kube-node-lease', NODE) as V1Lease | undefined,
    );
    const firstRenew = String(first.spec?.renewTime);
    expect(first.spec?.holderIdentity).toBe(NODE);
    expect(first.spec?.leaseDurationSeconds).toBe(1);
    const renewed = await waitFor('a later renewTime', () => {
      const l = store().tryGet('leases', 'kube-node-lease', NODE) as V1Lease | undefined;
      return l && String(l.spec?.renewTime) !== firstRenew ? l : undefined;
    });
    expect(String(renewed.spec?.renewTime) > firstRenew).toBe(true);
    expect(renewed.metadata?.ownerReferences?.[0]).toMatchObject({ kind: 'Node', name: NODE });
  });

  it('runs a pod to Running with ready containers, a pod IP and the host IP', async () => {
    await createPod(
      makePod(
        'web',
        NODE,
        [shContainer('app', IMAGE, 'sleep 3600'), shContainer('side', IMAGE, 'while true; do sleep 1; done')],
        {
          initContainers: [shContainer('init', IMAGE, 'echo init; exit 0')],
        },
      ),
    );
    const pod = await waitFor('web Running and ready', () => {
      const p = getPod('web');
      return p?.status?.phase === 'Running' && p.status.containerStatuses?.every((c) => c.ready)
        ? p
        : undefined;
    });
    expect(pod.status?.podIP).toMatch(/^10\.77\.0\.\d+$/);
    expect(pod.status?.hostIP).toBe('192.0.2.10');
    expect(pod.status?.containerStatuses?.map((c) => c.name).sort()).toEqual(['app', 'side']);
    expect(pod.status?.initContainerStatuses?.[0]?.state?.terminated).toMatchObject({
      exitCode: 0,
      reason: 'Completed',
    });
    expect(pod.status?.conditions?.find((c) => c.type === 'Ready')?.status).toBe('True');
  });

  it('backs off a crash-looping container with a growing restart count', async () => {
    await createPod(makePod('crasher', NODE, [shContainer('crash', IMAGE, 'echo boom; exit 3')]));
    const seen: number[] = [];
    let sawBackOff = false;
    await waitFor(
      'restartCount >= 3 with CrashLoopBackOff seen',
      () => {
        const cs = getPod('crasher')?.status?.containerStatuses?.[0];
        if (cs === undefined) return false;
        if (seen.at(-1) !== cs.restartCount) seen.push(cs.restartCount);
        if (cs.state?.waiting?.reason === 'CrashLoopBackOff') {
          sawBackOff = true;
          expect(cs.state.waiting.message).toMatch(
            /^back-off 1s restarting failed container=crash pod=crasher_default/,
          );
          expect(cs.lastState?.terminated).toMatchObject({ exitCode: 3, reason: 'Error' });
        }
        return sawBackOff && cs.restartCount >= 3;
      },
      15_000,
    );
    // Restart counts only grow.
    expect([...seen].sort((a, b) => a - b)).toEqual(seen);
    expect(getPod('crasher')?.status?.phase).toBe('Running');
  });

  it('runs a pod to completion: Succeeded, its worker finishes, and a later delete removes it', async () => {
    await createPod(
      makePod('job', NODE, [shContainer('work', IMAGE, 'echo hi; exit 0')], { restartPolicy: 'Never' }),
    );
    const pod = await waitFor('job Succeeded', () => {
      const p = getPod('job');
      return p?.status?.phase === 'Succeeded' ? p : undefined;
    });
    expect(pod.status?.containerStatuses?.[0]?.state?.terminated).toMatchObject({
      exitCode: 0,
      reason: 'Completed',
    });
    const uid = pod.metadata?.uid ?? '';
    await waitFor('worker finished', () => agent.workers.getPodSyncStatus(uid)?.finished);
    // Deleted once finished: the status manager removes it at once (grace 0, UID precondition).
    await agent.api.delete('/api/v1/namespaces/default/pods/job', { gracePeriodSeconds: 30 });
    await waitFor('job removed', () => (getPod('job') === undefined ? true : undefined));
  });

  it('deletes a pod gracefully: containers stopped within the grace period, then the pod is removed', async () => {
    const fake = agent.fakeRuntime;
    if (!fake) throw new Error('no fake runtime');
    await createPod(makePod('victim', NODE, [shContainer('app', IMAGE, 'sleep 3600')]));
    const running = await waitFor('victim Running', () => {
      const p = getPod('victim');
      return p?.status?.phase === 'Running' ? p : undefined;
    });
    const uid = running.metadata?.uid ?? '';
    fake.clearCalls();
    await agent.api.delete('/api/v1/namespaces/default/pods/victim', { gracePeriodSeconds: 3 });
    expect(getPod('victim')?.metadata?.deletionTimestamp).toBeDefined();
    await waitFor('victim gone from the API', () => getPod('victim') === undefined);
    const stops = fake.calls('StopContainer').map((c) => (c.request as { timeout: bigint | number }).timeout);
    expect(stops.map(Number)).toEqual([3]);
    const containers = fake.containers().filter((c) => c.labels['io.kubernetes.pod.uid'] === uid);
    expect(containers.length).toBeGreaterThan(0);
    expect(containers.every((c) => c.state === ContainerState.CONTAINER_EXITED)).toBe(true);
    const sandboxes = fake.sandboxes().filter((s) => s.metadata?.uid === uid);
    expect(sandboxes.every((s) => s.state === PodSandboxState.SANDBOX_NOTREADY)).toBe(true);
  });

  it('stops a pod found only in the runtime (left behind by an earlier agent)', async () => {
    const fake = agent.fakeRuntime;
    if (!fake) throw new Error('no fake runtime');
    const labels = {
      'io.kubernetes.pod.uid': 'ghost-uid',
      'io.kubernetes.pod.name': 'ghost',
      'io.kubernetes.pod.namespace': 'default',
    };
    const sandboxId = fake.addSandbox({
      metadata: { name: 'ghost', namespace: 'default', uid: 'ghost-uid', attempt: 0 },
      labels,
    });
    const containerId = await fake.addContainer(sandboxId, {
      metadata: { name: 'c', attempt: 0 },
      image: { image: IMAGE },
      labels: { ...labels, 'io.kubernetes.container.name': 'c' },
    });
    await waitFor('ghost stopped', () => {
      const sandbox = fake.sandboxes().find((s) => s.id === sandboxId);
      const container = fake.containers().find((c) => c.id === containerId);
      return (
        sandbox?.state === PodSandboxState.SANDBOX_NOTREADY &&
        container?.state === ContainerState.CONTAINER_EXITED
      );
    });
    const stop = fake
      .calls('StopContainer')
      .find((c) => (c.request as { containerId: string }).containerId === containerId);
    // Grace 1 s for orphans, raised to kuberuntime's 2 s minimum per StopContainer (as upstream).
    expect(Number((stop?.request as { timeout: bigint } | undefined)?.timeout)).toBe(2);
  });

  it('answers /healthz with the ping, pleg and syncloop checks', async () => {
    const res = await fetch(`${agent.healthUrl}/healthz`);
    expect(res.status).toBe(200);
    expect(await res.text()).toBe('ok');
    const verbose = await (await fetch(`${agent.healthUrl}/healthz?verbose`)).text();
    expect(verbose).toBe('[+]ping ok\n[+]log ok\n[+]pleg ok\n[+]syncloop ok\nhealthz check passed\n');
  });
});
