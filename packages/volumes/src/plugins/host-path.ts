/**
 * hostPath (upstream `pkg/volume/hostpath`): the host's own path, checked against the volume's
 * `type` with upstream's messages; `DirectoryOrCreate` creates the directory (0755) and
 * `FileOrCreate` an empty file (0644) when nothing is there. Nothing is torn down.
 *
 * @module
 */

import type { Stats } from 'node:fs';
import { mkdir, open, stat } from 'node:fs/promises';
import type { V1Volume } from '@kubernetes/client-node';
import { validatePathNoBacksteps } from '@nodeagent/kubecontainer';
import { VolumeError } from '../errors.js';
import type { VolumePlugin } from '../volume-plugin.js';

/** `kubernetes.io/host-path`. */
export const HOST_PATH_PLUGIN_NAME = 'kubernetes.io/host-path';

async function stats(path: string): Promise<Stats | undefined> {
  try {
    return await stat(path);
  } catch {
    return undefined;
  }
}

function typeError(path: string, what: string): VolumeError {
  return new VolumeError('type-check', `hostPath type check failed: ${path} is not a ${what}`);
}

async function makeFile(path: string): Promise<void> {
  const fh = await open(path, 'a', 0o644);
  await fh.close();
}

/**
 * Upstream `checkTypeInternal`: `''` checks nothing; the `*OrCreate` types create what is
 * missing; the others require the path to be of that type.
 * @throws VolumeError `hostPath type check failed: <path> is not a directory` (…) or
 *   `<type> is an invalid volume type`
 */
export async function checkHostPathType(path: string, type: string): Promise<void> {
  try {
    switch (type) {
      case '':
        return;
      case 'DirectoryOrCreate':
        if ((await stats(path)) === undefined) {
          await mkdir(path, { recursive: true, mode: 0o755 });
          return;
        }
        if (!(await stats(path))?.isDirectory()) throw typeError(path, 'directory');
        return;
      case 'Directory':
        if (!(await stats(path))?.isDirectory()) throw typeError(path, 'directory');
        return;
      case 'FileOrCreate':
        if ((await stats(path)) === undefined) {
          await makeFile(path);
          return;
        }
        if (!(await stats(path))?.isFile()) throw typeError(path, 'file');
        return;
      case 'File':
        if (!(await stats(path))?.isFile()) throw typeError(path, 'file');
        return;
      case 'Socket':
        if (!(await stats(path))?.isSocket()) throw typeError(path, 'socket file');
        return;
      case 'CharDevice':
        if (!(await stats(path))?.isCharacterDevice()) throw typeError(path, 'character device');
        return;
      case 'BlockDevice':
        if (!(await stats(path))?.isBlockDevice()) throw typeError(path, 'block device');
        return;
      default:
        throw new VolumeError('invalid', `${type} is an invalid volume type`);
    }
  } catch (err) {
    if (err instanceof VolumeError) throw err;
    throw new VolumeError('failed', (err as Error).message, { cause: err });
  }
}

/** The hostPath plugin. */
export const hostPathPlugin: VolumePlugin = {
  name: HOST_PATH_PLUGIN_NAME,
  requiresRemount: false,
  readOnly: false,
  canSupport: (volume: V1Volume) => volume.hostPath != null,
  getPath: (_host, _pod, volume) => volume.hostPath?.path ?? '',
  async setUp(_host, ctx): Promise<void> {
    const path = ctx.volume.hostPath?.path ?? '';
    const back = validatePathNoBacksteps(path);
    if (back !== undefined) throw new VolumeError('invalid', `invalid HostPath \`${path}\`: ${back}`);
    await checkHostPathType(path, ctx.volume.hostPath?.type ?? '');
  },
  async tearDown(): Promise<void> {},
};
