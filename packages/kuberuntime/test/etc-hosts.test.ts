import { readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { V1Pod } from '@kubernetes/client-node';
import type { ContainerConfig } from '@nodeagent/cri';
import { afterEach, describe, expect, it, onTestFinished } from 'vitest';
import { managedHostsFileContent } from '../src/etc-hosts.js';
import { type Harness, startHarness } from './harness.js';

// Expected contents as upstream's TestManagedHostsFileContent / TestNodeHostsFileContent spell them.
const LOCAL =
  '127.0.0.1\tlocalhost\n' +
  '::1\tlocalhost ip6-localhost ip6-loopback\n' +
  'fe00::0\tip6-localnet\n' +
  'fe00::0\tip6-mcastprefix\n' +
  'fe00::1\tip6-allnodes\n' +
  'fe00::2\tip6-allrouters\n';

describe('managedHostsFileContent (upstream kubelet_pods.go)', () => {
  it('one line per pod IP with the short name', () => {
    expect(managedHostsFileContent(['123.45.67.89'], 'podFoo', '', [])).toBe(
      `# Kubernetes-managed hosts file.\n${LOCAL}123.45.67.89\tpodFoo\n`,
    );
  });

  it('FQDN then short name with a domain; dual-stack IPs; host aliases with tabs', () => {
    expect(
      managedHostsFileContent(['203.0.113.1', 'fd00::6'], 'podFoo', 'domainFoo', [
        { ip: '123.45.67.89', hostnames: ['foo', 'bar', 'baz'] },
        { ip: '456.78.90.123', hostnames: ['park', 'doo', 'boo'] },
      ]),
    ).toBe(
      `# Kubernetes-managed hosts file.\n${LOCAL}` +
        '203.0.113.1\tpodFoo.domainFoo\tpodFoo\n' +
        'fd00::6\tpodFoo.domainFoo\tpodFoo\n' +
        '\n# Entries added by HostAliases.\n' +
        '123.45.67.89\tfoo\tbar\tbaz\n' +
        '456.78.90.123\tpark\tdoo\tboo\n',
    );
  });
});

describe('/etc/hosts mounted into containers (makeHostsMount)', () => {
  let h: Harness | undefined;
  afterEach(async () => {
    await h?.close();
    h = undefined;
  });

  function pod(spec: Partial<NonNullable<V1Pod['spec']>>): V1Pod {
    return {
      metadata: { name: 'web', namespace: 'shop', uid: 'uid-hosts' },
      spec: {
        containers: [{ name: 'app', image: 'busybox:1.36', imagePullPolicy: 'IfNotPresent' }],
        ...spec,
      },
    };
  }

  async function created(p: V1Pod): Promise<ContainerConfig[]> {
    if (h === undefined) throw new Error('no harness');
    const result = await h.manager.syncPod(p, await h.manager.getPodStatus(p));
    expect(result.error()).toBeUndefined();
    return h.fake.calls('CreateContainer').map((c) => (c.request as { config: ContainerConfig }).config);
  }

  it('writes <pods>/<uid>/etc-hosts (0644) with the pod IP, FQDN and aliases, mounted read-write', async () => {
    h = await startHarness({ podCidr: '10.88.0.0/24' });
    const [config] = await created(
      pod({
        hostname: 'h1',
        subdomain: 'sub',
        hostAliases: [{ ip: '10.1.2.3', hostnames: ['db', 'db.local'] }],
      }),
    );
    const file = join(h.dir, 'pods', 'uid-hosts', 'etc-hosts');
    const mount = config?.mounts.find((m) => m.containerPath === '/etc/hosts');
    expect(mount).toMatchObject({ hostPath: file, readonly: false, selinuxRelabel: true });
    // Before the termination message file, after the volumes.
    expect(config?.mounts.map((m) => m.containerPath)).toEqual(['/etc/hosts', '/dev/termination-log']);
    const ip = readFileSync(file, 'utf8').split('\n')[7]?.split('\t')[0] ?? '';
    expect(ip).toMatch(/^10\.88\.0\.\d+$/);
    expect(readFileSync(file, 'utf8')).toBe(
      `# Kubernetes-managed hosts file.\n${LOCAL}${ip}\th1.sub.shop.svc.cluster.local\th1\n` +
        '\n# Entries added by HostAliases.\n10.1.2.3\tdb\tdb.local\n',
    );
    expect(statSync(file).mode & 0o777).toBe(0o644);
  });

  it('a container that mounts /etc/hosts itself gets no managed file', async () => {
    h = await startHarness();
    const [config] = await created(
      pod({
        volumes: [{ name: 'own', emptyDir: {} }],
        containers: [
          {
            name: 'app',
            image: 'busybox:1.36',
            imagePullPolicy: 'IfNotPresent',
            volumeMounts: [{ name: 'own', mountPath: '/etc/hosts' }],
          },
        ],
      }),
    );
    expect(config?.mounts.filter((m) => m.containerPath === '/etc/hosts')).toHaveLength(1);
    expect(config?.mounts.find((m) => m.containerPath === '/etc/hosts')?.hostPath).not.toMatch(/etc-hosts$/);
  });

  it("host network: the node's hosts file under the host-network header, plus the aliases", async () => {
    const nodeHosts = join(tmpdir(), `node-hosts-${process.pid}`);
    writeFileSync(nodeHosts, '127.0.0.1\tlocalhost\n192.0.2.10\tnode-1\n');
    onTestFinished(() => rmSync(nodeHosts, { force: true }));
    h = await startHarness({}, { hostIps: ['192.0.2.10'], nodeHostsFile: nodeHosts });
    await created(pod({ hostNetwork: true, hostAliases: [{ ip: '10.1.2.3', hostnames: ['db'] }] }));
    expect(readFileSync(join(h.dir, 'pods', 'uid-hosts', 'etc-hosts'), 'utf8')).toBe(
      '# Kubernetes-managed hosts file (host network).\n127.0.0.1\tlocalhost\n192.0.2.10\tnode-1\n' +
        '\n# Entries added by HostAliases.\n10.1.2.3\tdb\n',
    );
  });
});
