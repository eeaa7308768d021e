/**
 * Container mounts for the volume types this runtime manager handles itself: `emptyDir` (a
 * directory under the pod's directory) and `hostPath`, plus the termination message file
 * (upstream `makeMounts`). Other volume types need a volume manager and are rejected.
 *
 * @module
 */
import { join } from 'node:path';
import type { V1Container, V1Pod } from '@kubernetes/client-node';
import { type Mount, MountPropagation } from '@nodeagent/cri';
import { ContainerConfigError } from './errors.js';
import { DEFAULT_TERMINATION_MESSAGE_PATH } from './labels.js';
import { emptyDirPath, podContainerDirectory } from './paths.js';

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
 * this instance's termination message file (upstream: 8 random hex digits).
 * @throws ContainerConfigError for an unknown volume or an unsupported volume type
 */
export function makeMounts(
  pod: V1Pod,
  container: V1Container,
  podsRoot: string,
  terminationFileId: string,
): { mounts: Mount[]; prepare: HostPathToPrepare[] } {
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
    if (volume.emptyDir != null) {
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
    const hostPath = vm.subPath ? join(base, vm.subPath) : base;
    if (vm.subPath) prepare.push({ path: hostPath, kind: 'directory', mode: 0o755, mustExist: false });
    mounts.push(mount(vm.mountPath, hostPath, vm.readOnly === true, propagation(vm.mountPropagation)));
  }
  const tmp = container.terminationMessagePath ?? DEFAULT_TERMINATION_MESSAGE_PATH;
  if (tmp !== '') {
    const file = join(podContainerDirectory(podsRoot, uid, container.name), terminationFileId);
    prepare.push({ path: file, kind: 'file', mode: 0o666, mustExist: false });
    mounts.push(mount(tmp, file, false, MountPropagation.PROPAGATION_PRIVATE));
  }
  return { mounts, prepare };
}
