// Each plugin as upstream's: paths, modes, payloads, messages; tmpfs through the fake mounter.
import { mkdir, readdir, readFile, readlink, stat, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { join } from 'node:path';
import type { V1Volume } from '@kubernetes/client-node';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  checkHostPathType,
  configMapPlugin,
  downwardApiPlugin,
  emptyDirPlugin,
  hostPathPlugin,
  podMemoryLimitBytes,
  projectedPlugin,
  secretPlugin,
  VolumeError,
  type VolumePlugin,
} from '../src/index.js';
import { fakeHost, makePod, tempRoot } from './helpers.js';

// A group the process may give files to: any as root (the ownership change is real), its own
// group otherwise (chown can only keep it, the mode bits are still checked).
const IS_ROOT = process.getuid?.() === 0;
const G1 = IS_ROOT ? 4321 : (process.getgid?.() ?? 0);
const G2 = IS_ROOT ? 2000 : G1;
const G3 = IS_ROOT ? 3000 : G1;

let root: { dir: string; cleanup: () => Promise<void> };
beforeEach(async () => {
  root = await tempRoot();
});
afterEach(async () => {
  await root.cleanup();
});

async function setUp(
  plugin: VolumePlugin,
  volume: V1Volume,
  podOver = {},
  host = fakeHost(join(root.dir, 'pods')),
) {
  const pod = makePod([volume], podOver);
  const dir = plugin.getPath(host, pod, volume);
  await plugin.setUp(host, { pod, volume, dir });
  return { host, pod, dir };
}

async function failure(p: Promise<unknown>): Promise<VolumeError> {
  const err = await p.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(VolumeError);
  return err as VolumeError;
}

