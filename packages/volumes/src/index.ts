/**
 * The kubelet's volumes for a node agent: the emptyDir (disk or tmpfs), hostPath, configMap,
 * secret, downwardAPI and projected plugins with upstream's paths, modes and messages, the
 * atomic writer that publishes API-backed volumes, `fsGroup` ownership, the service-account
 * token manager, and a volume manager whose `waitForAttachAndMount` the pod sync awaits before
 * starting containers.
 *
 * @example
 * ```ts
 * import { apiVolumeDataSource, VolumeManager } from '@nodeagent/volumes';
 *
 * const volumes = new VolumeManager({ rootDir: '/var/lib/kubelet', dataSource: apiVolumeDataSource(api) });
 * await volumes.waitForAttachAndMount(pod); // throws UnmountedVolumesError (FailedMount)
 * const paths = volumes.getMountedVolumesForPod(pod.metadata.uid); // name → host path
 * // ... once the pod's containers are gone:
 * await volumes.unmountPodVolumes(pod.metadata.uid);
 * ```
 *
 * @packageDocumentation
 */
export {
  type AtomicWriteResult,
  AtomicWriter,
  type AtomicWriterOptions,
  DATA_DIR_NAME,
  type FileProjection,
  NEW_DATA_DIR_NAME,
  type Payload,
  timestampDirPrefix,
  validatePayloadPath,
} from './atomic-writer.js';
export {
  apiVolumeDataSource,
  type TokenRequestSpec,
  type TokenRequestStatus,
  type VolumeDataSource,
  type VolumeJsonApi,
} from './data-source.js';
export { goList, isVolumeError, UnmountedVolumesError, VolumeError, type VolumeErrorCode } from './errors.js';
export {
  extractFieldPathAsString,
  extractResourceValue,
  formatMap,
  goQuote,
  type ResourceList,
} from './field-path.js';
export {
  ExecMounter,
  type ExecMounterOptions,
  type FakeMount,
  FakeMounter,
  type Mounter,
  parseMountInfo,
} from './mounter.js';
export {
  DEFAULT_ROOT_DIR,
  escapePluginNameForDisk,
  podDir,
  podVolumeDir,
  podVolumesDir,
  unescapePluginNameFromDisk,
} from './paths.js';
export { aggregateError, DEFAULT_VOLUME_MODE } from './plugins/api-volume.js';
export { CONFIG_MAP_PLUGIN_NAME, configMapPayload, configMapPlugin } from './plugins/config-map.js';
export {
  collectDownwardApiData,
  DOWNWARD_API_PLUGIN_NAME,
  downwardApiPlugin,
} from './plugins/downward-api.js';
export {
  EMPTY_DIR_PLUGIN_NAME,
  emptyDirPlugin,
  memoryVolumeSizeBytes,
  podMemoryLimitBytes,
} from './plugins/empty-dir.js';
export { checkHostPathType, HOST_PATH_PLUGIN_NAME, hostPathPlugin } from './plugins/host-path.js';
export { DEFAULT_VOLUME_PLUGINS } from './plugins/index.js';
export {
  DEFAULT_TOKEN_EXPIRATION_SECONDS,
  MIN_TOKEN_EXPIRATION_SECONDS,
  PROJECTED_PLUGIN_NAME,
  podServiceAccountName,
  projectedPlugin,
} from './plugins/projected.js';
export { SECRET_PLUGIN_NAME, secretPayload, secretPlugin } from './plugins/secret.js';
export { unsupportedVolumeError, volumeSourceType } from './plugins/unsupported.js';
export { TokenManager, type TokenManagerOptions } from './token-manager.js';
export { type MountedVolume, podVolumeNamesInUse, VolumeManager } from './volume-manager.js';
export type { VolumeEventRecorder, VolumeManagerOptions } from './volume-manager-options.js';
export { setVolumeOwnership, type VolumeOwnershipOptions } from './volume-ownership.js';
export type { MemoryMediumMode, VolumeHost, VolumePlugin, VolumeSetUpContext } from './volume-plugin.js';
