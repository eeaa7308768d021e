/**
 * The kubelet's pod config: where pods come from and how the sources merge. Sources — the API
 * server ({@link ApiServerSource}, an informer on `spec.nodeName=<node>`), a static pod
 * manifest directory ({@link FileSource}, `--pod-manifest-path`) and a URL
 * ({@link HttpSource}, `--manifest-url`) — send snapshots into {@link PodConfig}, which emits
 * upstream's `ADD`, `UPDATE`, `DELETE`, `REMOVE` and `RECONCILE` per source and knows when
 * every source has been seen. Static pods get upstream's defaults
 * ({@link applyStaticPodDefaults}); {@link MirrorPodManager} keeps their mirror pods in the API.
 *
 * @example
 * ```ts
 * const config = new PodConfig();
 * const files = new FileSource({ path: '/etc/kubernetes/manifests', nodeName: 'node-1', sink: config.channel('file') });
 * await files.start();
 * for await (const update of config.updates) console.log(update.op, update.pods.map((p) => p.metadata?.name));
 * ```
 *
 * @packageDocumentation
 */
export { ApiServerSource, type ApiServerSourceOptions, type PodInformer } from './api-server-source.js';
export { PodSourceError, type PodSourceErrorCode, type PodSourceErrorHandler } from './errors.js';
export { FileSource, type FileSourceOptions } from './file-source.js';
export { HttpSource, type HttpSourceOptions } from './http-source.js';
export { decodeManifest, MAX_MANIFEST_BYTES } from './manifest-decoder.js';
export {
  isMirrorPodOf,
  type MirrorPodApi,
  MirrorPodManager,
  type MirrorPodManagerOptions,
  mirrorPodFor,
  staticPodHash,
} from './mirror-pods.js';
export { PodConfig, type PodConfigOptions, type PodSourceSink } from './pod-config.js';
export {
  API_SOURCE,
  CONFIG_HASH_ANNOTATION,
  CONFIG_MIRROR_ANNOTATION,
  CONFIG_SEEN_ANNOTATION,
  CONFIG_SOURCE_ANNOTATION,
  FILE_SOURCE,
  HTTP_SOURCE,
  isMirrorPod,
  LOCAL_ANNOTATIONS,
  type PodOperation,
  type PodUpdate,
  podFullName,
  type SourceUpdate,
} from './pod-update.js';
export {
  applyStaticPodDefaults,
  canonicalJson,
  type StaticPodOrigin,
  staticPodFrom,
  staticPodUid,
  validateStaticPod,
} from './static-pod-defaults.js';