describe('emptyDir', () => {
  it('is a 0777 directory at <pods>/<uid>/volumes/kubernetes.io~empty-dir/<name>, removed on tear-down', async () => {
    const { host, dir } = await setUp(emptyDirPlugin, { name: 'scratch', emptyDir: {} });
    expect(dir).toBe(join(root.dir, 'pods/uid-1/volumes/kubernetes.io~empty-dir/scratch'));
    expect((await stat(dir)).mode & 0o777).toBe(0o777);
    expect(host.mounter.mounts.size).toBe(0);
    await writeFile(join(dir, 'f'), 'x');
    await emptyDirPlugin.tearDown(host, dir);
    expect(await readdir(join(root.dir, 'pods/uid-1/volumes/kubernetes.io~empty-dir'))).toEqual([]);
  });

  it('medium Memory mounts a tmpfs with size=sizeLimit (bytes) and unmounts it on tear-down', async () => {
    const { host, dir } = await setUp(emptyDirPlugin, {
      name: 'mem',
      emptyDir: { medium: 'Memory', sizeLimit: '64Mi' },
    });
    expect(host.mounter.mounts.get(dir)).toEqual({ dir, sizeBytes: 64n * 1024n * 1024n });
    await emptyDirPlugin.tearDown(host, dir);
    expect(host.mounter.mounts.size).toBe(0);
    expect(host.mounter.log).toEqual([`mount ${dir}`, `unmount ${dir}`]);
  });

  it('sizes a memory volume as calculateEmptyDirMemorySize: node allocatable, else the pod limit, else sizeLimit', async () => {
    const a = await setUp(emptyDirPlugin, { name: 'm', emptyDir: { medium: 'Memory' } });
    expect(a.host.mounter.mounts.get(a.dir)?.sizeBytes).toBe(8n * 1024n ** 3n);
    const limited = {
      containers: [
        {
          name: 'app',
          image: 'x',
          resources: { limits: { memory: '256Mi' } },
          volumeMounts: [{ name: 'm', mountPath: '/m' }],
        },
      ],
    };
    const b = await setUp(
      emptyDirPlugin,
      { name: 'm', emptyDir: { medium: 'Memory' } },
      limited,
      fakeHost(join(root.dir, 'p2')),
    );
    expect(b.host.mounter.mounts.get(b.dir)?.sizeBytes).toBe(256n * 1024n ** 2n);
    // A sizeLimit above what the pod may use is ignored.
    const c = await setUp(
      emptyDirPlugin,
      { name: 'm', emptyDir: { medium: 'Memory', sizeLimit: '1Gi' } },
      limited,
      fakeHost(join(root.dir, 'p3')),
    );
    expect(c.host.mounter.mounts.get(c.dir)?.sizeBytes).toBe(256n * 1024n ** 2n);
  });

  it('pod memory limit: app containers summed, the largest init container if larger, overhead added; undefined without limits', () => {
    const pod = makePod([], {
      initContainers: [{ name: 'i', image: 'x', resources: { limits: { memory: '1Gi' } } }],
      containers: [
        { name: 'a', image: 'x', resources: { limits: { memory: '100Mi' } } },
        { name: 'b', image: 'x', resources: { limits: { memory: '100Mi' } } },
      ],
      overhead: { memory: '10Mi' },
    });
    expect(podMemoryLimitBytes(pod)).toBe((1024n + 10n) * 1024n * 1024n);
    expect(podMemoryLimitBytes(makePod([]))).toBeUndefined();
  });

  it('does not mount twice when set up again', async () => {
    const { host, pod, dir } = await setUp(emptyDirPlugin, { name: 'mem', emptyDir: { medium: 'Memory' } });
    await emptyDirPlugin.setUp(host, { pod, volume: { name: 'mem', emptyDir: { medium: 'Memory' } }, dir });
    expect(host.mounter.log).toEqual([`mount ${dir}`]);
  });

  it("memoryMedium 'directory' keeps memory volumes in plain directories", async () => {
    const host = { ...fakeHost(join(root.dir, 'pods')), memoryMedium: 'directory' as const };
    const { dir } = await setUp(emptyDirPlugin, { name: 'mem', emptyDir: { medium: 'Memory' } }, {}, host);
    expect(host.mounter.mounts.size).toBe(0);
    expect((await stat(dir)).isDirectory()).toBe(true);
  });

  it('refuses HugePages media', async () => {
    const err = await failure(setUp(emptyDirPlugin, { name: 'h', emptyDir: { medium: 'HugePages' } }));
    expect(err.code).toBe('unsupported');
  });

  it('gives the volume to fsGroup with setgid (SetVolumeOwnership)', async () => {
    const { dir } = await setUp(
      emptyDirPlugin,
      { name: 'g', emptyDir: {} },
      { securityContext: { fsGroup: G1 } },
    );
    const st = await stat(dir);
    expect(st.gid).toBe(G1);
    expect(st.mode & 0o7777).toBe(0o2777);
  });
});

