/**
 * Typed errors of the runtime manager. `reason` carries the kubelet's reason string
 * (`CreateContainerConfigError`, `ImagePullBackOff`, `CrashLoopBackOff`, …) that ends up as a
 * container's waiting reason.
 *
 * @module
 */

/** The kubelet's sync error reasons (upstream `kubecontainer.Err*`, `images.Err*`). */
export const SyncErrorReason = {
  CrashLoopBackOff: 'CrashLoopBackOff',
  ImagePullBackOff: 'ImagePullBackOff',
  ErrImagePull: 'ErrImagePull',
  ErrImageNeverPull: 'ErrImageNeverPull',
  ImageInspectError: 'ImageInspectError',
  InvalidImageName: 'InvalidImageName',
  CreateContainerConfigError: 'CreateContainerConfigError',
  CreateContainerError: 'CreateContainerError',
  RunContainerError: 'RunContainerError',
  PostStartHookError: 'PostStartHookError',
  KillContainerError: 'KillContainerError',
  CreatePodSandboxError: 'CreatePodSandboxError',
  ConfigPodSandboxError: 'ConfigPodSandboxError',
  KillPodSandboxError: 'KillPodSandboxError',
} as const;

/** One of {@link SyncErrorReason}. */
export type SyncErrorReason = (typeof SyncErrorReason)[keyof typeof SyncErrorReason];

/** A step of a pod sync failed; `reason` is the kubelet's reason, `message` the detail shown to users. */
export class SyncStepError extends Error {
  override readonly name = 'SyncStepError';
  constructor(
    /** The kubelet's reason string. */
    readonly reason: SyncErrorReason,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

/** A container's configuration cannot be built (bad env reference, unsupported volume, …). */
export class ContainerConfigError extends Error {
  override readonly name = 'ContainerConfigError';
}

/** Error text of a thrown value. */
export function errorMessage(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
