/**
 * Container mounts for the volume types this runtime manager handles itself: `emptyDir` (a
 * directory under the pod's directory) and `hostPath`, plus the termination message file
 * (upstream `makeMounts`). Other volume types need a volume manager and are rejected. Every
 * API string joined onto a host path is checked first (names, `subPath`, `subPathExpr` after
 * expansion, as the kubelet does); a `subPath` directory is created later with `safeMakeDir`,
 * which never leaves the volume.
 *
 * @module
 */
import { join } from 'node:path';
import type { V1Container, V1Pod } from '@kubernetes/client-node';
import { type KeyValue, type Mount, MountPropagation } from '@nodeagent/cri';
import { formatFieldError, validatePathNoBacksteps } from '@nodeagent/kubecontainer';
import { envByteMap, expandWithEnv } from './env.js';
import { ContainerConfigError } from './errors.js';
import { containerHostPathErrors, podHostPathErrors } from './host-path-validation.js';
import { DEFAULT_TERMINATION_MESSAGE_PATH } from './labels.js';
import { emptyDirPath, podContainerDirectory } from './paths.js';

/** A volume a volume manager has set up: where its files are on the host. */
export interface MountedPodVolume {
  /** The host path containers mount (a subPath is joined below it). */
  readonly hostPath: string;
  /**
   * The plugin requires a read-only mount (configMap, secret, downwardAPI, projected): upstream
   * `makeMounts` mounts `volumeMount.readOnly || GetAttributes().ReadOnly`. @default false
   */
  readonly readOnly?: boolean;
}

/**
 * The set-up volumes of a pod by name (upstream `kubecontainer.VolumeMap`, from the volume
 * manager's `GetMountedVolumesForPod`), or `undefined` when no volume manager is in use.
 */
export type PodVolumeLookup = (pod: V1Pod) => ReadonlyMap<string, MountedPodVolume> | undefined;

/** A host path that must exist before the container is created. */
export interface HostPathToPrepare {
  /** Absolute host path. */
  readonly path: string;
  /** Create a directory or an (empty) file. */
  readonly kind: 'directory' | 'file';
  /** Permission bits to set. */
  readonly mode: number;
  /** Only check that it exists (and is of `kind`), never create it. */
  readonly mustExist: boolean;
  /**
   * For a `subPath`: the volume directory `path` must stay in and the relative path below it.
   * Created with `safeMakeDir` (component by component, no symlink followed out of the volume),
   * with the volume directory's mode, as the kubelet does.
   */
  readonly subPathOf?: {
    readonly volumePath: string;
    readonly subPath: string;
    readonly volumeMount: string;
  };
}

/**
 * `subPathExpr` expanded with the container's environment (upstream
 * `ExpandContainerVolumeMounts`): a reference to a variable that is unset or empty is an error.
 * @throws ContainerConfigError `missing value for A, B`
 */
export function expandSubPathExpr(subPathExpr: string, envs: readonly KeyValue[]): string {
  const missing = new Set<string>();
  const expanded = expandWithEnv(subPathExpr, envByteMap(envs), (name, value) => {
    if (value === undefined || value === '') missing.add(name);
  });
  if (missing.size > 0) throw new ContainerConfigError(`missing value for ${[...missing].sort().join(', ')}`);
  return expanded;
}

/** The kubelet's own checks of a (possibly expanded) subPath (upstream `makeMounts`). */
function checkSubPath(subPath: string): void {
  if (subPath.startsWith('/'))
    throw new ContainerConfigError(`error SubPath \`${subPath}\` must not be an absolute path`);
  const back = validatePathNoBacksteps(subPath);
  if (back !== undefined)
    throw new ContainerConfigError(`unable to provision SubPath \`${subPath}\`: ${back}`);
}

/** @throws ContainerConfigError naming the first field of `pod` / `container` unsafe in a host path */
export function assertHostPathSafe(pod: V1Pod, container: V1Container | undefined): void {
  const errs = [...podHostPathErrors(pod), ...(container ? containerHostPathErrors(pod, container) : [])];
  const first = errs[0];
  if (first !== undefined) throw new ContainerConfigError(`invalid pod spec: ${formatFieldError(first)}`);
}

function propagation(mode: string | undefined): MountPropagation {
  if (mode === 'HostToContainer') return MountPropagation.PROPAGATION_HOST_TO_CONTAINER;
  if (mode === 'Bidirectional') return MountPropagation.PROPAGATION_BIDIRECTIONAL;
  return MountPropagation.PROPAGATION_PRIVATE;
}

