/**
 * The built-in plugins, in lookup order.
 *
 * @module
 */
import type { VolumePlugin } from '../volume-plugin.js';
import { configMapPlugin } from './config-map.js';
import { downwardApiPlugin } from './downward-api.js';
import { emptyDirPlugin } from './empty-dir.js';
import { hostPathPlugin } from './host-path.js';
import { projectedPlugin } from './projected.js';
import { secretPlugin } from './secret.js';

/** emptyDir, hostPath, configMap, secret, downwardAPI, projected. */
export const DEFAULT_VOLUME_PLUGINS: readonly VolumePlugin[] = [
  emptyDirPlugin,
  hostPathPlugin,
  configMapPlugin,
  secretPlugin,
  downwardApiPlugin,
  projectedPlugin,
];
