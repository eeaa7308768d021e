// biome-ignore-all lint/suspicious/noExplicitAny: assertions read raw API JSON
// The minimal scheduler: filter reasons and messages as kube-scheduler's
// (pkg/scheduler/framework/plugins: noderesources "Insufficient cpu", tainttoleration
// "node(s) had untolerated taint {k: v}", nodeaffinity "node(s) didn't match Pod's node
// affinity/selector", nodeunschedulable "node(s) were unschedulable"; FitError's
// "0/N nodes are available: ..." with the preemption summary).
import { afterEach, describe, expect, test } from 'vitest';
import type { MiniApiServer } from '../src/index.js';
import { call, start } from './helpers.js';

const PODS = '/api/v1/namespaces/default/pods';

let server: MiniApiServer | undefined;
afterEach(async () => {
  await server?.stop();
  server = undefined;
});

function node(
  name: string,
  opts: {
    ready?: boolean;
    cpu?: string;
    taints?: unknown[];
    labels?: Record<string, string>;
    unschedulable?: boolean;
  } = {},
): unknown {
  return {
    metadata: { name, labels: { 'kubernetes.io/hostname': name, ...(opts.labels ?? {}) } },
    spec: {
      ...(opts.taints ? { taints: opts.taints } : {}),
      ...(opts.unschedulable ? { unschedulable: true } : {}),
    },
    status: {
      allocatable: { cpu: opts.cpu ?? '2', memory: '4Gi', pods: '110' },
      conditions: [{ type: 'Ready', status: opts.ready === false ? 'False' : 'True' }],
    },
  };
}

function podWith(name: string, spec: Record<string, unknown> = {}, cpu?: string): unknown {
  return {
    metadata: { name },
    spec: {
      containers: [{ name: 'a', image: 'busybox', ...(cpu ? { resources: { requests: { cpu } } } : {}) }],
      ...spec,
    },
  };
}

async function settle(s: MiniApiServer): Promise<void> {
  for (let i = 0; i < 5; i++) {
    await new Promise((r) => setImmediate(r));
    await s.scheduler?.idle();
  }
}

async function eventsFor(s: MiniApiServer, pod: string): Promise<any[]> {
  const res = await call(
    s,
    'GET',
    `/api/v1/namespaces/default/events?fieldSelector=involvedObject.name=${pod}`,
  );
  return res.body.items;
}

async function createNode(s: MiniApiServer, n: any): Promise<void> {
  const res = await call(s, 'POST', '/api/v1/nodes', n);
  expect(res.code).toBe(201);
  // Node status is written through the status subresource, as a kubelet does.
  const put = await call(s, 'PUT', `/api/v1/nodes/${n.metadata.name}/status`, {
    ...res.body,
    status: n.status,
  });
  expect(put.code).toBe(200);
}

/** Starts a scheduling server with a node tainted NoSchedule, a NotReady one and a schedulable one of 1 CPU. */
async function startWithThreeNodes(): Promise<MiniApiServer> {
  const server = await start({ schedule: true });
  await createNode(
    server,
    node('tainted', { taints: [{ key: 'dedicated', value: 'gpu', effect: 'NoSchedule' }] }),
  );
  await createNode(server, node('notready', { ready: false }));
  await createNode(server, node('small', { cpu: '1' }));
  return server;
}