describe('hostPath', () => {
  it('mounts the host path itself; an unset type checks nothing', async () => {
    const { dir } = await setUp(hostPathPlugin, { name: 'h', hostPath: { path: '/nonexistent/x' } });
    expect(dir).toBe('/nonexistent/x');
  });

  it('DirectoryOrCreate creates 0755, FileOrCreate an empty 0644 file', async () => {
    const d = join(root.dir, 'made/deep');
    await checkHostPathType(d, 'DirectoryOrCreate');
    expect((await stat(d)).isDirectory()).toBe(true);
    expect((await stat(d)).mode & 0o777).toBe(0o755 & ~process.umask());
    const f = join(root.dir, 'made/file');
    await checkHostPathType(f, 'FileOrCreate');
    expect((await stat(f)).size).toBe(0);
    // Existing ones are only checked.
    await checkHostPathType(d, 'Directory');
    await checkHostPathType(f, 'File');
  });

  it.each([
    ['Directory', 'file', 'directory'],
    ['DirectoryOrCreate', 'file', 'directory'],
    ['File', 'dir', 'file'],
    ['FileOrCreate', 'dir', 'file'],
    ['Socket', 'file', 'socket file'],
    ['CharDevice', 'file', 'character device'],
    ['BlockDevice', 'file', 'block device'],
    ['Directory', 'missing', 'directory'],
    ['File', 'missing', 'file'],
  ])('%s on a %s fails with "hostPath type check failed: <path> is not a %s"', async (type, what, desc) => {
    await mkdir(join(root.dir, 'dir'));
    await writeFile(join(root.dir, 'file'), '');
    const p = join(root.dir, what);
    const err = await failure(checkHostPathType(p, type));
    expect(err.message).toBe(`hostPath type check failed: ${p} is not a ${desc}`);
    expect(err.code).toBe('type-check');
  });

  it('accepts a socket, a character device; refuses an unknown type and a path with ..', async () => {
    const sock = join(root.dir, 's.sock');
    const server = createServer();
    await new Promise<void>((r) => server.listen(sock, r));
    try {
      await checkHostPathType(sock, 'Socket');
    } finally {
      await new Promise((r) => server.close(r));
    }
    await checkHostPathType('/dev/null', 'CharDevice');
    await expect(checkHostPathType('/dev/null', 'BlockDevice')).rejects.toThrow(
      'hostPath type check failed: /dev/null is not a block device',
    );
    expect((await failure(checkHostPathType('/tmp', 'Dir'))).message).toBe('Dir is an invalid volume type');
    const err = await failure(setUp(hostPathPlugin, { name: 'h', hostPath: { path: '/a/../etc' } }));
    expect(err.message).toBe("invalid HostPath `/a/../etc`: must not contain '..'");
  });
});

describe('configMap', () => {
  it('writes every key (data and binaryData) with defaultMode 0644 through ..data on disk', async () => {
    const host = fakeHost(join(root.dir, 'pods'));
    host.source.putConfigMap(
      'default',
      'cfg',
      { 'a.conf': 'A' },
      { bin: Buffer.from([0, 1, 2]).toString('base64') },
    );
    const { dir } = await setUp(configMapPlugin, { name: 'c', configMap: { name: 'cfg' } }, {}, host);
    expect(dir).toBe(join(root.dir, 'pods/uid-1/volumes/kubernetes.io~configmap/c'));
    expect(await readFile(join(dir, 'a.conf'), 'utf8')).toBe('A');
    expect([...(await readFile(join(dir, 'bin')))]).toEqual([0, 1, 2]);
    expect((await stat(join(dir, 'a.conf'))).mode & 0o777).toBe(0o644);
    expect(await readlink(join(dir, 'a.conf'))).toBe('..data/a.conf');
    expect(host.mounter.mounts.size).toBe(0);
  });

  it('items pick keys to paths with per-item modes over defaultMode', async () => {
    const host = fakeHost(join(root.dir, 'pods'));
    host.source.putConfigMap('default', 'cfg', { a: 'A', b: 'B' });
    const { dir } = await setUp(
      configMapPlugin,
      {
        name: 'c',
        configMap: {
          name: 'cfg',
          defaultMode: 0o600,
          items: [
            { key: 'a', path: 'x/a.txt' },
            { key: 'b', path: 'b', mode: 0o400 },
          ],
        },
      },
      {},
      host,
    );
    const entries = await readdir(dir);
    expect(entries.filter((e) => /^\.\.\d{4}_/.test(e))).toHaveLength(1);
    expect(entries.filter((e) => !/^\.\.\d{4}_/.test(e)).sort()).toEqual(['..data', 'b', 'x']);
    expect((await stat(join(dir, 'x/a.txt'))).mode & 0o777).toBe(0o600);
    expect((await stat(join(dir, 'b'))).mode & 0o777).toBe(0o400);
  });

  it('a missing ConfigMap: configmaps "<name>" not found; optional: an empty volume', async () => {
    const err = await failure(setUp(configMapPlugin, { name: 'c', configMap: { name: 'nope' } }));
    expect(err.message).toBe('configmaps "nope" not found');
    expect(err.code).toBe('not-found');
    const { dir } = await setUp(
      configMapPlugin,
      { name: 'c', configMap: { name: 'nope', optional: true } },
      {},
      fakeHost(join(root.dir, 'p2')),
    );
    const entries = await readdir(dir);
    expect(entries).toHaveLength(2);
    expect(entries).toContain('..data');
  });

  it('a missing key: configmap references non-existent config key: <key> (unless optional)', async () => {
    const host = fakeHost(join(root.dir, 'pods'));
    host.source.putConfigMap('default', 'cfg', { a: 'A' });
    const err = await failure(
      setUp(
        configMapPlugin,
        { name: 'c', configMap: { name: 'cfg', items: [{ key: 'zz', path: 'z' }] } },
        {},
        host,
      ),
    );
    expect(err.message).toBe('configmap references non-existent config key: zz');
    const ok = await setUp(
      configMapPlugin,
      {
        name: 'c',
        configMap: {
          name: 'cfg',
          optional: true,
          items: [
            { key: 'zz', path: 'z' },
            { key: 'a', path: 'a' },
          ],
        },
      },
      {},
      host,
    );
    expect(await readFile(join(ok.dir, 'a'), 'utf8')).toBe('A');
  });

  it('fsGroup: files group-readable and owned by the group, directories setgid', async () => {
    const host = fakeHost(join(root.dir, 'pods'));
    host.source.putConfigMap('default', 'cfg', { a: 'A' });
    const { dir } = await setUp(
      configMapPlugin,
      { name: 'c', configMap: { name: 'cfg', defaultMode: 0o600 } },
      { securityContext: { fsGroup: G2 } },
      host,
    );
    const st = await stat(join(dir, 'a'));
    expect(st.gid).toBe(G2);
    expect(st.mode & 0o777).toBe(0o640);
    const ts = await readlink(join(dir, '..data'));
    expect((await stat(join(dir, ts))).mode & 0o7777).toBe(0o2755);
  });
});

