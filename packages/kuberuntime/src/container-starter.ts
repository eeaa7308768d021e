/**
 * Starting one container instance (upstream `startContainer`): image, node-side preparation
 * (restart count, log directory, termination message file, volume directories), config,
 * CreateContainer, StartContainer, postStart hook (a failure kills the container).
 *
 * @module
 */
import { randomBytes } from 'node:crypto';
import { chmod, mkdir, open, readdir, stat } from 'node:fs/promises';
import { cpus, totalmem } from 'node:os';
import { dirname, join } from 'node:path';
import type { V1Container, V1Pod, V1Secret } from '@kubernetes/client-node';
import type { Clock, Logger } from '@nodeagent/core';
import { definedFields } from '@nodeagent/core';
import type { Image, PodSandboxConfig } from '@nodeagent/cri';
import { type PodStatus, safeMakeDir, UnsafePathError } from '@nodeagent/kubecontainer';
import { generateContainerConfig } from './container-config.js';
import { ContainerConfigError, errorMessage, SyncErrorReason, SyncStepError } from './errors.js';
import { makeHostsMount } from './etc-hosts.js';
import type { RuntimeEventRecorder } from './event-recorder.js';
import type { ImagePuller, PrefetchedImage } from './image-puller.js';
import { type KillDeps, killContainer } from './kill.js';
import { DEFAULT_TERMINATION_MESSAGE_PATH } from './labels.js';
import { runLifecycleHandler } from './lifecycle-handlers.js';
import { assertHostPathSafe, type HostPathToPrepare, makeMounts } from './mounts.js';
import { containerLogsDirectory } from './paths.js';
import type { KubeRuntimeManagerOptions } from './runtime-manager-options.js';
import { type ImageUser, verifyRunAsNonRoot } from './security-context.js';
import type { SyncResult } from './sync-result.js';

let machine: { readonly cpuMilli: bigint; readonly memoryBytes: bigint } | undefined;
/**
 * The machine's CPUs and memory, read once (the kubelet takes them from cAdvisor's machine info
 * at start): `os.cpus()` parses `/proc/cpuinfo` and costs about 0.3 ms, on every container start.
 */
function machineCapacity(): { readonly cpuMilli: bigint; readonly memoryBytes: bigint } {
  machine ??= { cpuMilli: BigInt(cpus().length * 1000), memoryBytes: BigInt(totalmem()) };
  return machine;
}

/** Work started ahead for a container while its sandbox is created. */
export interface Prefetched {
  /**
   * The image's `ImageStatus`, being read ({@link ImagePuller.prefetch}): its ID tells whether
   * the image is present, and its user serves when the container starts with that image.
   */
  readonly image: Promise<PrefetchedImage | undefined> | undefined;
  /** The node-side preparation, under way. */
  readonly prepared: Promise<PreparedContainer>;
}

/** The node-side preparation of one container instance. */
export interface PreparedContainer {
  /** Restart count of the new instance. */
  readonly restartCount: number;
  /** Name of its termination message file. */
  readonly terminationFileId: string;
}

/** What {@link ContainerStarter} needs from the manager. */
export interface ContainerStarterDeps {
  /** The manager's options. */
  readonly options: KubeRuntimeManagerOptions;
  /** Hook timeouts. */
  readonly clock: Clock;
  /** Start failures. */
  readonly logger: Logger;
  /** Image pulls. */
  readonly puller: ImagePuller;
  /** Root of pod directories. */
  readonly podsRoot: string;
  /** Root of pod log directories. */
  readonly podLogsRoot: string;
  /** Reads the pod's status (to kill after a failed postStart). */
  readonly getPodStatus: (pod: V1Pod) => Promise<PodStatus>;
  /** Kill dependencies. */
  readonly killDeps: () => KillDeps;
  /** Container events (`Created`, `Started`, `Failed`, `FailedPostStartHook`); must not throw. @default none */
  readonly recorder?: RuntimeEventRecorder;
}

/** Starts container instances for the runtime manager. */
export class ContainerStarter {
  readonly #deps: ContainerStarterDeps;

  constructor(deps: ContainerStarterDeps) {
    this.#deps = deps;
  }

  /**
   * The node-side preparation of a container instance that does not depend on the sandbox:
   * restart count, log directory, termination message file and volume directories.
   */
  async prepare(pod: V1Pod, container: V1Container, podStatus: PodStatus): Promise<PreparedContainer> {
    const previous = podStatus.containerStatuses.find((c) => c.name === container.name);
    try {
      // Before the log directory is even read: its path is made of pod and container names.
      assertHostPathSafe(pod, container);
    } catch (err) {
      throw new SyncStepError(SyncErrorReason.CreateContainerConfigError, errorMessage(err), { cause: err });
    }
    const logDir = containerLogsDirectory(this.#deps.podLogsRoot, pod, container.name);
    const restartCount =
      previous !== undefined ? previous.restartCount + 1 : await restartCountFromLogDir(logDir);
    const terminationFileId = randomBytes(4).toString('hex');
    try {
      const { prepare } = makeMounts(
        pod,
        container,
        this.#deps.podsRoot,
        terminationFileId,
        undefined,
        this.#deps.options.podVolumes?.(pod),
      );
      await mkdir(logDir, { recursive: true, mode: 0o755 });
      for (const p of prepare) await prepareHostPath(p, container.name);
    } catch (err) {
      throw new SyncStepError(SyncErrorReason.CreateContainerConfigError, errorMessage(err), { cause: err });
    }
    return { restartCount, terminationFileId };
  }

  /** The image's user from the runtime's ImageStatus (upstream `getImageUser`). */
  async #imageUser(imageRef: string): Promise<ImageUser> {
    const { image } = await this.#deps.options.cri.image.imageStatus({ image: { image: imageRef } });
    return imageUserOf(image);
  }

