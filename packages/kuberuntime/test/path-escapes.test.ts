// Hostile pod specs against the runtime manager on the fake runtime: names and subPaths that
// would leave the pod directories are refused (CreateContainerConfigError naming the field, or
// the kubelet's own subPath messages), symlinks planted inside an emptyDir are never followed
// out of it, and after every case nothing exists outside the roots the test created.
import { mkdirSync, readdirSync, rmSync, symlinkSync } from 'node:fs';
import { join, relative } from 'node:path';
import type { V1Container, V1Pod } from '@kubernetes/client-node';
import type { ContainerConfig } from '@nodeagent/cri';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { KubeRuntimeManager } from '../src/index.js';
import { emptyDirPath } from '../src/paths.js';
import { type Harness, startHarness } from './harness.js';

let h: Harness;
let manager: KubeRuntimeManager;
let roots: { pods: string; logs: string; outside: string };

// The roots sit 8 levels below the harness directory: the hostile values climb at most 7 levels,
// so even if a check regressed, what escapes stays in the harness directory (and is found there).
const CHAIN = ['a', 'b', 'c', 'd', 'e', 'f', 'g', 'h'];

async function setUp(fakeOptions: Parameters<typeof startHarness>[0] = {}): Promise<void> {
  h = await startHarness(fakeOptions);
  const deep = join(h.dir, ...CHAIN);
  roots = { pods: join(deep, 'pods'), logs: join(deep, 'logs'), outside: join(h.dir, 'outside') };
  mkdirSync(roots.outside);
  manager = h.newManager({ podsRoot: roots.pods, podLogsRoot: roots.logs });
}

beforeEach(async () => {
  await setUp();
});
afterEach(async () => {
  await h.close();
});

/** Every path under the harness directory that is not under a root (the roots' parents aside). */
function outsideRoots(): string[] {
  const found: string[] = [];
  const walk = (dir: string): void => {
    for (const e of readdirSync(dir, { withFileTypes: true })) {
      const p = join(dir, e.name);
      if (p === roots.pods || p === roots.logs || p === roots.outside) continue;
      const chain = CHAIN.some((_, i) => p === join(h.dir, ...CHAIN.slice(0, i + 1)));
      if (!chain) found.push(relative(h.dir, p));
      if (e.isDirectory()) walk(p);
    }
  };
  walk(h.dir);
  return found.concat(readdirSync(roots.outside).map((n) => `outside/${n}`));
}

const UP7 = '../../../../../../..';
const ctr = (extra: Partial<V1Container> = {}): V1Container => ({
  name: 'app',
  image: 'busybox:1.36',
  imagePullPolicy: 'IfNotPresent',
  ...extra,
});
function pod(
  spec: Partial<NonNullable<V1Pod['spec']>>,
  meta: Partial<NonNullable<V1Pod['metadata']>> = {},
): V1Pod {
  return {
    metadata: { name: 'web', namespace: 'default', uid: 'uid-web', ...meta },
    spec: { containers: [ctr()], volumes: [{ name: 'vol', emptyDir: {} }], ...spec },
  };
}
const mountVol = (extra: Record<string, string> = {}) => ({
  volumeMounts: [{ name: 'vol', mountPath: '/v', ...extra }],
});

async function startError(p: V1Pod, container = 'app') {
  const result = await manager.syncPod(p, await manager.getPodStatus(p));
  const step = result.results.find((r) => r.action === 'StartContainer' && r.target === container);
  return step?.error;
}

function createdMounts(): ContainerConfig['mounts'][] {
  return h.fake.calls('CreateContainer').map((c) => (c.request as { config: ContainerConfig }).config.mounts);
}