describe('secret', () => {
  it('decodes data onto a tmpfs at kubernetes.io~secret, never plain disk', async () => {
    const host = fakeHost(join(root.dir, 'pods'));
    host.source.putSecret('default', 's', { password: 'hunter2' });
    const { dir } = await setUp(secretPlugin, { name: 'creds', secret: { secretName: 's' } }, {}, host);
    expect(dir).toBe(join(root.dir, 'pods/uid-1/volumes/kubernetes.io~secret/creds'));
    expect(host.mounter.mounts.has(dir)).toBe(true);
    expect(await readFile(join(dir, 'password'), 'utf8')).toBe('hunter2');
  });

  it('messages: secrets "<name>" not found; references non-existent secret key: <key>', async () => {
    expect((await failure(setUp(secretPlugin, { name: 's', secret: { secretName: 'x' } }))).message).toBe(
      'secrets "x" not found',
    );
    const host = fakeHost(join(root.dir, 'p2'));
    host.source.putSecret('default', 's', { a: '1' });
    const err = await failure(
      setUp(
        secretPlugin,
        { name: 's', secret: { secretName: 's', items: [{ key: 'k', path: 'k' }] } },
        {},
        host,
      ),
    );
    expect(err.message).toBe('references non-existent secret key: k');
  });
});

