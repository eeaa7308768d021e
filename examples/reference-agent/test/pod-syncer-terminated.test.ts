// SyncTerminatedPod's order, as upstream's: volumes unmounted, then the pod cgroup removed, and
// only then TerminatePod (which lets the status manager delete the API object:
// PodResourcesAreReclaimed) — also for a pod whose volumes never came up. And env sources:
// the ConfigMaps/Secrets named in env are read before the runtime acts.
import type { V1Pod } from '@kubernetes/client-node';
import { type RuntimeManagerHarness, startRuntimeManagerHarness } from '@nodeagent/kuberuntime/testing';
import { afterEach, describe, expect, it } from 'vitest';
import { PodEnvSources, podEnvReferences } from '../src/env-sources-wiring.js';
import { AgentPodSyncer } from '../src/pod-syncer.js';

let h: RuntimeManagerHarness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

const pod: V1Pod = {
  metadata: { name: 'p', namespace: 'default', uid: 'uid-p', deletionTimestamp: new Date() },
  spec: {
    containers: [
      {
        name: 'app',
        image: 'busybox:1.36',
        imagePullPolicy: 'IfNotPresent',
        envFrom: [{ configMapRef: { name: 'all' } }],
        env: [
          { name: 'A', valueFrom: { configMapKeyRef: { name: 'cm', key: 'a' } } },
          { name: 'S', valueFrom: { secretKeyRef: { name: 'sec', key: 's' } } },
        ],
      },
    ],
  },
};

describe('AgentPodSyncer.syncTerminatedPod', () => {
  it('unmounts volumes, removes the cgroup, then terminates the pod (never the other way round)', async () => {
    h = await startRuntimeManagerHarness({});
    const harness = h;
    const order: string[] = [];
    const syncer = new AgentPodSyncer({
      runtime: harness.manager,
      statuses: {
        getPodStatus: () => undefined,
        setPodStatus: () => order.push('setPodStatus'),
        terminatePod: () => order.push('terminatePod'),
      },
      volumes: {
        waitForAttachAndMount: async () => {
          throw new Error('unmounted volumes=[config]');
        },
        unmountPodVolumes: async () => {
          await new Promise((r) => setTimeout(r, 20));
          order.push('unmountPodVolumes');
        },
      },
      afterVolumesUnmounted: async () => {
        await new Promise((r) => setTimeout(r, 20));
        order.push('destroyPodCgroup');
      },
    });
    const ctx = { signal: new AbortController().signal };
    const status = await harness.manager.getPodStatus(pod);
    // The volumes never came up: the sync fails before any container starts.
    await expect(syncer.syncPod(ctx, 'create', pod, undefined, { status, error: undefined })).rejects.toThrow(
      'unmounted volumes',
    );
    order.length = 0;
    await syncer.syncTerminatedPod(ctx, pod, { status, error: undefined });
    expect(order).toEqual(['setPodStatus', 'unmountPodVolumes', 'destroyPodCgroup', 'terminatePod']);
  });

  it('a failed unmount keeps the pod from being terminated (the worker retries)', async () => {
    h = await startRuntimeManagerHarness({});
    const harness = h;
    const order: string[] = [];
    const syncer = new AgentPodSyncer({
      runtime: harness.manager,
      statuses: {
        getPodStatus: () => undefined,
        setPodStatus: () => {},
        terminatePod: () => order.push('terminatePod'),
      },
      volumes: {
        waitForAttachAndMount: async () => {},
        unmountPodVolumes: async () => {
          throw new Error('UnmountVolume.TearDown failed');
        },
      },
    });
    const status = await harness.manager.getPodStatus(pod);
    await expect(
      syncer.syncTerminatedPod({ signal: new AbortController().signal }, pod, { status, error: undefined }),
    ).rejects.toThrow('TearDown failed');
    expect(order).toEqual([]);
  });
});

describe('PodEnvSources', () => {
  it('reads the referenced ConfigMaps and Secrets (missing ones stay missing), drops them on release', async () => {
    expect(podEnvReferences(pod)).toEqual([
      { kind: 'configmaps', name: 'all' },
      { kind: 'configmaps', name: 'cm' },
      { kind: 'secrets', name: 'sec' },
    ]);
    const gets: string[] = [];
    const objects: Record<string, unknown> = {
      '/api/v1/namespaces/default/configmaps/cm': { data: { a: '1' }, binaryData: { b: 'AA==' } },
      '/api/v1/namespaces/default/secrets/sec': { data: { s: Buffer.from([0xff, 0x41]).toString('base64') } },
    };
    const sources = new PodEnvSources({
      get: async <T>(path: string) => {
        gets.push(path);
        return objects[path] as T | undefined;
      },
    });
    await sources.refresh(pod);
    expect(gets).toHaveLength(3);
    expect(sources.configMap('default', 'all')).toBeUndefined();
    // Env reads a ConfigMap's data only, as the kubelet's (binaryData is for volumes).
    expect(sources.configMap('default', 'cm')).toEqual({ a: '1' });
    expect(sources.secret('default', 'sec')).toEqual({ s: Buffer.from([0xff, 0x41]) });
    sources.release('uid-p');
    expect(sources.configMap('default', 'cm')).toBeUndefined();
  });
});
