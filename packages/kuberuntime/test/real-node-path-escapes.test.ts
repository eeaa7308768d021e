// Path escapes against a real containerd: a subPath with `..`, a volume named `..`, and the
// realistic attack — an init container plants a symlink to `/` in a shared emptyDir and the
// next container mounts a subPath through it — are refused with CreateContainerConfigError and
// nothing appears outside the roots; a legitimate subPath and a subPathExpr (downward API env)
// land inside the volume, where the container writes through them.
import { existsSync, mkdirSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { V1Container, V1Pod } from '@kubernetes/client-node';
import type { CriClient } from '@nodeagent/cri';
import { type NodeSandbox, startNodeSandbox } from '@nodeagent/test-support/node-sandbox';
import { describeRealNode, NODE_SANDBOX_REQUIREMENTS } from '@nodeagent/test-support/real-node';
import { afterAll, afterEach, beforeAll, expect, it } from 'vitest';
import type { KubeRuntimeManager } from '../src/index.js';
import { emptyDirPath } from '../src/paths.js';
import { runtimeOn } from './support/real-runtime.js';

describeRealNode('path escapes on a real containerd', NODE_SANDBOX_REQUIREMENTS, () => {
  let node: NodeSandbox;
  let cri: CriClient;
  let manager: KubeRuntimeManager;
  let podsRoot: string;
  let outside: string;
  let topLevel: string[];
  const pods: V1Pod[] = [];

  beforeAll(async () => {
    node = await startNodeSandbox({ name: 'escnode' });
    podsRoot = join(node.rootDir, 'pods');
    outside = join(node.rootDir, 'outside');
    mkdirSync(outside);
    mkdirSync(podsRoot, { recursive: true });
    mkdirSync(node.podLogRoot, { recursive: true });
    ({ cri, manager } = runtimeOn(node));
    topLevel = readdirSync(node.rootDir).sort();
  });
  afterEach(async () => {
    // Nothing outside the roots after any case: no new entry beside them, `outside/` empty.
    expect(readdirSync(node.rootDir).sort()).toEqual(topLevel);
    expect(readdirSync(outside)).toEqual([]);
  });
  afterAll(async () => {
    for (const p of pods) await manager.killPod(p, await manager.getPodStatus(p)).catch(() => {});
    cri?.close();
    await node?.stop();
  });

  // podsRoot/<uid>/volumes/kubernetes.io~empty-dir/<vol>: five `..` reach node.rootDir.
  const UP5 = '../../../../..';
  const c = (name: string, script: string, extra: Partial<V1Container> = {}): V1Container => ({
    name,
    image: node.imageRef,
    imagePullPolicy: 'IfNotPresent',
    command: ['sh', '-c', script],
    ...extra,
  });
  const makePod = (name: string, spec: Partial<NonNullable<V1Pod['spec']>>): V1Pod => {
    const p: V1Pod = {
      metadata: { name, namespace: 'esc', uid: `${name}-${process.pid}` },
      spec: {
        containers: [],
        terminationGracePeriodSeconds: 1,
        volumes: [{ name: 'vol', emptyDir: {} }],
        ...spec,
      },
    };
    pods.push(p);
    return p;
  };
  const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

  /** Syncs until `container` started or failed to; returns its start error (undefined = started). */
  async function startOutcome(p: V1Pod, container: string, timeoutMs = 15_000) {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const result = await manager.syncPod(p, await manager.getPodStatus(p));
      const step = result.results.find((r) => r.action === 'StartContainer' && r.target === container);
      if (step !== undefined || Date.now() > deadline) return step?.error;
      await sleep(200);
    }
  }

  it('a subPath with .. is refused before CreateContainer', async () => {
    const p = makePod('dotdot', {
      containers: [
        c('app', 'sleep 3600', {
          volumeMounts: [{ name: 'vol', mountPath: '/v', subPath: `${UP5}/escaped` }],
        }),
      ],
    });
    const err = await startOutcome(p, 'app');
    expect(err?.reason).toBe('CreateContainerConfigError');
    expect(err?.message).toContain('spec.containers[0].volumeMounts[0].subPath');
    expect((await manager.getPodStatus(p)).containerStatuses).toEqual([]);
  });

  it('a volume named .. is refused before the sandbox', async () => {
    const p = makePod('badvol', {
      volumes: [{ name: `${UP5}/escaped`, emptyDir: {} }],
      containers: [c('app', 'sleep 3600', { volumeMounts: [{ name: `${UP5}/escaped`, mountPath: '/v' }] })],
    });
    const err = await startOutcome(p, 'app');
    expect(err?.reason).toBe('CreateContainerConfigError');
    expect(err?.message).toContain('spec.volumes[0].name');
    expect((await manager.getPodStatus(p)).sandboxStatuses).toEqual([]);
  });

  it('a symlink to / planted by an init container is not followed by the next subPath', async () => {
    const p = makePod('planted', {
      initContainers: [
        c('plant', '/bin/busybox ln -s / /v/link', { volumeMounts: [{ name: 'vol', mountPath: '/v' }] }),
      ],
      containers: [
        c('victim', 'sleep 3600', {
          // An existing host directory: a regression would mount the host's /tmp, not create anything.
          volumeMounts: [{ name: 'vol', mountPath: '/host', subPath: 'link/tmp' }],
        }),
      ],
    });
    const err = await startOutcome(p, 'victim', 30_000);
    expect(err?.reason).toBe('CreateContainerConfigError');
    expect(err?.message).toBe('failed to prepare subPath for volumeMount "vol" of container "victim"');
    const uid = p.metadata?.uid ?? '';
    const vol = emptyDirPath(podsRoot, uid, 'vol');
    expect(readdirSync(vol)).toEqual(['link']); // the init container did plant it
  });

  it('subPath and subPathExpr (downward API) stay inside the volume and work', async () => {
    const p = makePod('inside', {
      containers: [
        c('writer', 'echo hi > /a/file; echo there > /b/file; sleep 3600', {
          env: [{ name: 'POD_NAME', valueFrom: { fieldRef: { fieldPath: 'metadata.name' } } }],
          volumeMounts: [
            { name: 'vol', mountPath: '/a', subPath: 'data/a' },
            { name: 'vol', mountPath: '/b', subPathExpr: 'logs/$(POD_NAME)' },
          ],
        }),
      ],
    });
    expect(await startOutcome(p, 'writer')).toBeUndefined();
    const vol = emptyDirPath(podsRoot, p.metadata?.uid ?? '', 'vol');
    const deadline = Date.now() + 10_000;
    while (!existsSync(join(vol, 'logs', 'inside', 'file')) && Date.now() < deadline) await sleep(100);
    expect(readFileSync(join(vol, 'data', 'a', 'file'), 'utf8')).toBe('hi\n');
    expect(readFileSync(join(vol, 'logs', 'inside', 'file'), 'utf8')).toBe('there\n');
  });
});
