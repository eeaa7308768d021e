// The node's resources reach the runtime manager: a container's OOM score adjustment is computed
// against the machine's memory (upstream GetContainerOOMScoreAdjust, memoryCapacity from the
// machine info), and an unset limit read through `resourceFieldRef` is the allocatable the Node
// reports (capacity − kube-reserved − system-reserved − the hard memory eviction threshold).
import type { V1Node, V1Pod } from '@kubernetes/client-node';
import type { CreateContainerRequest } from '@nodeagent/cri';
import { type MachineInfo, readMachineInfo } from '@nodeagent/status';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RunningAgent, runAgent } from '../src/agent.js';
import { EMBEDDED_BUSYBOX_IMAGE } from '../src/embedded-runtime.js';
import {
  embeddedStore,
  FAST_AGENT_TIMINGS,
  makePod,
  podNamed,
  shContainer,
  testLogger,
  waitFor,
} from './helpers.js';

const NODE = 'resources-node';
const GI = 1024 ** 3;
const MI = 1024 ** 2;

describe('node resources in the runtime manager (embedded)', () => {
  let agent: RunningAgent;
  // Not this machine's: 4 CPUs and 8 GiB, so the figures below do not depend on the host.
  const machine: MachineInfo = { ...readMachineInfo(), cpus: 4, memoryBytes: 8 * GI, hugePages: {} };

  beforeAll(async () => {
    agent = await runAgent({
      nodeName: NODE,
      machine,
      kubeReserved: { cpu: '500m', memory: '1Gi' },
      systemReserved: { memory: '512Mi' },
      ...FAST_AGENT_TIMINGS,
      logger: testLogger(),
    });
  });
  afterAll(async () => {
    await agent?.stop();
  });

  it('scores OOM against the machine memory and resolves unset limits to the node allocatable', async () => {
    const app = shContainer('app', EMBEDDED_BUSYBOX_IMAGE, 'sleep 3600');
    // Burstable: a memory request, no limits.
    app.resources = { requests: { memory: '1Gi', cpu: '100m' } };
    app.env = [
      { name: 'LIMIT_MEM', valueFrom: { resourceFieldRef: { resource: 'limits.memory' } } },
      {
        name: 'LIMIT_MEM_MI',
        valueFrom: { resourceFieldRef: { resource: 'limits.memory', divisor: '1Mi' } },
      },
      { name: 'LIMIT_CPU_M', valueFrom: { resourceFieldRef: { resource: 'limits.cpu', divisor: '1m' } } },
      { name: 'LIMIT_CPU', valueFrom: { resourceFieldRef: { resource: 'limits.cpu' } } },
    ];
    await agent.api.create('/api/v1/namespaces/default/pods', makePod('resources', NODE, [app]) as V1Pod);
    await waitFor('Running pod', () => podNamed(agent, 'resources')?.status?.phase === 'Running', 20_000);

    const create = agent.fakeRuntime
      ?.calls('CreateContainer')
      .map((c) => c.request as CreateContainerRequest)
      .find((r) => r.config?.metadata?.name === 'app');
    expect(create).toBeDefined();
    const env = Object.fromEntries((create?.config?.envs ?? []).map((e) => [String(e.key), String(e.value)]));
    // 8Gi − 1Gi − 512Mi − 100Mi (the default memory.available hard threshold) = 6556Mi.
    expect(env.LIMIT_MEM).toBe(String(6556 * MI));
    expect(env.LIMIT_MEM_MI).toBe('6556');
    // 4 CPUs − 500m = 3500m; divisor 1 rounds up to whole cores.
    expect(env.LIMIT_CPU_M).toBe('3500');
    expect(env.LIMIT_CPU).toBe('4');
    // Burstable: 1000 − 1000 × request / capacity = 1000 − 1000 × 1Gi / 8Gi = 875.
    expect(create?.config?.linux?.resources?.oomScoreAdj).toBe(875n);

    // The same allocatable the Node reports.
    const node = embeddedStore(agent).tryGet('nodes', '', NODE) as V1Node | undefined;
    expect(node?.status?.allocatable?.memory).toBe('6556Mi');
    expect(node?.status?.allocatable?.cpu).toBe('3500m');
  });
});
