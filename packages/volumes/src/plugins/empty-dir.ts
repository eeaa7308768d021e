/**
 * emptyDir (upstream `pkg/volume/emptydir`): a directory under the pod's directory, mode 0777,
 * on disk or — with `medium: Memory` — on a tmpfs sized as upstream's
 * `calculateEmptyDirMemorySize` (node allocatable memory, lowered to the pod's memory limit
 * and then to `sizeLimit`). Secret, downwardAPI and projected volumes wrap a memory-backed one,
 * configMap a disk one, as upstream's. Tear-down unmounts a tmpfs and removes the directory.
 *
 * @module
 */
import { chmod, lstat, mkdir, rename, rm } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import type { V1Pod, V1Volume } from '@kubernetes/client-node';
import { quantityValue } from '@nodeagent/core';
import { VolumeError } from '../errors.js';
import { podVolumeDir } from '../paths.js';
import { setVolumeOwnership } from '../volume-ownership.js';
import type { VolumeHost, VolumePlugin, VolumeSetUpContext } from '../volume-plugin.js';

/** `kubernetes.io/empty-dir`. */
export const EMPTY_DIR_PLUGIN_NAME = 'kubernetes.io/empty-dir';

/** Mode of an emptyDir's directory. */
const EMPTY_DIR_MODE = 0o777;

function isNotFound(err: unknown): boolean {
  return (err as NodeJS.ErrnoException | undefined)?.code === 'ENOENT';
}

/**
 * The pod's memory limit as the pod cgroup gets it (upstream `ResourceConfigForPod`): the sum
 * of the app containers' limits (and the largest init container's, if larger) plus overhead,
 * or `undefined` when a container has no memory limit.
 */
export function podMemoryLimitBytes(pod: V1Pod): bigint | undefined {
  let sum = 0n;
  for (const c of pod.spec?.containers ?? []) {
    const l = c.resources?.limits?.memory;
    if (l === undefined) return undefined;
    sum += quantityValue(l);
  }
  let initMax = 0n;
  for (const c of pod.spec?.initContainers ?? []) {
    const l = c.resources?.limits?.memory;
    if (l === undefined) return undefined;
    const v = quantityValue(l);
    // A restartable init container (sidecar) runs alongside the app containers.
    if (c.restartPolicy === 'Always') sum += v;
    else if (v > initMax) initMax = v;
  }
  const overhead = pod.spec?.overhead?.memory;
  const total = (sum > initMax ? sum : initMax) + (overhead === undefined ? 0n : quantityValue(overhead));
  return total;
}

/** Upstream `calculateEmptyDirMemorySize`; `undefined`: no size option (kernel default). */
export function memoryVolumeSizeBytes(
  host: VolumeHost,
  pod: V1Pod,
  sizeLimit: string | undefined,
): bigint | undefined {
  const allocatable = host.nodeAllocatable().memory;
  let size = allocatable === undefined ? undefined : quantityValue(allocatable);
  const podLimit = podMemoryLimitBytes(pod);
  if (podLimit !== undefined && podLimit > 0n && (size === undefined || podLimit <= size)) size = podLimit;
  if (sizeLimit !== undefined) {
    const v = quantityValue(sizeLimit);
    if (v > 0n && (size === undefined || v <= size)) size = v;
  }
  return size !== undefined && size > 0n ? size : undefined;
}

/**
 * Makes `dir` an emptyDir: the directory (mode 0777) and, for memory, a tmpfs on it unless one
 * is already there (or the host keeps memory volumes in plain directories).
 */
export async function setUpEmptyDirAt(
  host: VolumeHost,
  dir: string,
  memory: boolean,
  sizeBytes: bigint | undefined,
): Promise<void> {
  await mkdir(dir, { recursive: true, mode: EMPTY_DIR_MODE });
  if (memory && host.memoryMedium === 'tmpfs') {
    if (await host.mounter.isMountPoint(dir)) return;
    await chmod(dir, EMPTY_DIR_MODE);
    await host.mounter.mountTmpfs(dir, sizeBytes);
    return;
  }
  const st = await lstat(dir);
  if ((st.mode & 0o777) !== EMPTY_DIR_MODE) await chmod(dir, (st.mode & 0o7000) | EMPTY_DIR_MODE);
}

/**
 * Upstream emptyDir `TearDownAt`: a tmpfs is unmounted and the directory removed; a disk
 * directory is first renamed to `<name>.deleting~<random>` so a half-removed volume is never
 * seen under its own name.
 */
export async function tearDownEmptyDirAt(host: VolumeHost, dir: string): Promise<void> {
  try {
    await lstat(dir);
  } catch (err) {
    if (isNotFound(err)) return;
    throw err;
  }
  for (const point of await host.mounter.mountsUnder(dir)) await host.mounter.unmount(point);
  const doomed = join(dirname(dir), `${basename(dir)}.deleting~${Math.random().toString(36).slice(2, 10)}`);
  try {
    await rename(dir, doomed);
  } catch (err) {
    throw new VolumeError('failed', `failed to rename ${dir} for removal: ${(err as Error).message}`, {
      cause: err,
    });
  }
  await rm(doomed, { recursive: true, force: true });
}

/** The emptyDir plugin. */
export const emptyDirPlugin: VolumePlugin = {
  name: EMPTY_DIR_PLUGIN_NAME,
  requiresRemount: false,
  readOnly: false,
  canSupport: (volume: V1Volume) => volume.emptyDir != null,
  getPath: (host, pod, volume) =>
    podVolumeDir(host.podsDir, pod.metadata?.uid ?? '', EMPTY_DIR_PLUGIN_NAME, volume.name),
  async setUp(host: VolumeHost, ctx: VolumeSetUpContext): Promise<void> {
    const spec = ctx.volume.emptyDir ?? {};
    const medium = spec.medium ?? '';
    if (medium !== '' && medium !== 'Memory') {
      throw new VolumeError(
        'unsupported',
        `emptyDir medium ${JSON.stringify(medium)} is not supported by this node agent`,
      );
    }
    const memory = medium === 'Memory';
    const size = memory ? memoryVolumeSizeBytes(host, ctx.pod, spec.sizeLimit) : undefined;
    await setUpEmptyDirAt(host, ctx.dir, memory, size);
    const sc = ctx.pod.spec?.securityContext;
    await setVolumeOwnership(ctx.dir, {
      fsGroup: sc?.fsGroup,
      fsGroupChangePolicy: sc?.fsGroupChangePolicy,
      readOnly: false,
      logger: host.logger,
    });
  },
  tearDown: tearDownEmptyDirAt,
};
