/**
 * What configMap, secret, downwardAPI and projected volumes share (upstream's plugins each
 * repeat it): the payload is collected first (so a missing object leaves nothing behind), then
 * the wrapped emptyDir is set up (disk for configMap, memory for the others), then the atomic
 * writer publishes the payload with `fsGroup` ownership applied to the whole volume before the
 * swap. Errors from several sources are reported as upstream's aggregate (`[a, b]`).
 *
 * @module
 */
import type { V1KeyToPath } from '@kubernetes/client-node';
import { AtomicWriter, type FileProjection } from '../atomic-writer.js';
import { VolumeError } from '../errors.js';
import { podVolumeDir } from '../paths.js';
import { setVolumeOwnership } from '../volume-ownership.js';
import type { VolumeHost, VolumePlugin, VolumeSetUpContext } from '../volume-plugin.js';
import { memoryVolumeSizeBytes, setUpEmptyDirAt, tearDownEmptyDirAt } from './empty-dir.js';

/** Default `defaultMode` of configMap, secret, downwardAPI and projected volumes. */
export const DEFAULT_VOLUME_MODE = 0o644;

/** Upstream `utilerrors.NewAggregate(...).Error()`: one message as is, several as `[a, b]`. */
export function aggregateError(errors: readonly Error[]): VolumeError | undefined {
  if (errors.length === 0) return undefined;
  const messages = [...new Set(errors.map((e) => e.message))];
  if (errors.length === 1 && errors[0] instanceof VolumeError) return errors[0];
  const code = errors.every((e) => e instanceof VolumeError && e.code === 'not-found')
    ? 'not-found'
    : 'failed';
  return new VolumeError(code, messages.length === 1 ? (messages[0] ?? '') : `[${messages.join(', ')}]`);
}

/** Checks a mode field (0–0777) as API validation does. */
export function checkMode(mode: number | undefined, field: string): void {
  if (mode !== undefined && (!Number.isInteger(mode) || mode < 0 || mode > 0o777)) {
    throw new VolumeError(
      'invalid',
      `${field}: Invalid value: ${mode}: must be a number between 0 and 0777 (octal), both inclusive`,
    );
  }
}

/**
 * The payload of a key→data map (upstream configMap/secret `MakePayload`): every key with
 * `defaultMode` when `items` is empty, else the listed keys at their paths; a missing key is an
 * error unless the source is optional.
 */
export function keyedPayload(
  data: ReadonlyMap<string, Uint8Array>,
  items: readonly V1KeyToPath[] | undefined,
  defaultMode: number,
  optional: boolean,
  missingKey: (key: string) => string,
): Map<string, FileProjection> {
  const payload = new Map<string, FileProjection>();
  if (items === undefined || items.length === 0) {
    for (const [key, value] of data) payload.set(key, { data: value, mode: defaultMode });
    return payload;
  }
  for (const item of items) {
    const value = data.get(item.key);
    if (value === undefined) {
      if (optional) continue;
      throw new VolumeError('not-found', missingKey(item.key));
    }
    checkMode(item.mode, `items[${item.key}].mode`);
    payload.set(item.path, { data: value, mode: item.mode ?? defaultMode });
  }
  return payload;
}

/** Decodes an API object's base64 `data` / `binaryData` map. */
export function base64Map(m: Readonly<Record<string, string>> | undefined): Map<string, Uint8Array> {
  const out = new Map<string, Uint8Array>();
  for (const [k, v] of Object.entries(m ?? {})) out.set(k, Buffer.from(v, 'base64'));
  return out;
}

/** Definition of one API-backed plugin for {@link apiVolumePlugin}. */
export interface ApiVolumeDefinition {
  /** Upstream's plugin name. */
  readonly name: string;
  /** Whether the wrapped emptyDir is memory-backed. */
  readonly memory: boolean;
  /** Which volumes it handles. */
  readonly canSupport: VolumePlugin['canSupport'];
  /** Collects the files. @throws VolumeError */
  collect(host: VolumeHost, ctx: VolumeSetUpContext): Promise<Map<string, FileProjection>>;
}

/** A plugin for an API-backed volume (see the module comment). */
export function apiVolumePlugin(def: ApiVolumeDefinition): VolumePlugin {
  return {
    name: def.name,
    requiresRemount: true,
    readOnly: true,
    canSupport: def.canSupport,
    getPath: (host, pod, volume) =>
      podVolumeDir(host.podsDir, pod.metadata?.uid ?? '', def.name, volume.name),
    async setUp(host, ctx): Promise<void> {
      const payload = await def.collect(host, ctx);
      const size = def.memory ? memoryVolumeSizeBytes(host, ctx.pod, undefined) : undefined;
      await setUpEmptyDirAt(host, ctx.dir, def.memory, size);
      const sc = ctx.pod.spec?.securityContext;
      const writer = new AtomicWriter(ctx.dir, { clock: host.clock });
      await writer.write(payload, () =>
        setVolumeOwnership(ctx.dir, { fsGroup: sc?.fsGroup, readOnly: true, logger: host.logger }),
      );
    },
    tearDown: tearDownEmptyDirAt,
  };
}
