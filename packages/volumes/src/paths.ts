/**
 * Where the kubelet keeps a pod's volumes: `<root-dir>/pods/<uid>/volumes/<plugin>/<volume>`,
 * the plugin name escaped for disk (`kubernetes.io/configmap` → `kubernetes.io~configmap`,
 * upstream `EscapeQualifiedNameForDisk`).
 *
 * @module
 */
import { join } from 'node:path';
import { validatePathComponent } from '@nodeagent/kubecontainer';
import { VolumeError } from './errors.js';

/** Default `--root-dir` of the kubelet. */
export const DEFAULT_ROOT_DIR = '/var/lib/kubelet';

/** `kubernetes.io/empty-dir` → `kubernetes.io~empty-dir`. */
export function escapePluginNameForDisk(pluginName: string): string {
  return pluginName.replaceAll('/', '~');
}

/** `kubernetes.io~empty-dir` → `kubernetes.io/empty-dir`. */
export function unescapePluginNameFromDisk(dirName: string): string {
  return dirName.replaceAll('~', '/');
}

function component(value: string, what: string): string {
  const bad = validatePathComponent(value);
  if (bad.length > 0) throw new VolumeError('invalid', `${what} ${JSON.stringify(value)} ${bad.join(', ')}`);
  return value;
}

/** `<podsDir>/<uid>`. @throws VolumeError when `uid` is not one path component */
export function podDir(podsDir: string, uid: string): string {
  return join(podsDir, component(uid, 'pod UID'));
}

/** `<podsDir>/<uid>/volumes`. */
export function podVolumesDir(podsDir: string, uid: string): string {
  return join(podDir(podsDir, uid), 'volumes');
}

/** `<podsDir>/<uid>/volumes/<escaped plugin>/<volume>`. */
export function podVolumeDir(podsDir: string, uid: string, pluginName: string, volumeName: string): string {
  return join(
    podVolumesDir(podsDir, uid),
    escapePluginNameForDisk(pluginName),
    component(volumeName, 'volume name'),
  );
}
