// A pod as a real cluster sends it, on a real containerd: created over HTTP, so the API
// server's ServiceAccount admission adds the projected kube-api-access volume; with configMap,
// secret, downwardAPI and memory emptyDir volumes, downwardAPI and configMap/secret env, and a
// non-root security context with a read-only root filesystem. The busybox container writes what
// it sees into the emptyDir, which the test reads on the host: its identity, its env, its token
// (checked through the API server's TokenReview), the CA and namespace files, the volume files.
// A ConfigMap update reaches the container through the atomic writer (the `..data` symlink is
// swapped; the container, reading in a loop, never sees an empty or partial file) while a
// subPath mount of the same key keeps the old content. The pod cgroup carries the kubelet's
// values. When the pod is gone from the API, nothing is left: no mount, no tmpfs, no pod
// cgroup, no volume directory, and (after container GC) no container or sandbox.
import { existsSync, readlinkSync } from 'node:fs';
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { V1ConfigMap, V1Pod } from '@kubernetes/client-node';
import { createTestCgroupRoot, type TestCgroupRoot } from '@nodeagent/cgroups/testing';
import { type NodeSandbox, startNodeSandbox } from '@nodeagent/test-support/node-sandbox';
import { describeRealNode } from '@nodeagent/test-support/real-node';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { type RunningAgent, runAgent } from '../src/agent.js';
import { makePod, shContainer, testLogger, waitFor } from './helpers.js';

const NODE = 'realpodnode';
const SA_DIR = '/var/run/secrets/kubernetes.io/serviceaccount';

interface MountEntry {
  readonly point: string;
  readonly fsType: string;
}

async function mountsUnder(under: string): Promise<MountEntry[]> {
  const text = await readFile('/proc/self/mountinfo', 'utf8');
  return text
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => {
      const fields = l.split(' ');
      const sep = fields.indexOf('-');
      return { point: fields[4] ?? '', fsType: fields[sep + 1] ?? '' };
    })
    .filter((m) => m.point.startsWith(`${under}/`));
}

function jwtClaims(token: string): Record<string, unknown> {
  const payload = token.split('.')[1] ?? '';
  return JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) as Record<string, unknown>;
}

// What the container does: record what it sees once, then read the ConfigMap key (directly and
// through a subPath mount) and the `..data` link in a loop.
const SCRIPT = [
  'id > /out/id',
  'env > /out/env',
  `cat ${SA_DIR}/token > /out/token`,
  `cat ${SA_DIR}/ca.crt > /out/ca.crt`,
  `cat ${SA_DIR}/namespace > /out/namespace`,
  'cat /etc/config/greeting > /out/greeting',
  'cat /etc/secret/password > /out/password',
  'cat /etc/podinfo/name > /out/podinfo-name',
  'cat /etc/podinfo/mem > /out/podinfo-mem',
  'if touch /rootfs-probe 2>/dev/null; then echo writable; else echo read-only; fi > /out/rootfs',
  'echo ok > /out/ready',
  'trap "exit 0" TERM',
  'while true; do echo "[$(cat /etc/config/greeting)]" >> /out/seen; echo "[$(cat /sub/greeting)]" >> /out/sub; readlink /etc/config/..data >> /out/data; sleep 0.1; done',
].join('\n');

