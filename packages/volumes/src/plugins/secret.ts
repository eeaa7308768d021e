/**
 * secret volumes (upstream `pkg/volume/secret`): the Secret's `data` (or the listed `items`)
 * as files on a tmpfs — never on the node's disk — through the atomic writer.
 *
 * @module
 */
import type { V1Secret, V1SecretProjection, V1SecretVolumeSource } from '@kubernetes/client-node';
import type { FileProjection } from '../atomic-writer.js';
import { VolumeError } from '../errors.js';
import type { VolumeHost } from '../volume-plugin.js';
import { apiVolumePlugin, base64Map, checkMode, DEFAULT_VOLUME_MODE, keyedPayload } from './api-volume.js';

/** `kubernetes.io/secret`. */
export const SECRET_PLUGIN_NAME = 'kubernetes.io/secret';

/** The files of a Secret (upstream secret `MakePayload`). */
export function secretPayload(
  secret: V1Secret,
  items: V1SecretVolumeSource['items'] | V1SecretProjection['items'],
  optional: boolean,
  defaultMode: number,
): Map<string, FileProjection> {
  return keyedPayload(
    base64Map(secret.data),
    items,
    defaultMode,
    optional,
    (key) => `references non-existent secret key: ${key}`,
  );
}

/**
 * The Secret `name` of `namespace`, an empty one when it is missing and `optional`.
 * @throws VolumeError `secrets "<name>" not found`
 */
export async function fetchSecret(
  host: VolumeHost,
  namespace: string,
  name: string,
  optional: boolean,
  signal?: AbortSignal,
): Promise<V1Secret> {
  const secret = await host.dataSource.getSecret(namespace, name, signal);
  if (secret !== undefined) return secret;
  if (optional) return { metadata: { namespace, name } };
  throw new VolumeError('not-found', `secrets ${JSON.stringify(name)} not found`);
}

/** The secret plugin. */
export const secretPlugin = apiVolumePlugin({
  name: SECRET_PLUGIN_NAME,
  memory: true,
  canSupport: (volume) => volume.secret != null,
  async collect(host, ctx) {
    const source = ctx.volume.secret ?? {};
    checkMode(source.defaultMode, 'secret.defaultMode');
    const optional = source.optional === true;
    const secret = await fetchSecret(
      host,
      ctx.pod.metadata?.namespace ?? '',
      source.secretName ?? '',
      optional,
      ctx.signal,
    );
    return secretPayload(secret, source.items, optional, source.defaultMode ?? DEFAULT_VOLUME_MODE);
  },
});
