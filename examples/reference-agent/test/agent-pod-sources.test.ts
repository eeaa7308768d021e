// The agent's pod intake against the embedded mini-apiserver: static pods from a manifest
// directory run and get mirror pods that come back after deletion; a bad manifest is skipped
// while the others run; admission rejects a pod asking for 64 CPUs (OutOfcpu), one whose
// nodeSelector excludes the node (NodeAffinity) and one with a forbidden sysctl.
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import { join } from 'node:path';
import type { V1Node, V1Pod } from '@kubernetes/client-node';
import type { KubeObject } from '@nodeagent/informer';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RunningAgent, runAgent } from '../src/agent.js';
import { EMBEDDED_BUSYBOX_IMAGE } from '../src/embedded-runtime.js';
import { embeddedStore, makePod, podNamed, shContainer, testLogger, waitFor } from './helpers.js';

const NODE = 'intake-node';
const IMAGE = EMBEDDED_BUSYBOX_IMAGE;

const manifest = (name: string, script = 'sleep 3600') => `apiVersion: v1
kind: Pod
metadata:
  name: ${name}
  labels:
    tier: control-plane
spec:
  containers:
  - name: main
    image: ${IMAGE}
    imagePullPolicy: IfNotPresent
    command: ["sh", "-c", "${script}"]
`;

