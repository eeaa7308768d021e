// Resources fit: upstream's OutOf<resource> reasons and InsufficientResourceError messages.
import { describe, expect, it } from 'vitest';
import { PodAdmitter, PredicateAdmitHandler, podRequests, rejectedPodStatus } from '../src/index.js';
import { node, pod, requests } from './helpers.js';

describe('resources fit (noderesources.Fits through the kubelet)', () => {
  const cases: {
    name: string;
    pods: ReturnType<typeof pod>[];
    newPod: ReturnType<typeof pod>;
    alloc?: Record<string, string>;
    reason?: string;
    message?: string;
  }[] = [
    {
      name: '64 CPUs on a 2-CPU node',
      pods: [],
      newPod: pod({ containers: requests({ cpu: '64' }) }),
      reason: 'OutOfcpu',
      message: "Node didn't have enough resource: cpu, requested: 64000, used: 0, capacity: 2000",
    },
    {
      name: 'cpu counted against what admitted pods request',
      pods: [pod({ containers: requests({ cpu: '1500m' }) })],
      newPod: pod({ containers: requests({ cpu: '600m' }) }),
      reason: 'OutOfcpu',
      message: "Node didn't have enough resource: cpu, requested: 600, used: 1500, capacity: 2000",
    },
    {
      name: 'exactly the rest fits',
      pods: [pod({ containers: requests({ cpu: '1500m' }) })],
      newPod: pod({ containers: requests({ cpu: '500m' }) }),
    },
    {
      name: 'memory in bytes',
      pods: [],
      newPod: pod({ containers: requests({ memory: '5Gi' }) }),
      reason: 'OutOfmemory',
      message:
        "Node didn't have enough resource: memory, requested: 5368709120, used: 0, capacity: 4294967296",
    },
    {
      name: 'ephemeral-storage',
      pods: [],
      newPod: pod({ containers: requests({ 'ephemeral-storage': '11Gi' }) }),
      reason: 'OutOfephemeral-storage',
      message:
        "Node didn't have enough resource: ephemeral-storage, requested: 11811160064, used: 0, capacity: 10737418240",
    },
    {
      name: 'pods count (max-pods)',
      pods: [pod(), pod()],
      alloc: { cpu: '2', memory: '4Gi', pods: '2' },
      newPod: pod(),
      reason: 'OutOfpods',
      message: "Node didn't have enough resource: pods, requested: 1, used: 2, capacity: 2",
    },
    {
      name: 'extended resource the node advertises',
      pods: [],
      alloc: { cpu: '2', memory: '4Gi', pods: '110', 'example.com/gpu': '1' },
      newPod: pod({ containers: requests({ 'example.com/gpu': '2' }) }),
      reason: 'OutOfexample.com/gpu',
      message: "Node didn't have enough resource: example.com/gpu, requested: 2, used: 0, capacity: 1",
    },
    {
      name: 'extended resource the node does not know is ignored',
      pods: [],
      newPod: pod({ containers: requests({ 'example.com/gpu': '2' }) }),
    },
    {
      name: 'hugepages are scalar resources',
      pods: [],
      alloc: { cpu: '2', memory: '4Gi', pods: '110', 'hugepages-2Mi': '0' },
      newPod: pod({ containers: requests({ 'hugepages-2Mi': '4Mi' }) }),
      reason: 'OutOfhugepages-2Mi',
      message: "Node didn't have enough resource: hugepages-2Mi, requested: 4194304, used: 0, capacity: 0",
    },
    {
      name: 'pods count is reported before cpu',
      pods: [pod()],
      alloc: { cpu: '1', memory: '4Gi', pods: '1' },
      newPod: pod({ containers: requests({ cpu: '2' }) }),
      reason: 'OutOfpods',
      message: "Node didn't have enough resource: pods, requested: 1, used: 1, capacity: 1",
    },
  ];
  it.each(cases)('$name', ({ pods, newPod, alloc, reason, message }) => {
    const handler = new PredicateAdmitHandler({
      node: () => node(alloc === undefined ? {} : { allocatable: alloc }),
    });
    const result = handler.admit({ pod: newPod, otherPods: pods });
    if (reason === undefined) expect(result).toEqual({ admit: true });
    else expect(result).toEqual({ admit: false, reason, message });
  });

  it('init containers: the largest init step or the sum of containers, plus sidecars and overhead', () => {
    const p = pod({
      initContainers: [
        { name: 'i1', resources: { requests: { cpu: '3' } } },
        { name: 'side', restartPolicy: 'Always', resources: { requests: { cpu: '200m' } } },
        { name: 'i2', resources: { requests: { cpu: '1' } } },
      ],
      containers: requests({ cpu: '500m' }),
      overhead: { cpu: '100m' },
    });
    // max(500 + 200, 3000, 1000 + 200) + 100
    expect(podRequests(p).get('cpu')).toBe(3100n);
  });

  it('PodAdmitter accounts admitted pods until released; a rejected pod gets Failed with "Pod was rejected: "', () => {
    const admitter = new PodAdmitter({ handlers: [new PredicateAdmitHandler({ node: () => node() })] });
    const a = pod({ containers: requests({ cpu: '1500m' }) });
    const b = pod({ containers: requests({ cpu: '1' }) });
    expect(admitter.admit(a).admit).toBe(true);
    const rejected = admitter.admit(b);
    expect(rejected.reason).toBe('OutOfcpu');
    expect(rejectedPodStatus(b, rejected)).toEqual({
      qosClass: 'Burstable',
      phase: 'Failed',
      reason: 'OutOfcpu',
      message:
        "Pod was rejected: Node didn't have enough resource: cpu, requested: 1000, used: 1500, capacity: 2000",
    });
    admitter.release(a.metadata?.uid ?? '');
    expect(admitter.admit(b).admit).toBe(true);
    expect(admitter.admittedPods().map((p) => p.metadata?.uid)).toEqual([b.metadata?.uid]);
  });

  it('no Node object yet: InvalidNodeInfo', () => {
    const handler = new PredicateAdmitHandler({ node: () => undefined });
    expect(handler.admit({ pod: pod(), otherPods: [] })).toEqual({
      admit: false,
      reason: 'InvalidNodeInfo',
      message: 'Kubelet cannot get node info.',
    });
  });
});
