/**
 * The package's one error class: a cgroup operation that failed, naming the cgroup, the
 * operation and the cause, with a string `code` to branch on.
 *
 * @module
 */

/** What went wrong. */
export type CgroupErrorCode =
  /** A name component with `/` or `_` (upstream `NewCgroupName` refuses them). */
  | 'invalid-name'
  /** The cgroup root (`cgroupRoot`) does not exist or lacks a needed controller. */
  | 'root-invalid'
  /** mkdir / write of a cgroup file failed. */
  | 'create-failed'
  /** Writing a resource value failed. */
  | 'update-failed'
  /** Killing the processes or removing the directories failed. */
  | 'destroy-failed'
  /** The machine's cgroup mounts could not be read. */
  | 'mounts-unreadable';

/** A cgroup operation that failed; the message names the cgroup and the cause. */
export class CgroupError extends Error {
  override readonly name = 'CgroupError';
  /**
   * @param code what went wrong.
   * @param cgroup the cgroup in cgroupfs form (e.g. `/kubepods/burstable/pod1234`).
   * @param message the full message.
   * @param options the underlying error.
   */
  constructor(
    readonly code: CgroupErrorCode,
    readonly cgroup: string,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

/** Whether `err` is a {@link CgroupError} (optionally of `code`). */
export function isCgroupError(err: unknown, code?: CgroupErrorCode): err is CgroupError {
  return err instanceof CgroupError && (code === undefined || err.code === code);
}