describe('hostile pod specs are refused before anything leaves the roots', () => {
  const refused: [string, V1Pod, RegExp][] = [
    [
      'subPath with ..',
      pod({ containers: [ctr(mountVol({ subPath: `${UP7}/escaped` }))] }),
      /spec\.containers\[0\]\.volumeMounts\[0\]\.subPath: Invalid value: ".*": must not contain '\.\.'/,
    ],
    [
      'absolute subPath',
      pod({ containers: [ctr(mountVol({ subPath: '/tmp/escaped-abs' }))] }),
      /volumeMounts\[0\]\.subPath: Invalid value: "\/tmp\/escaped-abs": must be a relative path/,
    ],
    [
      'subPathExpr expanding to ..',
      pod({
        containers: [
          ctr({ env: [{ name: 'X', value: `${UP7}/escaped` }], ...mountVol({ subPathExpr: '$(X)' }) }),
        ],
      }),
      /^unable to provision SubPath `\.\.\/.*\/escaped`: must not contain '\.\.'$/,
    ],
    [
      'subPathExpr expanding to an absolute path',
      pod({
        containers: [
          ctr({ env: [{ name: 'X', value: '/tmp/escaped-abs' }], ...mountVol({ subPathExpr: '$(X)' }) }),
        ],
      }),
      /^error SubPath `\/tmp\/escaped-abs` must not be an absolute path$/,
    ],
    [
      'subPathExpr with an unset variable',
      pod({ containers: [ctr(mountVol({ subPathExpr: 'logs/$(NOPE)/$(EMPTY)' }))] }),
      /^missing value for EMPTY, NOPE$/,
    ],
    [
      'volume name with ..',
      pod({ volumes: [{ name: `${UP7}/escaped`, emptyDir: {} }], containers: [ctr()] }),
      /spec\.volumes\[0\]\.name: Invalid value: ".*": a lowercase RFC 1123 label/,
    ],
    [
      'overlong volume name',
      pod({ volumes: [{ name: 'v'.repeat(64), emptyDir: {} }], containers: [ctr()] }),
      /spec\.volumes\[0\]\.name: .*must be no more than 63 characters/,
    ],
    [
      'container name with a slash',
      pod({ containers: [ctr({ name: `${UP7}/escaped` })] }),
      /spec\.containers\[0\]\.name: Invalid value/,
    ],
    [
      'pod UID with ..',
      pod({}, { uid: `${UP7}/escaped` }),
      /metadata\.uid: Invalid value: ".*": must not contain '\/'/,
    ],
    [
      'pod UID ..',
      pod({}, { uid: '..' }),
      /metadata\.uid: Invalid value: "\.\.": must not be '\.' or '\.\.'/,
    ],
    [
      'namespace with a slash',
      pod({}, { namespace: `${UP7}/escaped` }),
      /metadata\.namespace: Invalid value/,
    ],
    ['name with a newline', pod({}, { name: 'web\nx' }), /metadata\.name: Invalid value: "web\\nx"/],
    ['name with a quote', pod({}, { name: 'we"b' }), /metadata\.name: Invalid value: "we\\"b"/],
    [
      'overlong name',
      pod({}, { name: 'a'.repeat(254) }),
      /metadata\.name: Invalid value: "a+": must be no more than 253 characters/,
    ],
  ];

  it.each(refused)(
    '%s: CreateContainerConfigError, nothing created outside the roots',
    async (_, p, message) => {
      const container = p.spec?.containers[0]?.name ?? 'app';
      const err = await startError(p, container);
      expect(err?.reason).toBe('CreateContainerConfigError');
      expect(err?.message).toMatch(message);
      expect(h.fake.calls('CreateContainer')).toHaveLength(0);
      expect(outsideRoots()).toEqual([]);
      const api = manager.computePodStatus(p, await manager.getPodStatus(p));
      expect(api.containerStatuses?.[0]?.state?.waiting?.reason).toBe('CreateContainerConfigError');
    },
  );

  it('pod-level names refuse the pod before a sandbox exists', async () => {
    await startError(pod({}, { uid: `${UP7}/escaped` }));
    expect(h.fake.callNames()).not.toContain('RunPodSandbox');
    expect(outsideRoots()).toEqual([]);
  });

  it('URL-encoded dots are file names, as for the kubelet: the subPath stays inside the volume', async () => {
    const p = pod({ containers: [ctr(mountVol({ subPath: '%2e%2e/%2e%2e/x' }))] });
    expect(await startError(p)).toBeUndefined();
    const vol = emptyDirPath(roots.pods, 'uid-web', 'vol');
    expect(createdMounts()[0]?.[0]?.hostPath).toBe(join(vol, '%2e%2e', '%2e%2e', 'x'));
    expect(readdirSync(join(vol, '%2e%2e', '%2e%2e'))).toEqual(['x']);
    expect(outsideRoots()).toEqual([]);
  });
});

describe('symlinks planted inside an emptyDir', () => {
  const vol = () => emptyDirPath(roots.pods, 'uid-web', 'vol');
  /** Starts a pod that only creates the volume, then plants `links` in it. */
  async function plant(links: Record<string, string>): Promise<void> {
    const first = pod({ containers: [ctr(mountVol())] }, { uid: 'uid-web' });
    expect(await startError(first)).toBeUndefined();
    for (const [name, target] of Object.entries(links)) symlinkSync(target, join(vol(), name));
  }
  const second = (subPath: string) =>
    pod(
      { containers: [ctr({ name: 'second', ...mountVol({ subPath }) })] },
      { name: 'web2', uid: 'uid-web' },
    );

  it.each([
    ['a symlink to / as the subPath', { link: '/' }, 'link'],
    ['a directory below a symlink to /', { link: '/' }, 'link/tmp'],
    ['a new directory below a symlink to a directory outside', { out: '' }, 'out/created'],
    ['a relative symlink climbing out', { up: UP7 }, 'up/outside/created'],
    ['a chain of symlinks ending outside', { one: 'two', two: '' }, 'one/created'],
  ])('%s is refused; nothing is created outside', async (_, links, subPath) => {
    const resolved = Object.fromEntries(
      Object.entries(links).map(([k, v]) => [k, v === '' ? roots.outside : v]),
    );
    await plant(resolved);
    const err = await startError(second(subPath), 'second');
    expect(err?.reason).toBe('CreateContainerConfigError');
    expect(err?.message).toBe('failed to prepare subPath for volumeMount "vol" of container "second"');
    expect(createdMounts()).toHaveLength(1);
    expect(outsideRoots()).toEqual([]);
  });

  it('a symlink that stays inside the volume is followed, and the resolved path is mounted', async () => {
    await plant({ inner: 'real' });
    mkdirSync(join(vol(), 'real'));
    expect(await startError(second('inner/data'), 'second')).toBeUndefined();
    expect(createdMounts()[1]?.[0]?.hostPath).toBe(join(vol(), 'real', 'data'));
    expect(outsideRoots()).toEqual([]);
  });

  it('a subPath swapped for a symlink after the container started is refused at the restart', async () => {
    await h.close();
    await setUp({ behaviours: [{ match: { name: 'app' }, behaviour: { crashOnStart: true, exitCode: 1 } }] });
    const p = pod({ containers: [ctr(mountVol({ subPath: 'data' }))] });
    expect(await startError(p)).toBeUndefined();
    rmSync(join(vol(), 'data'), { recursive: true });
    symlinkSync(roots.outside, join(vol(), 'data'));
    await h.clock.advance(11_000);
    const err = await startError(p);
    expect(err?.message).toBe('failed to prepare subPath for volumeMount "vol" of container "app"');
    expect(createdMounts()).toHaveLength(1);
    expect(outsideRoots()).toEqual([]);
  });
});
