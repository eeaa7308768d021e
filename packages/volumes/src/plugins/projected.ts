/**
 * projected volumes (upstream `pkg/volume/projected`): secret, configMap, downwardAPI and
 * serviceAccountToken sources merged into one tmpfs-backed volume through the atomic writer.
 * A token comes from the TokenRequest API — audience, `expirationSeconds` (API default 3600;
 * the `kube-api-access-*` volume asks for 3607; at least 600), bound to the pod — through the
 * token manager, which refreshes it at 80 % of its lifetime; its file is 0600 when the pod has
 * an `fsGroup` (ownership then makes it 0640), else `defaultMode`. `clusterTrustBundle` sources
 * are not supported here and fail the volume with a message saying so.
 *
 * @module
 */
import type { V1Pod, V1ServiceAccountTokenProjection } from '@kubernetes/client-node';
import type { FileProjection } from '../atomic-writer.js';
import { VolumeError } from '../errors.js';
import type { VolumeHost } from '../volume-plugin.js';
import { aggregateError, apiVolumePlugin, checkMode, DEFAULT_VOLUME_MODE } from './api-volume.js';
import { configMapPayload, fetchConfigMap } from './config-map.js';
import { collectDownwardApiData } from './downward-api.js';
import { fetchSecret, secretPayload } from './secret.js';

/** `kubernetes.io/projected`. */
export const PROJECTED_PLUGIN_NAME = 'kubernetes.io/projected';

/** `expirationSeconds` when a serviceAccountToken source has none (API defaulting). */
export const DEFAULT_TOKEN_EXPIRATION_SECONDS = 3600;
/** The smallest `expirationSeconds` the API accepts (10 minutes). */
export const MIN_TOKEN_EXPIRATION_SECONDS = 600;
const MAX_TOKEN_EXPIRATION_SECONDS = 2 ** 32;

/** The service account a pod's tokens are for (`spec.serviceAccountName`, else `default`). */
export function podServiceAccountName(pod: V1Pod): string {
  return pod.spec?.serviceAccountName || pod.spec?.serviceAccount || 'default';
}

async function tokenFile(
  host: VolumeHost,
  pod: V1Pod,
  tp: V1ServiceAccountTokenProjection,
  defaultMode: number,
  signal: AbortSignal | undefined,
): Promise<FileProjection> {
  const expirationSeconds = tp.expirationSeconds ?? DEFAULT_TOKEN_EXPIRATION_SECONDS;
  if (expirationSeconds < MIN_TOKEN_EXPIRATION_SECONDS)
    throw new VolumeError(
      'invalid',
      `serviceAccountToken.expirationSeconds: Invalid value: ${expirationSeconds}: may not specify a duration less than 10 minutes`,
    );
  if (expirationSeconds > MAX_TOKEN_EXPIRATION_SECONDS)
    throw new VolumeError(
      'invalid',
      `serviceAccountToken.expirationSeconds: Invalid value: ${expirationSeconds}: may not specify a duration larger than 2^32 seconds`,
    );
  const m = pod.metadata ?? {};
  const status = await host.tokens.getServiceAccountToken(
    m.namespace ?? '',
    podServiceAccountName(pod),
    {
      audiences: tp.audience ? [tp.audience] : [],
      expirationSeconds,
      boundObjectRef: { apiVersion: 'v1', kind: 'Pod', name: m.name ?? '', uid: m.uid ?? '' },
    },
    signal,
  );
  // With an fsGroup the ownership pass widens 0600 to 0640 (upstream relies on the same).
  const mode = pod.spec?.securityContext?.fsGroup !== undefined ? 0o600 : defaultMode;
  return { data: Buffer.from(status.token, 'utf8'), mode };
}

/** The projected plugin. */
export const projectedPlugin = apiVolumePlugin({
  name: PROJECTED_PLUGIN_NAME,
  memory: true,
  canSupport: (volume) => volume.projected != null,
  async collect(host, ctx) {
    const source = ctx.volume.projected ?? {};
    checkMode(source.defaultMode, 'projected.defaultMode');
    const defaultMode = source.defaultMode ?? DEFAULT_VOLUME_MODE;
    const namespace = ctx.pod.metadata?.namespace ?? '';
    const payload = new Map<string, FileProjection>();
    const errors: Error[] = [];
    const merge = (files: Map<string, FileProjection>) => {
      for (const [k, v] of files) payload.set(k, v);
    };
    for (const s of source.sources ?? []) {
      try {
        if (s.secret != null) {
          const optional = s.secret.optional === true;
          const secret = await fetchSecret(host, namespace, s.secret.name ?? '', optional, ctx.signal);
          merge(secretPayload(secret, s.secret.items, optional, defaultMode));
        } else if (s.configMap != null) {
          const cm = await fetchConfigMap(
            host,
            namespace,
            s.configMap.name ?? '',
            s.configMap.optional === true,
            ctx.signal,
          );
          merge(configMapPayload(cm, s.configMap, defaultMode));
        } else if (s.downwardAPI != null) {
          merge(collectDownwardApiData(s.downwardAPI.items ?? [], ctx.pod, host, defaultMode));
        } else if (s.serviceAccountToken != null) {
          payload.set(
            s.serviceAccountToken.path,
            await tokenFile(host, ctx.pod, s.serviceAccountToken, defaultMode, ctx.signal),
          );
        } else if (s.clusterTrustBundle != null) {
          throw new VolumeError(
            'unsupported',
            'clusterTrustBundle projections are not supported by this node agent',
          );
        }
      } catch (err) {
        errors.push(err as Error);
      }
    }
    const err = aggregateError(errors);
    if (err !== undefined) throw err;
    return payload;
  },
});
