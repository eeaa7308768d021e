/**
 * configMap volumes (upstream `pkg/volume/configmap`): the ConfigMap's `data` and `binaryData`
 * (or the listed `items`) as files, on disk, through the atomic writer.
 *
 * @module
 */
import type { V1ConfigMap, V1ConfigMapProjection, V1ConfigMapVolumeSource } from '@kubernetes/client-node';
import type { FileProjection } from '../atomic-writer.js';
import { VolumeError } from '../errors.js';
import type { VolumeHost } from '../volume-plugin.js';
import { apiVolumePlugin, base64Map, checkMode, DEFAULT_VOLUME_MODE, keyedPayload } from './api-volume.js';

/** `kubernetes.io/configmap`. */
export const CONFIG_MAP_PLUGIN_NAME = 'kubernetes.io/configmap';

/** The files of a ConfigMap (upstream configmap `MakePayload`). */
export function configMapPayload(
  configMap: V1ConfigMap,
  source: V1ConfigMapVolumeSource | V1ConfigMapProjection,
  defaultMode: number,
): Map<string, FileProjection> {
  const data = new Map<string, Uint8Array>();
  for (const [k, v] of Object.entries(configMap.data ?? {})) data.set(k, Buffer.from(v, 'utf8'));
  for (const [k, v] of base64Map(configMap.binaryData)) data.set(k, v);
  return keyedPayload(
    data,
    source.items,
    defaultMode,
    source.optional === true,
    (key) => `configmap references non-existent config key: ${key}`,
  );
}

/**
 * The ConfigMap `name` of `namespace`, an empty one when it is missing and `optional`.
 * @throws VolumeError `configmaps "<name>" not found`
 */
export async function fetchConfigMap(
  host: VolumeHost,
  namespace: string,
  name: string,
  optional: boolean,
  signal?: AbortSignal,
): Promise<V1ConfigMap> {
  const cm = await host.dataSource.getConfigMap(namespace, name, signal);
  if (cm !== undefined) return cm;
  if (optional) return { metadata: { namespace, name } };
  throw new VolumeError('not-found', `configmaps ${JSON.stringify(name)} not found`);
}

/** The configMap plugin. */
export const configMapPlugin = apiVolumePlugin({
  name: CONFIG_MAP_PLUGIN_NAME,
  memory: false,
  canSupport: (volume) => volume.configMap != null,
  async collect(host, ctx) {
    const source = ctx.volume.configMap ?? {};
    checkMode(source.defaultMode, 'configMap.defaultMode');
    const cm = await fetchConfigMap(
      host,
      ctx.pod.metadata?.namespace ?? '',
      source.name ?? '',
      source.optional === true,
      ctx.signal,
    );
    return configMapPayload(cm, source, source.defaultMode ?? DEFAULT_VOLUME_MODE);
  },
});
