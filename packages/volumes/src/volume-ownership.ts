/**
 * `fsGroup` ownership (upstream `SetVolumeOwnership`, `pkg/volume/volume_linux.go`): every
 * file and directory of the volume gets the group `fsGroup`; files gain group read (and write
 * unless the volume is read-only), directories also group execute and the setgid bit, so new
 * files inherit the group. Symlinks are re-grouped but never chmod-ed (that would change their
 * target). With `fsGroupChangePolicy: OnRootMismatch` nothing is walked when the volume's root
 * already has the group and the bits.
 *
 * @module
 */
import { chmod, lchown, lstat, readdir } from 'node:fs/promises';
import { join } from 'node:path';
import type { Logger } from '@nodeagent/core';
import { noopLogger } from '@nodeagent/core';

const RW_MASK = 0o660;
const RO_MASK = 0o440;
const EXEC_MASK = 0o110;
const SETGID = 0o2000;

/** Options of {@link setVolumeOwnership}. */
export interface VolumeOwnershipOptions {
  /** The pod's `securityContext.fsGroup`; nothing happens without it. */
  readonly fsGroup: number | undefined;
  /** The pod's `securityContext.fsGroupChangePolicy`. @default 'Always' */
  readonly fsGroupChangePolicy?: string | undefined;
  /** The plugin mounts the volume read-only (configMap, secret, downwardAPI, projected). */
  readonly readOnly: boolean;
  /** Failed chown/chmod calls are logged here (upstream logs and goes on). @default noopLogger */
  readonly logger?: Logger;
}

async function requiresPermissionChange(dir: string, fsGroup: number, readOnly: boolean): Promise<boolean> {
  const st = await lstat(dir);
  if (st.gid !== fsGroup) return true;
  let perms = readOnly ? RO_MASK : RW_MASK;
  if (st.isDirectory()) perms |= EXEC_MASK;
  if ((st.mode & perms) !== perms) return true;
  return st.isDirectory() && (st.mode & SETGID) === 0;
}

/** Gives `dir` and everything below it to `fsGroup` (see the module comment). */
export async function setVolumeOwnership(dir: string, options: VolumeOwnershipOptions): Promise<void> {
  const { fsGroup, readOnly } = options;
  if (fsGroup === undefined) return;
  const log = options.logger ?? noopLogger;
  if (
    options.fsGroupChangePolicy === 'OnRootMismatch' &&
    !(await requiresPermissionChange(dir, fsGroup, readOnly))
  ) {
    return;
  }
  const visit = async (path: string): Promise<void> => {
    const st = await lstat(path);
    try {
      await lchown(path, -1, fsGroup);
    } catch (err) {
      log.error({ path, err: (err as Error).message }, 'Lchown failed');
    }
    if (st.isSymbolicLink()) return;
    let mask = readOnly ? RO_MASK : RW_MASK;
    if (st.isDirectory()) mask |= SETGID | EXEC_MASK;
    try {
      await chmod(path, (st.mode & 0o7777) | mask);
    } catch (err) {
      log.error({ path, err: (err as Error).message }, 'chmod failed');
    }
    if (st.isDirectory()) {
      for (const name of await readdir(path)) await visit(join(path, name));
    }
  };
  await visit(dir);
}
