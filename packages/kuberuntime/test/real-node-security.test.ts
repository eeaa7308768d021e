// runAsNonRoot and the managed /etc/hosts against a real containerd: the image user comes from
// containerd's ImageStatus (an image config `User` of none, `1000`, `nobody`), a root image is
// refused with the kubelet's CreateContainerConfigError message, a non-root one runs as that
// uid, and a running container reads the kubelet-format /etc/hosts with its IP and aliases.
import { join } from 'node:path';
import type { V1Container, V1Pod } from '@kubernetes/client-node';
import type { CriClient } from '@nodeagent/cri';
import { writeBusyboxImage } from '@nodeagent/test-support/busybox-image';
import { type NodeSandbox, startNodeSandbox } from '@nodeagent/test-support/node-sandbox';
import { describeRealNode, NODE_SANDBOX_REQUIREMENTS } from '@nodeagent/test-support/real-node';
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { KubeRuntimeManager } from '../src/index.js';
import { runtimeOn } from './support/real-runtime.js';

describeRealNode('kuberuntime security on a real containerd', NODE_SANDBOX_REQUIREMENTS, () => {
  let node: NodeSandbox;
  let cri: CriClient;
  let manager: KubeRuntimeManager;
  const pods: V1Pod[] = [];
  const USER_1000 = 'registry.local/busybox-user:1000';
  const USER_NAMED = 'registry.local/busybox-user:nobody';

  beforeAll(async () => {
    node = await startNodeSandbox({ name: 'krtsec' });
    for (const [ref, user, file] of [
      [USER_1000, '1000:1000', 'user-1000.tar'],
      [USER_NAMED, 'nobody', 'user-nobody.tar'],
    ] as const) {
      const path = join(node.rootDir, file);
      await writeBusyboxImage(path, { ref, user });
      await node.ctr(['images', 'import', '--snapshotter', node.snapshotter, path]);
    }
    ({ cri, manager } = runtimeOn(node));
  });
  afterAll(async () => {
    for (const pod of pods) {
      await manager?.killPod(pod, await manager.getPodStatus(pod)).catch(() => undefined);
    }
    cri?.close();
    await node?.stop();
  });

  const makePod = (name: string, image: string, extra: Partial<NonNullable<V1Pod['spec']>> = {}): V1Pod => {
    const container: V1Container = {
      name: 'app',
      image,
      imagePullPolicy: 'Never',
      command: ['sh', '-c', 'sleep 3600'],
    };
    const pod: V1Pod = {
      metadata: { name, namespace: 'sec', uid: `${name}-${process.pid}` },
      spec: { containers: [container], terminationGracePeriodSeconds: 1, ...extra },
    };
    pods.push(pod);
    return pod;
  };
  const sync = async (pod: V1Pod) => {
    const result = await manager.syncPod(pod, await manager.getPodStatus(pod));
    const status = await manager.getPodStatus(pod);
    return { result, status, api: manager.computePodStatus(pod, status) };
  };
  const exec = async (containerId: string, cmd: string[]) => {
    const r = await cri.runtime.execSync({ containerId, cmd, timeout: 10n });
    return r.stdout.toString('utf8');
  };

  it('refuses an image that runs as root under runAsNonRoot (CreateContainerConfigError, upstream message)', async () => {
    const pod = makePod('root-image', node.imageRef, { securityContext: { runAsNonRoot: true } });
    const { api, status } = await sync(pod);
    const message = `container has runAsNonRoot and image will run as root (pod: "root-image_sec(${pod.metadata?.uid})", container: app)`;
    expect(api.containerStatuses?.[0]?.state?.waiting).toEqual({
      reason: 'CreateContainerConfigError',
      message,
    });
    expect(status.containerStatuses).toHaveLength(0);
  });

  it('refuses an image whose user is a name', async () => {
    const pod = makePod('named-image', USER_NAMED, { securityContext: { runAsNonRoot: true } });
    const { api } = await sync(pod);
    expect(api.containerStatuses?.[0]?.state?.waiting).toEqual({
      reason: 'CreateContainerConfigError',
      message: `container has runAsNonRoot and image has non-numeric user (nobody), cannot verify user is non-root (pod: "named-image_sec(${pod.metadata?.uid})", container: app)`,
    });
  });

  it('runs an image whose user is 1000 as uid 1000, and the root image with runAsUser: 1000', async () => {
    const fromImage = makePod('user-image', USER_1000, { securityContext: { runAsNonRoot: true } });
    const a = await sync(fromImage);
    expect(a.result.error()).toBeUndefined();
    const idA = a.status.containerStatuses[0]?.id as string;
    expect(await exec(idA, ['id', '-u'])).toBe('1000\n');
    const explicit = makePod('explicit-user', node.imageRef, {
      securityContext: { runAsNonRoot: true, runAsUser: 1000 },
    });
    const b = await sync(explicit);
    expect(b.result.error()).toBeUndefined();
    expect(await exec(b.status.containerStatuses[0]?.id as string, ['id', '-u'])).toBe('1000\n');
  });

  it('a running container reads the kubelet-format /etc/hosts with its IP, FQDN and host aliases', async () => {
    const pod = makePod('hosts', node.imageRef, {
      hostname: 'h1',
      subdomain: 'sub',
      hostAliases: [{ ip: '10.1.2.3', hostnames: ['db', 'db.local'] }],
    });
    const { result, status } = await sync(pod);
    expect(result.error()).toBeUndefined();
    const ip = status.ips[0] as string;
    expect(ip).toBeTruthy();
    expect(await exec(status.containerStatuses[0]?.id as string, ['cat', '/etc/hosts'])).toBe(
      '# Kubernetes-managed hosts file.\n' +
        '127.0.0.1\tlocalhost\n' +
        '::1\tlocalhost ip6-localhost ip6-loopback\n' +
        'fe00::0\tip6-localnet\n' +
        'fe00::0\tip6-mcastprefix\n' +
        'fe00::1\tip6-allnodes\n' +
        'fe00::2\tip6-allrouters\n' +
        `${ip}\th1.sub.sec.svc.cluster.local\th1\n` +
        '\n# Entries added by HostAliases.\n' +
        '10.1.2.3\tdb\tdb.local\n',
    );
  });
});
