/**
 * The `ContainerConfig` of one container instance (upstream `generateContainerConfig`):
 * metadata with the restart count as attempt, image, expanded command/args, environment,
 * working dir, mounts, labels/annotations, log path, resources and security context.
 *
 * @module
 */
import type { V1Container, V1Pod } from '@kubernetes/client-node';
import type { ContainerConfig } from '@nodeagent/cri';
import { type EnvContext, expandCommandAndArgs, makeEnvironmentVariables } from './env.js';
import { newContainerAnnotations, newContainerLabels } from './labels.js';
import { type HostPathToPrepare, type MountedPodVolume, makeMounts } from './mounts.js';
import { containerLogPath } from './paths.js';
import { type ContainerResourceOptions, containerLinuxResources } from './resources.js';
import { type ContainerSecurityOptions, containerSecurityContext } from './security-context.js';

/** Everything a container config depends on besides the pod and container. */
export interface ContainerConfigContext
  extends EnvContext,
    ContainerResourceOptions,
    ContainerSecurityOptions {
  /** Root of pod directories (emptyDir volumes, termination message files). */
  readonly podsRoot: string;
  /** Name of this instance's termination message file. */
  readonly terminationFileId: string;
  /** The pod's volumes as a volume manager set them up. @default none (emptyDir and hostPath only) */
  readonly podVolumes?: ReadonlyMap<string, MountedPodVolume> | undefined;
}

/** A container config plus the host paths that must exist before `CreateContainer`. */
export interface GeneratedContainerConfig {
  /** The CRI config. */
  readonly config: ContainerConfig;
  /** Directories and files to create (or check) first. */
  readonly prepare: readonly HostPathToPrepare[];
}

/**
 * Builds the config of `container` for its `restartCount`-th start, running `imageRef`.
 * @throws ContainerConfigError when env references, volumes or security profiles cannot be resolved
 */
export function generateContainerConfig(
  pod: V1Pod,
  container: V1Container,
  restartCount: number,
  imageRef: string,
  ctx: ContainerConfigContext,
): GeneratedContainerConfig {
  const envs = makeEnvironmentVariables(pod, container, ctx);
  const { command, args } = expandCommandAndArgs(container, envs);
  const { mounts, prepare } = makeMounts(
    pod,
    container,
    ctx.podsRoot,
    ctx.terminationFileId,
    envs,
    ctx.podVolumes,
  );
  const config: ContainerConfig = {
    metadata: { name: container.name, attempt: restartCount },
    image: {
      image: imageRef,
      annotations: {},
      userSpecifiedImage: container.image ?? '',
      runtimeHandler: '',
      imageRef: '',
    },
    command,
    args,
    workingDir: container.workingDir ?? '',
    envs,
    mounts,
    devices: [],
    labels: newContainerLabels(container, pod),
    annotations: newContainerAnnotations(container, pod, restartCount),
    logPath: containerLogPath(container.name, restartCount),
    stdin: container.stdin === true,
    stdinOnce: container.stdinOnce === true,
    tty: container.tty === true,
    linux: {
      resources: containerLinuxResources(pod, container, ctx),
      securityContext: containerSecurityContext(pod, container, ctx),
    },
    windows: undefined,
    CDIDevices: [],
    stopSignal: 0,
  };
  return { config, prepare };
}