describe('downwardAPI', () => {
  it('writes labels and annotations as FormatMap, metadata fields, and subscripted keys', async () => {
    const host = fakeHost(join(root.dir, 'pods'));
    const volume: V1Volume = {
      name: 'info',
      downwardAPI: {
        items: [
          { path: 'labels', fieldRef: { fieldPath: 'metadata.labels' } },
          { path: 'annotations', fieldRef: { fieldPath: 'metadata.annotations' } },
          { path: 'name', fieldRef: { fieldPath: 'metadata.name' } },
          { path: 'ns', fieldRef: { fieldPath: 'metadata.namespace' } },
          { path: 'uid', fieldRef: { fieldPath: 'metadata.uid' }, mode: 0o400 },
          { path: 'one', fieldRef: { fieldPath: "metadata.annotations['x/y']" } },
        ],
      },
    };
    const pod = makePod([volume]);
    pod.metadata = { ...pod.metadata, labels: { b: '2', a: 'one "q"' }, annotations: { 'x/y': 'v\n' } };
    const dir = downwardApiPlugin.getPath(host, pod, volume);
    await downwardApiPlugin.setUp(host, { pod, volume, dir });
    expect(dir).toBe(join(root.dir, 'pods/uid-1/volumes/kubernetes.io~downward-api/info'));
    expect(await readFile(join(dir, 'labels'), 'utf8')).toBe('a="one \\"q\\""\nb="2"');
    expect(await readFile(join(dir, 'annotations'), 'utf8')).toBe('x/y="v\\n"');
    expect(await readFile(join(dir, 'name'), 'utf8')).toBe('web');
    expect(await readFile(join(dir, 'ns'), 'utf8')).toBe('default');
    expect(await readFile(join(dir, 'uid'), 'utf8')).toBe('uid-1');
    expect(await readFile(join(dir, 'one'), 'utf8')).toBe('v\n');
    expect((await stat(join(dir, 'uid'))).mode & 0o777).toBe(0o400);
    expect(host.mounter.mounts.has(dir)).toBe(true);
  });

  it.each([
    ['limits.cpu', undefined, '2'],
    ['limits.cpu', '1m', '2000'],
    ['requests.cpu', undefined, '1'], // 250m rounded up
    ['requests.cpu', '1m', '250'],
    ['limits.memory', '1Mi', '512'],
    ['requests.memory', undefined, String(100 * 1024 * 1024)],
    ['limits.ephemeral-storage', '1Gi', '100'], // unset: node allocatable
    ['requests.ephemeral-storage', undefined, '0'],
  ])('resourceFieldRef %s with divisor %s = %s (ceil, as upstream)', async (resource, divisor, want) => {
    const host = fakeHost(join(root.dir, 'pods'));
    const volume: V1Volume = {
      name: 'res',
      downwardAPI: {
        items: [
          {
            path: 'v',
            resourceFieldRef: { containerName: 'app', resource, ...(divisor ? { divisor } : {}) },
          },
        ],
      },
    };
    const pod = makePod([volume]);
    const c = pod.spec?.containers[0];
    if (c)
      c.resources = { limits: { cpu: '2', memory: '512Mi' }, requests: { cpu: '250m', memory: '100Mi' } };
    const dir = downwardApiPlugin.getPath(host, pod, volume);
    await downwardApiPlugin.setUp(host, { pod, volume, dir });
    expect(await readFile(join(dir, 'v'), 'utf8')).toBe(want);
  });

  it('unset cpu limit falls back to node allocatable; bad refs fail with upstream messages, aggregated', async () => {
    const host = fakeHost(join(root.dir, 'pods'));
    const ok = await setUp(
      downwardApiPlugin,
      {
        name: 'd',
        downwardAPI: {
          items: [{ path: 'c', resourceFieldRef: { containerName: 'app', resource: 'limits.cpu' } }],
        },
      },
      {},
      host,
    );
    expect(await readFile(join(ok.dir, 'c'), 'utf8')).toBe('4');
    const err = await failure(
      setUp(
        downwardApiPlugin,
        {
          name: 'd',
          downwardAPI: {
            items: [
              { path: 'a', fieldRef: { fieldPath: 'spec.nodeName' } },
              { path: 'b', resourceFieldRef: { containerName: 'nope', resource: 'limits.cpu' } },
            ],
          },
        },
        {},
        fakeHost(join(root.dir, 'p2')),
      ),
    );
    expect(err.message).toBe('[unsupported fieldPath: spec.nodeName, container nope not found]');
  });
});

