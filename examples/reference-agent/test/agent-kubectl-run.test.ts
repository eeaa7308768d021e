// `kubectl run` on the embedded defaults: the pod has no nodeName, the embedded API server's
// minimal scheduler binds it to the agent's node, and the embedded fake runtime pulls the image
// the user named (nginx, which it does not have) as a simulated image, so the pod runs instead
// of failing with ErrImagePull. The `known-only` policy keeps the registry miss.
import { execFile, spawnSync } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import type { V1Node, V1Pod } from '@kubernetes/client-node';
import { createCriClient } from '@nodeagent/cri';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RunningAgent, runAgent } from '../src/agent.js';
import { simulatedImage, startEmbeddedRuntime } from '../src/embedded-runtime.js';
import { FAST_AGENT_TIMINGS, testLogger, waitFor } from './helpers.js';

const NODE = 'run-node';
const run = promisify(execFile);
const kubectlMissing = spawnSync('kubectl', ['version', '--client'], { encoding: 'utf8' }).status !== 0;
if (kubectlMissing && process.env.CI !== 'true') {
  console.warn(
    '\n*** kubectl not found: skipping the kubectl run test (Debian package kubernetes-client) ***\n',
  );
}

describe('the embedded runtime pulls any image as a simulated one', () => {
  it('simulate: any reference pulls, with a digest and size derived from its name; known-only: NOT_FOUND', async () => {
    const simulate = await startEmbeddedRuntime({});
    const knownOnly = await startEmbeddedRuntime({ imagePolicy: 'known-only' });
    const a = createCriClient(simulate.endpoint);
    const b = createCriClient(knownOnly.endpoint);
    try {
      const pulled = await a.image.pullImage({ image: { image: 'nginx' } });
      const again = await a.image.pullImage({ image: { image: 'docker.io/library/nginx:latest' } });
      const other = await a.image.pullImage({ image: { image: 'quay.io/org/app:v2' } });
      expect(pulled.imageRef).toMatch(/^sha256:[0-9a-f]{64}$/);
      expect(again.imageRef).toBe(pulled.imageRef);
      expect(other.imageRef).not.toBe(pulled.imageRef);
      const status = await a.image.imageStatus({ image: { image: 'nginx' } });
      expect(status.image?.repoTags).toEqual(['docker.io/library/nginx:latest']);
      expect(status.image?.repoDigests).toEqual([
        expect.stringMatching(/^docker\.io\/library\/nginx@sha256:[0-9a-f]{64}$/),
      ]);
      expect(status.image?.size).toBe(
        BigInt(simulatedImage('docker.io/library/nginx:latest').sizeBytes ?? 0),
      );
      expect(Number(status.image?.size)).toBeGreaterThanOrEqual(5 * 1024 * 1024);
      await expect(b.image.pullImage({ image: { image: 'nginx' } })).rejects.toThrow(/not found/);
      // The preloaded busybox still pulls under known-only.
      await expect(
        b.image.pullImage({ image: { image: 'registry.local/busybox:latest' } }),
      ).resolves.toBeDefined();
    } finally {
      a.close();
      b.close();
      await simulate.stop();
      await knownOnly.stop();
    }
  });
});

describe.skipIf(kubectlMissing && process.env.CI !== 'true')('kubectl run on the embedded defaults', () => {
  let agent: RunningAgent;
  let home: string;
  const kubectl = async (...args: string[]) =>
    (await run('kubectl', args, { env: { ...process.env, KUBECONFIG: agent.kubeconfigPath, HOME: home } }))
      .stdout;

  beforeAll(async () => {
    if (kubectlMissing)
      throw new Error('kubectl is required under CI=true (Debian package kubernetes-client)');
    home = await mkdtemp(join(tmpdir(), 'agent-kubectl-run-'));
    agent = await runAgent({ nodeName: NODE, ...FAST_AGENT_TIMINGS, logger: testLogger() });
  });
  afterAll(async () => {
    await agent?.stop();
    if (home) await rm(home, { recursive: true, force: true });
  });

  it('kubectl run web --image=nginx: scheduled to the node, simulated image pulled, Running', async () => {
    const out = await kubectl('run', 'web', '--image=nginx');
    expect(out.trim()).toBe('pod/web created');
    const pod = await waitFor(
      'web Running',
      () => {
        const p = agent.apiServer?.store.tryGet('pods', 'default', 'web') as V1Pod | undefined;
        return p?.status?.phase === 'Running' && p.status.containerStatuses?.[0]?.ready ? p : undefined;
      },
      30_000,
    );
    expect(pod.spec?.nodeName).toBe(NODE);
    expect(pod.status?.conditions?.find((c) => c.type === 'PodScheduled')?.status).toBe('True');
    expect(pod.status?.containerStatuses?.[0]).toMatchObject({
      name: 'web',
      image: 'nginx',
      // The simulated image's ID (the fake runtime reports the image ID, not containerd's repo digest).
      imageID: simulatedImage('docker.io/library/nginx:latest').id,
      state: { running: expect.anything() },
      restartCount: 0,
    });
    expect((await kubectl('get', 'pod', 'web', '-o', 'jsonpath={.status.phase}')).trim()).toBe('Running');
    // The pulled image is on the node, as the kubelet lists images in the Node status.
    await waitFor(
      'nginx in the node images',
      () => {
        const node = agent.apiServer?.store.tryGet('nodes', undefined, NODE) as V1Node | undefined;
        return node?.status?.images?.some((i) => i.names?.includes('docker.io/library/nginx:latest'));
      },
      15_000,
    );
  }, 60_000);
});