describeRealNode(
  'a real cluster pod on a real containerd',
  ['root', 'netns', 'containerd', 'runc', 'cni', 'busybox'],
  () => {
    let node: NodeSandbox;
    let agent: RunningAgent;
    let podsRoot: string;
    // Pod cgroups go below a test-private cgroup root, never into the machine's /kubepods.
    let cgroupRoot: TestCgroupRoot;
    const getPod = (name: string) =>
      agent.apiServer?.store.tryGet('pods', 'default', name) as V1Pod | undefined;

    beforeAll(async () => {
      node = await startNodeSandbox({ name: NODE });
      podsRoot = join(node.rootDir, 'pods');
      cgroupRoot = await createTestCgroupRoot();
      agent = await runAgent({
        nodeName: NODE,
        runtimeEndpoint: node.criEndpoint,
        cgroups: { cgroupRoot: cgroupRoot.cgroupRoot },
        podLogsRoot: node.podLogRoot,
        podsRoot,
        relistPeriodMs: 300,
        housekeepingMs: 300,
        nodeStatusUpdateMs: 500,
        // The kubelet's sync period, shortened: API-backed volumes are refreshed on each resync.
        resyncIntervalMs: 2_000,
        eviction: { thresholds: {}, containerGC: {}, imageGC: {}, containerGCPeriodMs: 1_000 },
        logger: testLogger(),
      });
    });
    afterAll(async () => {
      await agent?.stop();
      await agent?.volumes.cleanupOrphanedPodDirs(() => false);
      await node?.stop();
      await cgroupRoot?.remove();
    });

    it('runs, reads its token, files and env, sees a ConfigMap update atomically, and leaves nothing behind', async () => {
      await agent.api.create('/api/v1/namespaces/default/configmaps', {
        apiVersion: 'v1',
        kind: 'ConfigMap',
        metadata: { name: 'app-config', namespace: 'default' },
        data: { greeting: 'hello-v1' },
      });
      await agent.api.create('/api/v1/namespaces/default/secrets', {
        apiVersion: 'v1',
        kind: 'Secret',
        metadata: { name: 'app-secret', namespace: 'default' },
        data: { password: Buffer.from('s3cret').toString('base64') },
      });
      const c = shContainer('app', node.imageRef, SCRIPT);
      c.resources = { requests: { cpu: '100m', memory: '32Mi' }, limits: { memory: '64Mi' } };
      c.securityContext = { readOnlyRootFilesystem: true, allowPrivilegeEscalation: false };
      c.env = [
        { name: 'POD_NAME', valueFrom: { fieldRef: { fieldPath: 'metadata.name' } } },
        { name: 'POD_NAMESPACE', valueFrom: { fieldRef: { fieldPath: 'metadata.namespace' } } },
        { name: 'POD_IP', valueFrom: { fieldRef: { fieldPath: 'status.podIP' } } },
        { name: 'MEM_LIMIT', valueFrom: { resourceFieldRef: { resource: 'limits.memory' } } },
        { name: 'GREETING', valueFrom: { configMapKeyRef: { name: 'app-config', key: 'greeting' } } },
        { name: 'PASSWORD', valueFrom: { secretKeyRef: { name: 'app-secret', key: 'password' } } },
      ];
      c.volumeMounts = [
        { name: 'config', mountPath: '/etc/config', readOnly: true },
        { name: 'secret', mountPath: '/etc/secret', readOnly: true },
        { name: 'podinfo', mountPath: '/etc/podinfo', readOnly: true },
        { name: 'out', mountPath: '/out' },
        { name: 'config', mountPath: '/sub/greeting', subPath: 'greeting' },
      ];
      const pod = makePod('real', NODE, [c], {
        terminationGracePeriodSeconds: 5,
        securityContext: { runAsUser: 1000, runAsGroup: 3000, fsGroup: 2000, runAsNonRoot: true },
        volumes: [
          { name: 'config', configMap: { name: 'app-config' } },
          { name: 'secret', secret: { secretName: 'app-secret' } },
          {
            name: 'podinfo',
            downwardAPI: {
              items: [
                { path: 'name', fieldRef: { fieldPath: 'metadata.name' } },
                {
                  path: 'mem',
                  resourceFieldRef: { containerName: 'app', resource: 'limits.memory', divisor: '1Mi' },
                },
              ],
            },
          },
          { name: 'out', emptyDir: { medium: 'Memory', sizeLimit: '8Mi' } },
        ],
      });
      const created = await agent.api.create<V1Pod>('/api/v1/namespaces/default/pods', pod);
      // ServiceAccount admission as a real API server's: the token volume and its mount.
      const access = created.spec?.volumes?.find((v) => v.name.startsWith('kube-api-access-'));
      expect(access?.projected?.sources?.map((s) => Object.keys(s)[0])).toEqual([
        'serviceAccountToken',
        'configMap',
        'downwardAPI',
      ]);
      expect(created.spec?.containers[0]?.volumeMounts?.find((m) => m.mountPath === SA_DIR)?.name).toBe(
        access?.name,
      );

      const running = await waitFor(
        'real Running',
        () => getPod('real')?.status?.phase === 'Running' && getPod('real'),
        60_000,
      ).catch((err: Error) => {
        const events = agent.apiServer?.store
          .list('events', 'default')
          .map((e) => `${(e as { reason?: string }).reason}: ${(e as { message?: string }).message}`);
        throw new Error(
          `${err.message}; status ${JSON.stringify(getPod('real')?.status)}; events ${JSON.stringify(events)}`,
        );
      });
      const uid = running.metadata?.uid ?? '';
      const volumes = join(podsRoot, uid, 'volumes');
      const out = join(volumes, 'kubernetes.io~empty-dir/out');
      const read = (f: string) => readFile(join(out, f), 'utf8');
      await waitFor(
        'the container recorded what it sees',
        () => read('ready').catch(() => undefined),
        20_000,
      );

      // Identity and security context: uid/gid from runAsUser/runAsGroup, the fsGroup as a
      // supplemental group, a read-only root filesystem.
      expect(await read('id')).toMatch(/^uid=1000 gid=3000 groups=.*\b2000\b/);
      expect((await read('rootfs')).trim()).toBe('read-only');

      // Env from the downward API, the ConfigMap and the Secret.
      const env = Object.fromEntries(
        (await read('env'))
          .split('\n')
          .filter((l) => l.includes('='))
          .map((l) => [l.slice(0, l.indexOf('=')), l.slice(l.indexOf('=') + 1)]),
      );
      expect(env).toMatchObject({
        POD_NAME: 'real',
        POD_NAMESPACE: 'default',
        POD_IP: running.status?.podIP,
        MEM_LIMIT: String(64 * 1024 * 1024),
        GREETING: 'hello-v1',
        PASSWORD: 's3cret',
      });

      // The service-account token names the pod, and the API server accepts it (TokenReview).
      const token = await read('token');
      const claims = jwtClaims(token);
      expect(claims.sub).toBe('system:serviceaccount:default:default');
      expect(claims['kubernetes.io']).toMatchObject({
        namespace: 'default',
        pod: { name: 'real', uid },
        serviceaccount: { name: 'default' },
        node: { name: NODE },
      });
      const review = (await agent.api.create('/apis/authentication.k8s.io/v1/tokenreviews', {
        apiVersion: 'authentication.k8s.io/v1',
        kind: 'TokenReview',
        spec: { token },
      })) as { status?: Record<string, unknown> };
      expect(review.status).toMatchObject({
        authenticated: true,
        user: {
          username: 'system:serviceaccount:default:default',
          extra: {
            'authentication.kubernetes.io/pod-name': ['real'],
            'authentication.kubernetes.io/pod-uid': [uid],
          },
        },
      });
      const rootCa = agent.apiServer?.store.tryGet('configmaps', 'default', 'kube-root-ca.crt') as
        | V1ConfigMap
        | undefined;
      expect(await read('ca.crt')).toBe(rootCa?.data?.['ca.crt']);
      expect(await read('namespace')).toBe('default');

      // Volume files.
      expect(await read('greeting')).toBe('hello-v1');
      expect(await read('password')).toBe('s3cret');
      expect(await read('podinfo-name')).toBe('real');
      expect(await read('podinfo-mem')).toBe('64');

      // Secrets, downwardAPI, projected and the memory emptyDir are on tmpfs; configMap on disk.
      const mounts = await mountsUnder(podsRoot);
      expect(mounts.map((m) => [m.point, m.fsType]).sort()).toEqual(
        [
          [out, 'tmpfs'],
          [join(volumes, 'kubernetes.io~secret/secret'), 'tmpfs'],
          [join(volumes, 'kubernetes.io~downward-api/podinfo'), 'tmpfs'],
          [join(volumes, 'kubernetes.io~projected', access?.name ?? ''), 'tmpfs'],
        ].sort(),
      );

      // The pod cgroup (Burstable) with the kubelet's values: memory limit = the summed limits,
      // CPU shares from the summed requests (100m → 102), no CPU quota without CPU limits.
      const podCgroupDirs = cgroupRoot.paths.map((p) => join(p, 'kubepods', 'burstable', `pod${uid}`));
      expect(podCgroupDirs.every((p) => existsSync(p))).toBe(true);
      const cgroupValue = async (file: string) => {
        const dir = podCgroupDirs.find((p) => existsSync(join(p, file)));
        if (dir === undefined) throw new Error(`no ${file} in ${podCgroupDirs.join(', ')}`);
        return (await readFile(join(dir, file), 'utf8')).trim();
      };
      if (podCgroupDirs.some((p) => existsSync(join(p, 'memory.limit_in_bytes')))) {
        expect(await cgroupValue('memory.limit_in_bytes')).toBe(String(64 * 1024 * 1024));
        expect(await cgroupValue('cpu.shares')).toBe('102');
        expect(await cgroupValue('cpu.cfs_quota_us')).toBe('-1');
      } else {
        expect(await cgroupValue('memory.max')).toBe(String(64 * 1024 * 1024));
        // cgroup v2: weight = 1 + ((shares - 2) * 9999) / 262142 (runc's conversion, as the kubelet's).
        expect(await cgroupValue('cpu.weight')).toBe(String(1 + Math.floor(((102 - 2) * 9999) / 262142)));
        expect((await cgroupValue('cpu.max')).split(' ')[0]).toBe('max');
      }

      // The ConfigMap update: the `..data` link moves to a new timestamped directory in one
      // rename; the container sees the new content, never an empty or partial file; the subPath
      // mount keeps the old content (as upstream).
      const configDir = join(volumes, 'kubernetes.io~configmap/config');
      const dataBefore = readlinkSync(join(configDir, '..data'));
      expect(dataBefore).toMatch(/^\.\.\d{4}_\d{2}_\d{2}_\d{2}_\d{2}_\d{2}\.\d+$/);
      await agent.api.patch('/api/v1/namespaces/default/configmaps/app-config', 'merge', {
        data: { greeting: 'hello-v2' },
      });
      await waitFor(
        'the container sees the new ConfigMap content',
        async () => (await read('seen')).trimEnd().endsWith('[hello-v2]'),
        30_000,
      );
      // A few more rounds of reads after the swap.
      await new Promise((r) => setTimeout(r, 1_000));
      const seen = (await read('seen')).trimEnd().split('\n');
      expect(new Set(seen)).toEqual(new Set(['[hello-v1]', '[hello-v2]']));
      const firstNew = seen.indexOf('[hello-v2]');
      expect(seen.slice(firstNew).every((l) => l === '[hello-v2]')).toBe(true);
      const dataAfter = readlinkSync(join(configDir, '..data'));
      expect(dataAfter).not.toBe(dataBefore);
      expect(existsSync(join(configDir, dataBefore))).toBe(false);
      const links = new Set((await read('data')).trimEnd().split('\n'));
      expect(links).toEqual(new Set([dataBefore, dataAfter]));
      expect(new Set((await read('sub')).trimEnd().split('\n'))).toEqual(new Set(['[hello-v1]']));

      // Deletion: once the pod is gone from the API, its volumes and cgroup are gone already
      // (the kubelet deletes the API object only after PodResourcesAreReclaimed).
      await agent.api.delete('/api/v1/namespaces/default/pods/real', { gracePeriodSeconds: 2 });
      await waitFor('real removed from the API', () => getPod('real') === undefined, 30_000);
      expect(await mountsUnder(podsRoot)).toEqual([]);
      expect(await mountsUnder(join(podsRoot, uid))).toEqual([]);
      expect(podCgroupDirs.filter((p) => existsSync(p))).toEqual([]);
      expect(await readdir(volumes).catch(() => [])).toEqual([]);
      // Container GC removes the deleted pod's containers and sandbox.
      const leftInRuntime = async () => {
        const label = { 'io.kubernetes.pod.uid': uid };
        const { containers } = await agent.cri.runtime.listContainers({ filter: { labelSelector: label } });
        const { items } = await agent.cri.runtime.listPodSandbox({ filter: { labelSelector: label } });
        return containers.length + items.length;
      };
      await waitFor('no container or sandbox left', async () => (await leftInRuntime()) === 0, 20_000);
    }, 150_000);

    it('a pod whose volumes never came up: its mounted token volume is gone before the pod leaves the API', async () => {
      const c = shContainer('app', node.imageRef, 'sleep 3600');
      c.volumeMounts = [{ name: 'config', mountPath: '/etc/config' }];
      await agent.api.create(
        '/api/v1/namespaces/default/pods',
        makePod('broken', NODE, [c], {
          terminationGracePeriodSeconds: 5,
          volumes: [{ name: 'config', configMap: { name: 'does-not-exist' } }],
        }),
      );
      const uid = await waitFor('broken in the API', () => getPod('broken')?.metadata?.uid, 10_000);
      const podDir = join(podsRoot, uid);
      // The token volume is set up (tmpfs), the configMap volume is not: the pod never starts.
      await waitFor(
        'the token volume mounted',
        async () => (await mountsUnder(podDir)).some((m) => m.point.includes('kubernetes.io~projected')),
        20_000,
      );
      await waitFor(
        'FailedMount',
        () =>
          agent.apiServer?.store
            .list('events', 'default')
            .some((e) => (e as { reason?: string; message?: string }).reason === 'FailedMount'),
        20_000,
      );
      expect(getPod('broken')?.status?.containerStatuses?.[0]?.state?.running).toBeUndefined();

      await agent.api.delete('/api/v1/namespaces/default/pods/broken', { gracePeriodSeconds: 2 });
      // Poll the store closely: at the first moment the pod is gone, nothing may be mounted.
      const leftAtRemoval = await waitFor(
        'broken removed from the API',
        async () => (getPod('broken') === undefined ? await mountsUnder(podDir) : undefined),
        30_000,
      );
      expect(leftAtRemoval).toEqual([]);
      expect(await mountsUnder(podDir)).toEqual([]);
    }, 90_000);
  },
);
