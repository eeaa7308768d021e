/**
 * The errors of volume set-up and tear-down. Each names the volume (and the pod where it
 * matters) and carries the plugin's message as upstream words it, so the manager can wrap it
 * into the kubelet's `FailedMount` event text.
 *
 * @module
 */

/** Why a volume could not be set up. */
export type VolumeErrorCode =
  /** The volume type has no plugin here (PVC, CSI, NFS, ...). */
  | 'unsupported'
  /** A referenced API object or key does not exist (and the reference is not optional). */
  | 'not-found'
  /** A hostPath `type` check failed. */
  | 'type-check'
  /** The volume spec or the payload is invalid (bad path, bad mode, bad expiration). */
  | 'invalid'
  /** The API call, mount, write or chown failed. */
  | 'failed';

/** A volume plugin failed for one volume; `message` is the plugin's own text (upstream's wording). */
export class VolumeError extends Error {
  override readonly name = 'VolumeError';
  /** What went wrong. */
  readonly code: VolumeErrorCode;
  /** @param code what went wrong; @param message upstream-style text; @param options `cause` */
  constructor(code: VolumeErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.code = code;
  }
}

/** Whether `err` is a {@link VolumeError} with `code`. */
export function isVolumeError(err: unknown, code?: VolumeErrorCode): err is VolumeError {
  return err instanceof VolumeError && (code === undefined || err.code === code);
}

/**
 * Not every volume of a pod could be set up (upstream `WaitForAttachAndMount`'s error):
 * `unmounted volumes=[a b], unattached volumes=[], failed to process volumes=[]: <cause>`.
 * The kubelet prefixes it with `Unable to attach or mount volumes: ` in the `FailedMount` event.
 */
export class UnmountedVolumesError extends Error {
  override readonly name = 'UnmountedVolumesError';
  /** Volumes (by pod spec name, sorted) not set up. */
  readonly unmountedVolumes: readonly string[];
  /** Attachable volumes not attached: always empty here (no attachable plugin). */
  readonly unattachedVolumes: readonly string[];
  /** Volumes with no plugin (unsupported types), sorted. */
  readonly volumesNotProcessed: readonly string[];
  /** The `namespace/name` of the pod. */
  readonly pod: string;
  /**
   * @param pod `namespace/name`; @param unmounted volumes not set up; @param notProcessed
   * volumes without plugin; @param cause the per-volume errors, `; `-joined as the tail
   */
  constructor(pod: string, unmounted: readonly string[], notProcessed: readonly string[], cause: string) {
    super(
      `unmounted volumes=${goList(unmounted)}, unattached volumes=[], failed to process volumes=${goList(notProcessed)}: ${cause}`,
    );
    this.pod = pod;
    this.unmountedVolumes = unmounted;
    this.unattachedVolumes = [];
    this.volumesNotProcessed = notProcessed;
  }

  /** The `FailedMount` event message the kubelet records for the pod. */
  get eventMessage(): string {
    return `Unable to attach or mount volumes: ${this.message}`;
  }
}

/** Go's `%v` of a string slice: `[a b]`. */
export function goList(items: readonly string[]): string {
  return `[${items.join(' ')}]`;
}