describe('minimal scheduler (schedule: true)', () => {
  test('binds to the node that fits and records Scheduled', async () => {
    server = await startWithThreeNodes();
    expect((await call(server, 'POST', PODS, podWith('p', {}, '500m'))).code).toBe(201);
    await settle(server);
    const pod = (await call(server, 'GET', `${PODS}/p`)).body;
    expect(pod.spec.nodeName).toBe('small');
    const events = await eventsFor(server, 'p');
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({
      type: 'Normal',
      reason: 'Scheduled',
      message: 'Successfully assigned default/p to small',
      involvedObject: { kind: 'Pod', name: 'p', namespace: 'default', uid: pod.metadata.uid },
      reportingComponent: 'default-scheduler',
      action: 'Binding',
    });
  });

  test('FailedScheduling names every reason; the pod is bound once a node fits', async () => {
    server = await startWithThreeNodes();
    await createNode(server, node('cordoned', { unschedulable: true }));
    await call(server, 'POST', PODS, podWith('big', {}, '1500m'));
    await settle(server);
    const pod = (await call(server, 'GET', `${PODS}/big`)).body;
    expect(pod.spec.nodeName).toBeUndefined();
    const message =
      '0/4 nodes are available: 1 Insufficient cpu, 1 node(s) had untolerated taint {dedicated: gpu}, 1 node(s) had untolerated taint {node.kubernetes.io/not-ready: }, 1 node(s) were unschedulable. preemption: 0/4 nodes are available: 1 No preemption victims found for incoming pod., 3 Preemption is not helpful for scheduling..';
    expect(pod.status.conditions).toEqual([
      expect.objectContaining({ type: 'PodScheduled', status: 'False', reason: 'Unschedulable', message }),
    ]);
    const failed = await call(
      server,
      'GET',
      '/api/v1/namespaces/default/events?fieldSelector=reason=FailedScheduling',
    );
    expect(failed.body.items.map((e: any) => [e.type, e.message])).toEqual([['Warning', message]]);
    await createNode(server, node('big-node', { cpu: '4' }));
    await settle(server);
    expect((await call(server, 'GET', `${PODS}/big`)).body.spec.nodeName).toBe('big-node');
  });

  test('nodeSelector, required node affinity and tolerations', async () => {
    server = await start({ schedule: true });
    await createNode(server, node('a', { labels: { zone: 'z1' } }));
    await createNode(
      server,
      node('b', { labels: { zone: 'z2' }, taints: [{ key: 'k', effect: 'NoExecute' }] }),
    );
    await call(server, 'POST', PODS, podWith('sel', { nodeSelector: { zone: 'z1' } }));
    await call(
      server,
      'POST',
      PODS,
      podWith('aff', {
        affinity: {
          nodeAffinity: {
            requiredDuringSchedulingIgnoredDuringExecution: {
              nodeSelectorTerms: [{ matchExpressions: [{ key: 'zone', operator: 'In', values: ['z2'] }] }],
            },
          },
        },
        tolerations: [{ key: 'k', operator: 'Exists' }],
      }),
    );
    await call(server, 'POST', PODS, podWith('none', { nodeSelector: { zone: 'z3' } }));
    await call(server, 'POST', PODS, podWith('other', { schedulerName: 'my-scheduler' }));
    await settle(server);
    const nodeOf = async (n: string) =>
      (await call(server as MiniApiServer, 'GET', `${PODS}/${n}`)).body.spec.nodeName;
    expect(await nodeOf('sel')).toBe('a');
    expect(await nodeOf('aff')).toBe('b');
    expect(await nodeOf('none')).toBeUndefined();
    expect(await nodeOf('other')).toBeUndefined();
    expect((await eventsFor(server, 'none'))[0].message).toBe(
      "0/2 nodes are available: 2 node(s) didn't match Pod's node affinity/selector. preemption: 0/2 nodes are available: 2 Preemption is not helpful for scheduling..",
    );
    expect(await eventsFor(server, 'other')).toEqual([]);
  });

  test('without nodes: "no nodes available to schedule pods"; off by default', async () => {
    server = await start({ schedule: true });
    await call(server, 'POST', PODS, podWith('p'));
    await settle(server);
    expect((await eventsFor(server, 'p'))[0].message).toBe('no nodes available to schedule pods');
    await server.stop();
    server = await start();
    expect(server.scheduler).toBeUndefined();
  });
});

describe('pods/binding', () => {
  test('binds once, then 409', async () => {
    server = await start();
    await call(server, 'POST', PODS, podWith('p'));
    const binding = {
      apiVersion: 'v1',
      kind: 'Binding',
      metadata: { name: 'p' },
      target: { kind: 'Node', name: 'n1' },
    };
    const ok = await call(server, 'POST', `${PODS}/p/binding`, binding);
    expect(ok.code).toBe(201);
    expect((await call(server, 'GET', `${PODS}/p`)).body.spec.nodeName).toBe('n1');
    const again = await call(server, 'POST', `${PODS}/p/binding`, { ...binding, target: { name: 'n2' } });
    expect(again.code).toBe(409);
    expect(again.body.message).toBe(
      'Operation cannot be fulfilled on pods/binding "p": pod p is already assigned to node "n1"',
    );
  });
});
