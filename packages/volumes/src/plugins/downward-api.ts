/**
 * downwardAPI volumes (upstream `pkg/volume/downwardapi`): pod metadata (`fieldRef`) and a
 * container's requests or limits (`resourceFieldRef` with its `divisor`) as files on a tmpfs,
 * through the atomic writer; set up again on every sync so label and annotation changes show.
 *
 * @module
 */
import type { V1DownwardAPIVolumeFile, V1Pod } from '@kubernetes/client-node';
import type { FileProjection } from '../atomic-writer.js';
import { extractFieldPathAsString, extractResourceValue } from '../field-path.js';
import type { VolumeHost } from '../volume-plugin.js';
import { aggregateError, apiVolumePlugin, checkMode, DEFAULT_VOLUME_MODE } from './api-volume.js';

/** `kubernetes.io/downward-api`. */
export const DOWNWARD_API_PLUGIN_NAME = 'kubernetes.io/downward-api';

/**
 * The files of downwardAPI items (upstream `CollectData`); failures of several items are
 * reported together.
 * @throws VolumeError
 */
export function collectDownwardApiData(
  items: readonly V1DownwardAPIVolumeFile[],
  pod: V1Pod,
  host: Pick<VolumeHost, 'nodeAllocatable'>,
  defaultMode: number,
): Map<string, FileProjection> {
  const data = new Map<string, FileProjection>();
  const errors: Error[] = [];
  for (const item of items) {
    try {
      checkMode(item.mode, `items[${item.path}].mode`);
      const mode = item.mode ?? defaultMode;
      let value = '';
      if (item.fieldRef != null) value = extractFieldPathAsString(pod, item.fieldRef);
      else if (item.resourceFieldRef != null)
        value = extractResourceValue(item.resourceFieldRef, pod, host.nodeAllocatable());
      data.set(item.path, { data: Buffer.from(value, 'utf8'), mode });
    } catch (err) {
      errors.push(err as Error);
    }
  }
  const err = aggregateError(errors);
  if (err !== undefined) throw err;
  return data;
}

/** The downwardAPI plugin. */
export const downwardApiPlugin = apiVolumePlugin({
  name: DOWNWARD_API_PLUGIN_NAME,
  memory: true,
  canSupport: (volume) => volume.downwardAPI != null,
  async collect(host, ctx) {
    const source = ctx.volume.downwardAPI ?? {};
    checkMode(source.defaultMode, 'downwardAPI.defaultMode');
    return collectDownwardApiData(
      source.items ?? [],
      ctx.pod,
      host,
      source.defaultMode ?? DEFAULT_VOLUME_MODE,
    );
  },
});
