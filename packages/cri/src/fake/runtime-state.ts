/**
 * The fake runtime's state machine: sandboxes READY → NOTREADY → removed, containers
 * CREATED → RUNNING → EXITED → removed, with the simulated processes' timing on the
 * injected clock, and the container events every transition emits. Pure in-memory;
 * the gRPC layer (server.ts) only decodes, calls in here and encodes.
 *
 * @module
 */
import { join } from 'node:path';
import { status } from '@grpc/grpc-js';
import type { Clock } from '@nodeagent/core';
import {
  type ContainerConfig,
  type ContainerEventResponse,
  ContainerEventType,
  type ContainerFilter,
  ContainerState,
  NamespaceMode,
  type PodSandboxConfig,
  type PodSandboxFilter,
  PodSandboxState,
} from '../gen/runtime/v1/api.js';
import { type BehaviourRule, type ContainerIdentity, findBehaviour } from './behaviours.js';
import { ContainerProcesses } from './container-process.js';
import { FakeRuntimeError, invalidArgument, notFound, wrongState } from './fake-error.js';
import { IdGenerator, normalizeFilterId, resolveId } from './ids.js';
import { normalizeImageRef } from './image-ref.js';
import type { ImageStore } from './image-store.js';
import type { IpPool } from './ip-pool.js';
import { LabelIndex, labelsMatch } from './label-index.js';
import { type ContainerRecord, NanoClock, type SandboxRecord } from './records.js';
import { toContainerEvent } from './wire.js';

const DEFAULT_MEMORY_BYTES = 4 * 1024 * 1024;
const DEFAULT_CPU_CORES = 0.01;

/** What the state machine needs from the fake that owns it. */
export interface RuntimeStateDeps {
  readonly clock: Clock;
  readonly images: ImageStore;
  readonly ipPool: () => IpPool;
  readonly behaviours: readonly BehaviourRule[];
  readonly idSeed: string;
}

/** The fields of `ContainerFilter` and `ContainerStatsFilter` that the fake filters on. */
export type ContainerListFilter = Pick<ContainerFilter, 'id' | 'podSandboxId' | 'labelSelector'> & {
  readonly state?: ContainerFilter['state'];
};

/** The fields of `PodSandboxFilter` and `PodSandboxStatsFilter` that the fake filters on. */
export type SandboxListFilter = Pick<PodSandboxFilter, 'id' | 'labelSelector'> & {
  readonly state?: PodSandboxFilter['state'];
};

function containerNameKey(sandboxId: string, name: string, attempt: number): string {
  return `${sandboxId}/${name}/${attempt}`;
}

/** A listener for container events; see {@link RuntimeState.onEvent}. */
export type ContainerEventListener = (event: ContainerEventResponse) => void;

/** The sandboxes and containers of one fake runtime. */
export class RuntimeState {
  /** Sandboxes by ID, in creation order. */
  readonly sandboxes = new Map<string, SandboxRecord>();
  /** Containers by ID, in creation order. */
  readonly containers = new Map<string, ContainerRecord>();
  /** The ns timestamp source (strictly increasing). */
  readonly nanos: NanoClock;
  readonly #ids: IdGenerator;
  readonly #listeners = new Set<ContainerEventListener>();
  /** Reserved sandbox names (name_namespace_uid_attempt) → sandbox ID. */
  readonly #sandboxNames = new Map<string, string>();
  /** Reserved container names (sandbox/name/attempt) → container ID. */
  readonly #containerNames = new Map<string, string>();
  /** Container IDs of each sandbox, in creation order. */
  readonly #bySandbox = new Map<string, Set<string>>();
  /** Sandbox / container IDs by label, for label-selector list filters. */
  readonly #sandboxLabels = new LabelIndex();
  readonly #containerLabels = new LabelIndex();
  readonly #processes: ContainerProcesses;