function mount(containerPath: string, hostPath: string, readonly: boolean, prop: MountPropagation): Mount {
  return {
    containerPath,
    hostPath,
    readonly,
    selinuxRelabel: false,
    propagation: prop,
    uidMappings: [],
    gidMappings: [],
    recursiveReadOnly: false,
    image: undefined,
    imageSubPath: '',
  };
}

/**
 * The mounts of a container and the host paths to prepare for them. `terminationFileId` names
 * this instance's termination message file (upstream: 8 random hex digits). `envs` expands
 * `subPathExpr`; without it (node-side preparation before the pod IP is known) such mounts are
 * left for later. With `podVolumes` (a volume manager set the pod's volumes up) every mounted
 * volume must be in it and its host path is used as is; without it only emptyDir (on disk) and
 * hostPath volumes are handled, here.
 * @throws ContainerConfigError for an unknown volume, an unsupported volume type, or a name or
 *   subPath that would leave the pod's directories
 */
export function makeMounts(
  pod: V1Pod,
  container: V1Container,
  podsRoot: string,
  terminationFileId: string,
  envs?: readonly KeyValue[],
  podVolumes?: ReadonlyMap<string, MountedPodVolume>,
): { mounts: Mount[]; prepare: HostPathToPrepare[] } {
  assertHostPathSafe(pod, container);
  const uid = pod.metadata?.uid ?? '';
  const volumes = new Map((pod.spec?.volumes ?? []).map((v) => [v.name, v]));
  const mounts: Mount[] = [];
  const prepare: HostPathToPrepare[] = [];
  for (const vm of container.volumeMounts ?? []) {
    const volume = volumes.get(vm.name);
    if (volume === undefined) {
      throw new ContainerConfigError(
        `cannot find volume "${vm.name}" to mount into container "${container.name}"`,
      );
    }
    let base: string;
    const mounted = podVolumes?.get(vm.name);
    if (podVolumes !== undefined) {
      if (mounted === undefined) {
        throw new ContainerConfigError(
          `cannot find volume "${vm.name}" to mount into container "${container.name}"`,
        );
      }
      base = mounted.hostPath;
    } else if (volume.emptyDir != null) {
      if (volume.emptyDir.medium === 'Memory' || volume.emptyDir.medium === 'HugePages') {
        throw new ContainerConfigError(
          `emptyDir volume "${vm.name}": medium ${volume.emptyDir.medium} is not supported`,
        );
      }
      base = emptyDirPath(podsRoot, uid, vm.name);
      prepare.push({ path: base, kind: 'directory', mode: 0o777, mustExist: false });
    } else if (volume.hostPath != null) {
      base = volume.hostPath.path;
      const type = volume.hostPath.type ?? '';
      if (type === 'DirectoryOrCreate')
        prepare.push({ path: base, kind: 'directory', mode: 0o755, mustExist: false });
      else if (type === 'FileOrCreate')
        prepare.push({ path: base, kind: 'file', mode: 0o644, mustExist: false });
      else if (type === 'Directory')
        prepare.push({ path: base, kind: 'directory', mode: 0o755, mustExist: true });
      else if (type === 'File') prepare.push({ path: base, kind: 'file', mode: 0o644, mustExist: true });
    } else {
      const kind = Object.keys(volume).find((k) => k !== 'name') ?? 'unknown';
      throw new ContainerConfigError(
        `volume "${vm.name}" of type ${kind} is not supported (only emptyDir and hostPath)`,
      );
    }
    let subPath = vm.subPath ?? '';
    if (vm.subPathExpr) {
      if (envs === undefined) continue;
      subPath = expandSubPathExpr(vm.subPathExpr, envs);
    }
    if (subPath !== '') checkSubPath(subPath);
    const hostPath = subPath !== '' ? join(base, subPath) : base;
    if (subPath !== '')
      prepare.push({
        path: hostPath,
        kind: 'directory',
        mode: 0o755,
        mustExist: false,
        subPathOf: { volumePath: base, subPath, volumeMount: vm.name },
      });
    const readOnly = vm.readOnly === true || mounted?.readOnly === true;
    mounts.push(mount(vm.mountPath, hostPath, readOnly, propagation(vm.mountPropagation)));
  }
  const tmp = container.terminationMessagePath ?? DEFAULT_TERMINATION_MESSAGE_PATH;
  if (tmp !== '') {
    const file = join(podContainerDirectory(podsRoot, uid, container.name), terminationFileId);
    prepare.push({ path: file, kind: 'file', mode: 0o666, mustExist: false });
    mounts.push(mount(tmp, file, false, MountPropagation.PROPAGATION_PRIVATE));
  }
  return { mounts, prepare };
}
