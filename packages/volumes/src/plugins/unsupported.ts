/**
 * The volume types this package has no plugin for (persistentVolumeClaim, csi, ephemeral, nfs,
 * iscsi, image, ...): a clear error naming the type, reported through `FailedMount`.
 *
 * @module
 */
import type { V1Volume } from '@kubernetes/client-node';
import { VolumeError } from '../errors.js';

/** The volume source field set on `volume` (`persistentVolumeClaim`, `csi`, ...). */
export function volumeSourceType(volume: V1Volume): string {
  return (
    Object.keys(volume).find(
      (k) => k !== 'name' && (volume as unknown as Record<string, unknown>)[k] != null,
    ) ?? 'unknown'
  );
}

/** The error for a volume without plugin. */
export function unsupportedVolumeError(volume: V1Volume): VolumeError {
  return new VolumeError(
    'unsupported',
    `volume "${volume.name}" of type ${volumeSourceType(volume)} is not supported by this node agent (supported: emptyDir, hostPath, configMap, secret, downwardAPI, projected)`,
  );
}