  /** Pulls the image, creates and starts the container, runs postStart. @throws SyncStepError */
  async start(
    sandboxId: string,
    sandboxConfig: PodSandboxConfig,
    container: V1Container,
    pod: V1Pod,
    podStatus: PodStatus,
    pullSecrets: readonly V1Secret[],
    podIps: readonly string[],
    prefetched: Prefetched | undefined,
    step?: SyncResult,
  ): Promise<void> {
    const record = this.#deps.recorder ?? (() => {});
    // Upstream records every failed step as `Failed` "Error: <message>"; an image failure's
    // message is its reason (ErrImagePull, ImagePullBackOff, …).
    const failed = (message: string) => record(pod, container, 'Warning', 'Failed', `Error: ${message}`);
    let imageRef: string;
    try {
      imageRef = await this.#deps.puller.ensureImageExists(
        pod,
        container,
        pullSecrets,
        sandboxConfig,
        prefetched?.image?.then((i) => i?.id),
      );
    } catch (err) {
      failed(err instanceof SyncStepError ? err.reason : errorMessage(err));
      throw err;
    }
    let prepared: PreparedContainer;
    try {
      prepared = await (prefetched?.prepared ?? this.prepare(pod, container, podStatus));
    } catch (err) {
      failed(errorMessage(err));
      throw err;
    }
    let generated: ReturnType<typeof generateContainerConfig>;
    try {
      // The prefetched ImageStatus names the image by the spec; upstream's getImageUser asks
      // again by the ID, which names the same image.
      const early = await prefetched?.image;
      const imageUser =
        early?.image !== undefined && early.id === imageRef
          ? imageUserOf(early.image)
          : await this.#imageUser(imageRef);
      verifyRunAsNonRoot(pod, container, imageUser);
      generated = generateContainerConfig(pod, container, prepared.restartCount, imageRef, {
        imageUser,
        seccompProfileRoot:
          this.#deps.options.seccompProfileRoot ?? join(dirname(this.#deps.podsRoot), 'seccomp'),
        podIp: podIps[0] ?? '',
        podIps,
        hostIps: this.#deps.options.hostIps ?? [],
        nodeAllocatable: this.#deps.options.nodeAllocatable ?? machineCapacity(),
        envSources: this.#deps.options.envSources,
        memoryCapacityBytes: this.#deps.options.memoryCapacityBytes ?? machineCapacity().memoryBytes,
        ...(this.#deps.options.cpuCfsQuota === undefined
          ? {}
          : { cpuCfsQuota: this.#deps.options.cpuCfsQuota }),
        ...(this.#deps.options.cpuCfsQuotaPeriodUs === undefined
          ? {}
          : { cpuCfsQuotaPeriodUs: this.#deps.options.cpuCfsQuotaPeriodUs }),
        ...(this.#deps.options.seccompDefault === undefined
          ? {}
          : { seccompDefault: this.#deps.options.seccompDefault }),
        podsRoot: this.#deps.podsRoot,
        terminationFileId: prepared.terminationFileId,
        podVolumes: this.#deps.options.podVolumes?.(pod),
      });
      const hostsMount = await makeHostsMount(pod, container, this.#deps.podsRoot, podIps, {
        clusterDomain: this.#deps.options.clusterDomain,
        nodeHostsFile: this.#deps.options.nodeHostsFile,
      });
      if (hostsMount !== undefined) {
        // After the volume mounts, before the termination message file, as upstream orders them.
        const mounts = generated.config.mounts;
        const tmp = container.terminationMessagePath ?? DEFAULT_TERMINATION_MESSAGE_PATH;
        mounts.splice(tmp === '' ? mounts.length : mounts.length - 1, 0, hostsMount);
      }
      // subPaths again, right before CreateContainer: subPathExpr needed the environment, and a
      // container sharing the volume may have planted a symlink since the preparation.
      for (const p of generated.prepare) {
        if (p.subPathOf === undefined) continue;
        const real = await prepareHostPath(p, container.name);
        for (const m of generated.config.mounts) if (m.hostPath === p.path) m.hostPath = real;
      }
    } catch (err) {
      failed(errorMessage(err));
      throw new SyncStepError(SyncErrorReason.CreateContainerConfigError, errorMessage(err), { cause: err });
    }
    let containerId: string;
    try {
      containerId = (
        await this.#deps.options.cri.runtime.createContainer({
          podSandboxId: sandboxId,
          config: generated.config,
          sandboxConfig,
        })
      ).containerId;
    } catch (err) {
      failed(errorMessage(err));
      throw new SyncStepError(SyncErrorReason.CreateContainerError, errorMessage(err), { cause: err });
    }
    if (step !== undefined) step.runtimeId = containerId;
    // StartContainer goes out first, then the Created event (still before Started): recording
    // prepares the event's API request, which need not delay the start.
    const starting = this.#deps.options.cri.runtime.startContainer({ containerId });
    starting.catch(() => {}); // awaited below; handled even if recording throws
    record(pod, container, 'Normal', 'Created', `Created container: ${container.name}`);
    try {
      await starting;
    } catch (err) {
      failed(errorMessage(err));
      throw new SyncStepError(SyncErrorReason.RunContainerError, errorMessage(err), { cause: err });
    }
    record(pod, container, 'Normal', 'Started', `Started container ${container.name}`);
    const postStart = container.lifecycle?.postStart;
    if (postStart != null) {
      try {
        await runLifecycleHandler(
          {
            runtime: this.#deps.options.cri.runtime,
            clock: this.#deps.clock,
            ...definedFields({ httpGet: this.#deps.options.httpGet }),
          },
          containerId,
          container,
          postStart,
          podIps[0] ?? '',
        );
      } catch (err) {
        this.#deps.logger.warn(
          { container: container.name, err: errorMessage(err) },
          'Failed to execute PostStartHook',
        );
        // Not the hook's output: it may hold secrets (as upstream).
        record(pod, container, 'Warning', 'FailedPostStartHook', 'PostStartHook failed');
        const status = await this.#deps.getPodStatus(pod);
        const c = status.containerStatuses.find((s) => s.id === containerId);
        if (c !== undefined) {
          await killContainer(this.#deps.killDeps(), pod, c, {
            message: 'FailedPostStartHook',
            reason: 'FailedPostStartHook',
          }).catch(() => {});
        }
        throw new SyncStepError(SyncErrorReason.PostStartHookError, errorMessage(err), { cause: err });
      }
    }
  }
}

/** The next restart count from the log files `<n>.log*` in a container log directory (upstream `calcRestartCountByLogDir`). */
export async function restartCountFromLogDir(dir: string): Promise<number> {
  let names: string[];
  try {
    names = await readdir(dir);
  } catch {
    return 0;
  }
  let count = 0;
  for (const name of names) {
    const m = /^(\d+)\.log(\..*)?$/.exec(name);
    if (m === null) continue;
    const n = Number(m[1]) + 1;
    if (n > count) count = n;
  }
  return count;
}

/** Creates or checks one host path; returns the path to mount (a subPath's resolved path). */
async function prepareHostPath(p: HostPathToPrepare, containerName: string): Promise<string> {
  const sub = p.subPathOf;
  if (sub !== undefined) {
    try {
      const mode = (await stat(sub.volumePath)).mode & 0o7777;
      return await safeMakeDir(sub.volumePath, sub.subPath, mode);
    } catch (err) {
      // As the kubelet: name the mount, not the host path (the detail is in `cause`).
      const what = err instanceof UnsafePathError ? 'prepare subPath' : 'create subPath directory';
      throw new ContainerConfigError(
        `failed to ${what} for volumeMount "${sub.volumeMount}" of container "${containerName}"`,
        { cause: err },
      );
    }
  }
  const existing = await stat(p.path).catch(() => undefined);
  if (existing !== undefined) {
    if (p.kind === 'directory' && !existing.isDirectory())
      throw new ContainerConfigError(`hostPath ${p.path} is not a directory`);
    if (p.kind === 'file' && existing.isDirectory())
      throw new ContainerConfigError(`hostPath ${p.path} is a directory, not a file`);
    return p.path;
  }
  if (p.mustExist) throw new ContainerConfigError(`hostPath type check failed: ${p.path} does not exist`);
  // Like the kubelet, force group/other write bits (emptyDir 0777, termination file 0666)
  // past the umask; other modes are left to it.
  const narrowed = (p.mode & 0o022) !== 0;
  if (p.kind === 'directory') {
    await mkdir(p.path, { recursive: true, mode: p.mode });
    if (narrowed) await chmod(p.path, p.mode);
  } else {
    await mkdir(dirname(p.path), { recursive: true, mode: 0o750 });
    const fh = await open(p.path, 'a', p.mode);
    if (narrowed) await fh.chmod(p.mode);
    await fh.close();
  }
  return p.path;
}

/** An image's user as CRI reports it: a numeric UID, else a user name; none named is root. */
function imageUserOf(image: Image | undefined): ImageUser {
  if (image?.uid !== undefined) return { uid: image.uid.value };
  if (image !== undefined && image.username !== '') return { username: image.username };
  return { uid: 0n };
}