  readonly #deps: RuntimeStateDeps;
  constructor(deps: RuntimeStateDeps) {
    this.#deps = deps;
    this.nanos = new NanoClock(deps.clock);
    this.#ids = new IdGenerator(deps.idSeed);
    this.#processes = new ContainerProcesses({
      clock: deps.clock,
      nanos: this.nanos,
      emit: (c, type) => this.#emit(c.id, c.sandboxId, type),
      exists: (c) => this.containers.get(c.id) === c,
    });
  }

  /** Calls `listener` for every container event from now on; returns the unsubscribe function. */
  onEvent(listener: ContainerEventListener): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  // ---- sandboxes ---------------------------------------------------------------

  /** RunPodSandbox: a READY sandbox with a pod IP (none on the host network). */
  runPodSandbox(config: PodSandboxConfig | undefined, runtimeHandler: string): string {
    const meta = config?.metadata;
    if (
      config === undefined ||
      meta === undefined ||
      meta.name === '' ||
      meta.namespace === '' ||
      meta.uid === ''
    ) {
      throw invalidArgument('sandbox config must include metadata with name, namespace and uid');
    }
    // Names are reserved like containerd's: one sandbox per name/namespace/uid/attempt.
    const nameKey = `${meta.name}_${meta.namespace}_${meta.uid}_${meta.attempt}`;
    const holder = this.#sandboxNames.get(nameKey);
    if (holder !== undefined) {
      throw new FakeRuntimeError(
        status.ALREADY_EXISTS,
        `failed to reserve sandbox name "${nameKey}": name is reserved for "${holder}"`,
      );
    }
    const hostNetwork = config.linux?.securityContext?.namespaceOptions?.network === NamespaceMode.NODE;
    const sandbox: SandboxRecord = {
      id: this.#ids.next('sandbox'),
      config,
      runtimeHandler,
      createdAtNs: this.nanos.now(),
      hostNetwork,
      state: PodSandboxState.SANDBOX_READY,
      ip: hostNetwork ? '' : this.#deps.ipPool().allocate(),
    };
    this.sandboxes.set(sandbox.id, sandbox);
    this.#sandboxNames.set(nameKey, sandbox.id);
    this.#bySandbox.set(sandbox.id, new Set());
    this.#sandboxLabels.add(sandbox.id, config.labels);
    // containerd announces a sandbox as a container whose ID is the sandbox ID.
    this.#emit(sandbox.id, sandbox.id, ContainerEventType.CONTAINER_CREATED_EVENT);
    this.#emit(sandbox.id, sandbox.id, ContainerEventType.CONTAINER_STARTED_EVENT);
    return sandbox.id;
  }

  /** StopPodSandbox: kills its running containers, releases the IP; idempotent, also for unknown IDs. */
  stopPodSandbox(idOrPrefix: string): void {
    const id = resolveId(this.sandboxes, idOrPrefix);
    const sandbox = id === undefined ? undefined : this.sandboxes.get(id);
    if (sandbox === undefined) return;
    for (const c of this.containersOf(sandbox.id)) {
      this.#processes.kill(c);
    }
    if (sandbox.state === PodSandboxState.SANDBOX_NOTREADY) return;
    sandbox.state = PodSandboxState.SANDBOX_NOTREADY;
    if (sandbox.ip !== '') this.#deps.ipPool().release(sandbox.ip);
    sandbox.ip = '';
    this.#emit(sandbox.id, sandbox.id, ContainerEventType.CONTAINER_STOPPED_EVENT);
  }

  /** RemovePodSandbox: stops it if needed, removes its containers and itself; idempotent. */
  removePodSandbox(idOrPrefix: string): void {
    const id = resolveId(this.sandboxes, idOrPrefix);
    const sandbox = id === undefined ? undefined : this.sandboxes.get(id);
    if (sandbox === undefined) return;
    this.stopPodSandbox(sandbox.id);
    for (const c of this.containersOf(sandbox.id)) this.removeContainer(c.id);
    this.#emit(sandbox.id, sandbox.id, ContainerEventType.CONTAINER_DELETED_EVENT);
    this.sandboxes.delete(sandbox.id);
    this.#bySandbox.delete(sandbox.id);
    this.#sandboxLabels.delete(sandbox.id, sandbox.config.labels);
    const m = sandbox.config.metadata;
    this.#sandboxNames.delete(`${m?.name}_${m?.namespace}_${m?.uid}_${m?.attempt}`);
  }

  /** The sandbox `idOrPrefix` names. @throws FakeRuntimeError NOT_FOUND. */
  requireSandbox(idOrPrefix: string): SandboxRecord {
    const id = resolveId(this.sandboxes, idOrPrefix);
    const sandbox = id === undefined ? undefined : this.sandboxes.get(id);
    if (sandbox === undefined) throw notFound('sandbox', idOrPrefix);
    return sandbox;
  }

  /** ListPodSandbox semantics: id (full or unique prefix), state, label subset. */
  listSandboxes(filter: SandboxListFilter | undefined): SandboxRecord[] {
    if (filter === undefined) return [...this.sandboxes.values()];
    const id = filter.id === '' ? '' : normalizeFilterId(this.sandboxes, filter.id);
    // Narrow to the named sandbox or the label index's candidates, then check every condition.
    const candidates =
      id !== '' ? [id] : (this.#sandboxLabels.candidates(filter.labelSelector) ?? this.sandboxes.keys());
    const out: SandboxRecord[] = [];
    for (const candidate of candidates) {
      const s = this.sandboxes.get(candidate);
      if (
        s !== undefined &&
        (filter.state === undefined || s.state === filter.state.state) &&
        labelsMatch(filter.labelSelector, s.config.labels)
      )
        out.push(s);
    }
    return out;
  }

  // ---- containers --------------------------------------------------------------

  /** CreateContainer: a CREATED container in a READY sandbox, from an image present on the node. */
  createContainer(sandboxIdOrPrefix: string, config: ContainerConfig | undefined): string {
    const sandbox = this.requireSandbox(sandboxIdOrPrefix);
    const meta = config?.metadata;
    if (config === undefined || meta === undefined || meta.name === '') {
      throw invalidArgument('container config must include metadata with a name');
    }
    const imageRef = config.image?.image ?? '';
    if (imageRef === '') throw invalidArgument(`container "${meta.name}" has no image`);
    if (sandbox.state !== PodSandboxState.SANDBOX_READY) {
      throw wrongState(`sandbox "${sandbox.id}" is not ready, cannot create container "${meta.name}"`);
    }
    const image = this.#deps.images.find(imageRef);
    if (image === undefined) {
      throw new FakeRuntimeError(
        status.NOT_FOUND,
        `failed to get image "${imageRef}": image not found on the node`,
      );
    }
    const nameKey = containerNameKey(sandbox.id, meta.name, meta.attempt);
    const holder = this.#containerNames.get(nameKey);
    if (holder !== undefined) {
      throw new FakeRuntimeError(
        status.ALREADY_EXISTS,
        `failed to reserve container name "${meta.name}" attempt ${meta.attempt} in sandbox "${sandbox.id}": name is reserved for "${holder}"`,
      );
    }
    const who: ContainerIdentity = {
      name: meta.name,
      image: imageRef,
      normalizedImage: normalizeImageRef(imageRef),
      argv: [...config.command, ...config.args],
    };
    const behaviour = findBehaviour(this.#deps.behaviours, who);
    const logDir = sandbox.config.logDirectory;
    const record: ContainerRecord = {
      id: this.#ids.next('container'),
      sandboxId: sandbox.id,
      config,
      image: config.image ?? {
        image: imageRef,
        annotations: {},
        userSpecifiedImage: '',
        runtimeHandler: '',
        imageRef: '',
      },
      imageId: image.id,
      logPath: logDir !== '' && config.logPath !== '' ? join(logDir, config.logPath) : '',
      createdAtNs: this.nanos.now(),
      behaviour,
      state: ContainerState.CONTAINER_CREATED,
      startedAtNs: 0n,
      finishedAtNs: 0n,
      exitCode: 0,
      reason: '',
      message: '',
      resources: config.linux?.resources === undefined ? undefined : { linux: config.linux.resources },
      timers: [],
      starting: false,
      exitWaiters: [],
      usage: {
        memoryWorkingSetBytes: behaviour.memoryWorkingSetBytes ?? DEFAULT_MEMORY_BYTES,
        cpuCores: behaviour.cpuCores ?? DEFAULT_CPU_CORES,
      },
    };
    this.containers.set(record.id, record);
    this.#containerNames.set(nameKey, record.id);
    this.#bySandbox.get(sandbox.id)?.add(record.id);
    this.#containerLabels.add(record.id, config.labels);
    this.#emit(record.id, sandbox.id, ContainerEventType.CONTAINER_CREATED_EVENT);
    return record.id;
  }

  /** StartContainer, following the container's behaviour (delay, start error, crash, self-exit). */
  async startContainer(idOrPrefix: string): Promise<void> {
    const c = this.requireContainer(idOrPrefix);
    if (c.state !== ContainerState.CONTAINER_CREATED || c.starting) {
      throw wrongState(
        `container "${c.id}" is in ${ContainerState[c.state]} state, only a created container can start`,
      );
    }
    const sandbox = this.sandboxes.get(c.sandboxId);
    if (sandbox?.state !== PodSandboxState.SANDBOX_READY) {
      throw wrongState(`sandbox "${c.sandboxId}" of container "${c.id}" is not ready`);
    }
    await this.#processes.start(c);
  }

  /**
   * StopContainer: SIGTERM, wait up to `timeoutSeconds` on the clock, then SIGKILL (137).
   * Idempotent: unknown, created and exited containers are left as they are.
   */
  async stopContainer(idOrPrefix: string, timeoutSeconds: number): Promise<void> {
    const id = resolveId(this.containers, idOrPrefix);
    const c = id === undefined ? undefined : this.containers.get(id);
    if (c !== undefined) await this.#processes.stop(c, timeoutSeconds);
  }

  /** RemoveContainer: kills it if running, then forgets it; idempotent. */
  removeContainer(idOrPrefix: string): void {
    const id = resolveId(this.containers, idOrPrefix);
    const c = id === undefined ? undefined : this.containers.get(id);
    if (c === undefined) return;
    this.#processes.kill(c);
    this.containers.delete(c.id);
    this.#bySandbox.get(c.sandboxId)?.delete(c.id);
    this.#containerLabels.delete(c.id, c.config.labels);
    this.#containerNames.delete(
      containerNameKey(c.sandboxId, c.config.metadata?.name ?? '', c.config.metadata?.attempt ?? 0),
    );
    this.#emit(c.id, c.sandboxId, ContainerEventType.CONTAINER_DELETED_EVENT);
  }

  /** Ends a running container's process now, as an outside event would (OOM kill, crash). */
  exit(c: ContainerRecord, exitCode: number, reason: string, message: string): void {
    this.#processes.exit(c, exitCode, reason, message);
  }

  /** The container `idOrPrefix` names. @throws FakeRuntimeError NOT_FOUND. */
  requireContainer(idOrPrefix: string): ContainerRecord {
    const id = resolveId(this.containers, idOrPrefix);
    const c = id === undefined ? undefined : this.containers.get(id);
    if (c === undefined) throw notFound('container', idOrPrefix);
    return c;
  }

  /** ListContainers semantics: id and sandbox id (full or unique prefix), state, label subset. */
  listContainers(filter: ContainerListFilter | undefined): ContainerRecord[] {
    if (filter === undefined) return [...this.containers.values()];
    const id = filter.id === '' ? '' : normalizeFilterId(this.containers, filter.id);
    const sandboxId =
      filter.podSandboxId === '' ? '' : normalizeFilterId(this.sandboxes, filter.podSandboxId);
    // Narrow to the named container, the sandbox's containers or the label index's
    // candidates (all in creation order), then check every condition.
    const candidates =
      id !== ''
        ? [id]
        : sandboxId !== ''
          ? (this.#bySandbox.get(sandboxId) ?? [])
          : (this.#containerLabels.candidates(filter.labelSelector) ?? this.containers.keys());
    const out: ContainerRecord[] = [];
    for (const candidate of candidates) {
      const c = this.containers.get(candidate);
      if (
        c !== undefined &&
        (sandboxId === '' || c.sandboxId === sandboxId) &&
        (filter.state === undefined || c.state === filter.state.state) &&
        labelsMatch(filter.labelSelector, c.config.labels)
      )
        out.push(c);
    }
    return out;
  }

  /** The containers of one sandbox, in creation order. */
  containersOf(sandboxId: string): ContainerRecord[] {
    const ids = this.#bySandbox.get(sandboxId);
    if (ids === undefined) return [];
    return [...ids].flatMap((id) => {
      const c = this.containers.get(id);
      return c === undefined ? [] : [c];
    });
  }

  #emit(containerId: string, sandboxId: string, type: ContainerEventType): void {
    if (this.#listeners.size === 0) return;
    const event = toContainerEvent(
      containerId,
      type,
      this.nanos.now(),
      this.sandboxes.get(sandboxId),
      this.containersOf(sandboxId),
    );
    for (const listener of this.#listeners) listener(event);
  }
}