describe('reference agent: pod sources and admission', () => {
  let agent: RunningAgent;
  let dir: string;
  let server: Server;
  const urlHeaders: IncomingHttpHeaders[] = [];
  const store = () => embeddedStore(agent);
  const getPod = (name: string) => podNamed(agent, name);
  const createPod = (pod: V1Pod) => agent.api.create('/api/v1/namespaces/default/pods', pod);

  beforeAll(async () => {
    dir = await mkdtemp(join(os.tmpdir(), 'agent-manifests-'));
    await writeFile(join(dir, 'static-web.yaml'), manifest('static-web'));
    await writeFile(
      join(dir, 'broken.yaml'),
      'apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: d\n',
    );
    // A URL serving a PodList of one pod (YAML, as a config server might).
    server = createServer((req, res) => {
      urlHeaders.push(req.headers);
      res.end(`apiVersion: v1\nkind: PodList\nitems:\n- ${manifest('from-url').replace(/\n(?=.)/g, '\n  ')}`);
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    agent = await runAgent({
      nodeName: NODE,
      podManifestPath: dir,
      manifestUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}/pods`,
      manifestUrlHeaders: [['Authorization', 'Bearer demo']],
      manifestCheckMs: 500,
      allowedUnsafeSysctls: ['net.core.somaxconn'],
      relistPeriodMs: 200,
      housekeepingMs: 200,
      nodeStatusUpdateMs: 300,
      logger: testLogger(),
    });
  });
  afterAll(async () => {
    await agent?.stop();
    await new Promise((r) => server?.close(r));
    await rm(dir, { recursive: true, force: true });
  });

  it('a static pod runs and gets a mirror pod: config.mirror = its hash, the Node as owner, status Running', async () => {
    const mirror = await waitFor(
      'mirror pod Running',
      () => {
        const p = getPod(`static-web-${NODE}`);
        return p?.status?.phase === 'Running' ? p : undefined;
      },
      20_000,
    );
    const staticPod = agent.podSources.config.pods('file')[0];
    expect(staticPod?.metadata?.name).toBe(`static-web-${NODE}`);
    const hash = staticPod?.metadata?.annotations?.['kubernetes.io/config.hash'];
    expect(hash).toMatch(/^[0-9a-f]{32}$/);
    expect(staticPod?.metadata?.uid).toBe(hash);
    expect(mirror.metadata?.annotations?.['kubernetes.io/config.mirror']).toBe(hash);
    expect(mirror.metadata?.uid).not.toBe(hash);
    const node = store().get('nodes', '', NODE);
    expect(mirror.metadata?.ownerReferences).toEqual([
      { apiVersion: 'v1', kind: 'Node', name: NODE, uid: node.metadata?.uid, controller: true },
    ]);
    expect(mirror.metadata?.labels).toEqual({ tier: 'control-plane' });
    expect(mirror.spec?.tolerations).toContainEqual({ operator: 'Exists', effect: 'NoExecute' });
    // The bad manifest did not stop anything.
    expect(agent.podSources.config.pods('file')).toHaveLength(1);
  });

  it('a pod from --manifest-url (a PodList, with the configured header) runs as an http static pod', async () => {
    const mirror = await waitFor(
      'url pod mirrored Running',
      () => {
        const p = getPod(`from-url-${NODE}`);
        return p?.status?.phase === 'Running' ? p : undefined;
      },
      20_000,
    );
    expect(urlHeaders[0]?.authorization).toBe('Bearer demo');
    const staticPod = agent.podSources.config.pods('http')[0];
    expect(staticPod?.metadata?.annotations?.['kubernetes.io/config.source']).toBe('http');
    expect(mirror.metadata?.annotations?.['kubernetes.io/config.mirror']).toBe(staticPod?.metadata?.uid);
    // Only file pods get the NoExecute toleration.
    expect(mirror.spec?.tolerations ?? []).not.toContainEqual({ operator: 'Exists', effect: 'NoExecute' });
  });

  it('a deleted mirror pod comes back, and the static pod keeps running (its container is not restarted)', async () => {
    const name = `static-web-${NODE}`;
    const before = getPod(name);
    const containerBefore = before?.status?.containerStatuses?.[0]?.containerID;
    await agent.api.delete(`/api/v1/namespaces/default/pods/${name}`, { gracePeriodSeconds: 0 });
    const again = await waitFor(
      'mirror pod recreated',
      () => {
        const p = getPod(name);
        return p !== undefined &&
          p.metadata?.uid !== before?.metadata?.uid &&
          p.metadata?.deletionTimestamp === undefined
          ? p
          : undefined;
      },
      10_000,
    );
    expect(again.metadata?.annotations?.['kubernetes.io/config.mirror']).toBe(
      before?.metadata?.annotations?.['kubernetes.io/config.mirror'],
    );
    const running = await waitFor(
      'status on the new mirror',
      () => {
        const p = getPod(name);
        return p?.status?.phase === 'Running' ? p : undefined;
      },
      10_000,
    );
    expect(running.status?.containerStatuses?.[0]?.containerID).toBe(containerBefore);
    expect(running.status?.containerStatuses?.[0]?.restartCount).toBe(0);
  });

  it('a graceful delete of the mirror pod (deletionTimestamp) is replaced too', async () => {
    const name = `static-web-${NODE}`;
    const before = getPod(name);
    await agent.api.delete(`/api/v1/namespaces/default/pods/${name}`, { gracePeriodSeconds: 30 });
    await waitFor(
      'mirror replaced',
      () => {
        const p = getPod(name);
        return p !== undefined && p.metadata?.uid !== before?.metadata?.uid && !p.metadata?.deletionTimestamp;
      },
      10_000,
    );
  });

  it('a new manifest starts a pod, a fixed broken one too; removing a manifest removes the pod and its mirror', async () => {
    await writeFile(join(dir, 'broken.yaml'), manifest('fixed'));
    await waitFor(
      'fixed static pod mirrored',
      () => getPod(`fixed-${NODE}`)?.status?.phase === 'Running',
      20_000,
    );
    await rm(join(dir, 'broken.yaml'));
    await waitFor(
      'mirror of a removed static pod deleted',
      () => getPod(`fixed-${NODE}`) === undefined,
      20_000,
    );
  });

  it('a pod asking for 64 CPUs is Failed with OutOfcpu and never reaches the runtime', async () => {
    const node = store().get('nodes', '', NODE) as { status?: { allocatable?: Record<string, string> } };
    const cpu = node.status?.allocatable?.cpu ?? '';
    const capacityMilli = cpu.endsWith('m') ? Number(cpu.slice(0, -1)) : Number(cpu) * 1000;
    await createPod(
      makePod('greedy', NODE, [
        { ...shContainer('c', IMAGE, 'sleep 3600'), resources: { requests: { cpu: '64' } } },
      ]),
    );
    const pod = await waitFor('greedy Failed', () => {
      const p = getPod('greedy');
      return p?.status?.phase === 'Failed' ? p : undefined;
    });
    expect(pod.status?.reason).toBe('OutOfcpu');
    expect(pod.status?.message).toBe(
      `Pod was rejected: Node didn't have enough resource: cpu, requested: 64000, used: 0, capacity: ${capacityMilli}`,
    );
    expect(agent.fakeRuntime?.sandboxes().map((s) => s.metadata?.name)).not.toContain('greedy');
    // The kubelet's rejectPod also records a Warning event with the reason and message.
    const event = await waitFor('OutOfcpu event', () =>
      store()
        .list('events', 'default')
        .find((e) => (e as { involvedObject?: { name?: string } }).involvedObject?.name === 'greedy'),
    );
    expect(event).toMatchObject({
      type: 'Warning',
      reason: 'OutOfcpu',
      message: `Node didn't have enough resource: cpu, requested: 64000, used: 0, capacity: ${capacityMilli}`,
    });
  });

  it('nodeSelector that excludes the node: NodeAffinity; an unsafe sysctl not allowed: SysctlForbidden; an allowed one runs', async () => {
    await createPod(
      makePod('elsewhere', NODE, [shContainer('c', IMAGE, 'sleep 3600')], { nodeSelector: { disk: 'ssd' } }),
    );
    await createPod(
      makePod('tuned', NODE, [shContainer('c', IMAGE, 'sleep 3600')], {
        securityContext: { sysctls: [{ name: 'kernel.msgmax', value: '1' }] },
      }),
    );
    await createPod(
      makePod('allowed', NODE, [shContainer('c', IMAGE, 'sleep 3600')], {
        securityContext: { sysctls: [{ name: 'net.core.somaxconn', value: '1024' }] },
      }),
    );
    const elsewhere = await waitFor('elsewhere Failed', () =>
      getPod('elsewhere')?.status?.phase === 'Failed' ? getPod('elsewhere') : undefined,
    );
    expect(elsewhere.status).toMatchObject({
      reason: 'NodeAffinity',
      message:
        "Pod was rejected: Predicate NodeAffinity failed: node(s) didn't match Pod's node affinity/selector",
    });
    const tuned = await waitFor('tuned Failed', () =>
      getPod('tuned')?.status?.phase === 'Failed' ? getPod('tuned') : undefined,
    );
    expect(tuned.status).toMatchObject({
      reason: 'SysctlForbidden',
      message: 'Pod was rejected: forbidden sysctl: "kernel.msgmax" not allowlisted',
    });
    await waitFor('allowed Running', () => getPod('allowed')?.status?.phase === 'Running', 15_000);
  });

  it('an untolerated NoExecute taint rejects API pods (TaintToleration), a toleration or NoSchedule does not', async () => {
    const taints = [
      { key: 'dedicated', value: 'db', effect: 'NoExecute' },
      { key: 'maintenance', value: 'true', effect: 'NoSchedule' },
    ];
    await agent.api.patch(`/api/v1/nodes/${NODE}`, 'merge', { spec: { taints } });
    const nodes = agent.informers.nodes<V1Node & KubeObject>({ fieldSelector: `metadata.name=${NODE}` });
    await waitFor('taint seen by the agent', () => nodes.lister.list()[0]?.spec?.taints?.length === 2);
    await createPod(makePod('untolerating', NODE, [shContainer('c', IMAGE, 'sleep 3600')]));
    await createPod(
      makePod('tolerating', NODE, [shContainer('c', IMAGE, 'sleep 3600')], {
        tolerations: [{ key: 'dedicated', operator: 'Equal', value: 'db', effect: 'NoExecute' }],
      }),
    );
    const rejected = await waitFor('untolerating Failed', () =>
      getPod('untolerating')?.status?.phase === 'Failed' ? getPod('untolerating') : undefined,
    );
    expect(rejected.status).toMatchObject({
      reason: 'TaintToleration',
      message:
        "Pod was rejected: Predicate TaintToleration failed: node(s) had taints that the pod didn't tolerate",
    });
    await waitFor('tolerating Running', () => getPod('tolerating')?.status?.phase === 'Running', 15_000);
    // Static pods are never checked against taints: the static pod is still running.
    expect(getPod(`static-web-${NODE}`)?.status?.phase).toBe('Running');
    await agent.api.patch(`/api/v1/nodes/${NODE}`, 'merge', { spec: { taints: null } });
  });

  it('a rejected pod that is deleted goes away at once (nothing runs)', async () => {
    await agent.api.delete('/api/v1/namespaces/default/pods/greedy', { gracePeriodSeconds: 30 });
    await waitFor('greedy removed', () => getPod('greedy') === undefined);
  });
});