describe('projected', () => {
  it('merges configMap, secret, downwardAPI and a service-account token requested for the pod', async () => {
    const host = fakeHost(join(root.dir, 'pods'));
    host.source.putConfigMap('default', 'kube-root-ca.crt', { 'ca.crt': 'CA' });
    host.source.putSecret('default', 's', { k: 'v' });
    const volume: V1Volume = {
      name: 'kube-api-access-abcde',
      projected: {
        defaultMode: 0o644,
        sources: [
          { serviceAccountToken: { path: 'token', expirationSeconds: 3607 } },
          { configMap: { name: 'kube-root-ca.crt', items: [{ key: 'ca.crt', path: 'ca.crt' }] } },
          {
            downwardAPI: {
              items: [{ path: 'namespace', fieldRef: { apiVersion: 'v1', fieldPath: 'metadata.namespace' } }],
            },
          },
          { secret: { name: 's' } },
        ],
      },
    };
    const { dir } = await setUp(projectedPlugin, volume, { serviceAccountName: 'builder' }, host);
    expect(dir).toBe(join(root.dir, 'pods/uid-1/volumes/kubernetes.io~projected/kube-api-access-abcde'));
    expect(host.mounter.mounts.has(dir)).toBe(true);
    expect((await readdir(dir)).filter((e) => !e.startsWith('..')).sort()).toEqual([
      'ca.crt',
      'k',
      'namespace',
      'token',
    ]);
    expect(await readFile(join(dir, 'token'), 'utf8')).toBe('token-1-');
    expect((await stat(join(dir, 'token'))).mode & 0o777).toBe(0o644);
    expect(host.source.tokenRequests).toEqual([
      {
        namespace: 'default',
        name: 'builder',
        spec: {
          audiences: [],
          expirationSeconds: 3607,
          boundObjectRef: { apiVersion: 'v1', kind: 'Pod', name: 'web', uid: 'uid-1' },
        },
      },
    ]);
  });

  it('audience and the API default of 3600 s; the default service account; 0600 (0640 after ownership) with fsGroup', async () => {
    const host = fakeHost(join(root.dir, 'pods'));
    const volume: V1Volume = {
      name: 'p',
      projected: { sources: [{ serviceAccountToken: { path: 't', audience: 'vault' } }] },
    };
    const { dir } = await setUp(projectedPlugin, volume, { securityContext: { fsGroup: G3 } }, host);
    expect(host.source.tokenRequests[0]).toMatchObject({
      name: 'default',
      spec: { audiences: ['vault'], expirationSeconds: 3600 },
    });
    expect((await stat(join(dir, 't'))).mode & 0o777).toBe(0o640);
    expect((await stat(join(dir, 't'))).gid).toBe(G3);
  });

  it('refuses expirationSeconds under 600, clusterTrustBundle sources, and reports token failures', async () => {
    const short = await failure(
      setUp(projectedPlugin, {
        name: 'p',
        projected: { sources: [{ serviceAccountToken: { path: 't', expirationSeconds: 599 } }] },
      }),
    );
    expect(short.message).toBe(
      'serviceAccountToken.expirationSeconds: Invalid value: 599: may not specify a duration less than 10 minutes',
    );
    const ctb = await failure(
      setUp(
        projectedPlugin,
        { name: 'p', projected: { sources: [{ clusterTrustBundle: { path: 'b', signerName: 'x' } }] } },
        {},
        fakeHost(join(root.dir, 'p2')),
      ),
    );
    expect(ctb.message).toBe('clusterTrustBundle projections are not supported by this node agent');
    const host = fakeHost(join(root.dir, 'p3'));
    host.source.tokenFailWith = new Error('serviceaccounts "default" not found');
    const tok = await failure(
      setUp(
        projectedPlugin,
        {
          name: 'p',
          projected: { sources: [{ serviceAccountToken: { path: 't' } }, { configMap: { name: 'gone' } }] },
        },
        {},
        host,
      ),
    );
    expect(tok.message).toBe(
      '[failed to fetch token: serviceaccounts "default" not found, configmaps "gone" not found]',
    );
  });
});
