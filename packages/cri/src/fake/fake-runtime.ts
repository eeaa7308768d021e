/**
 * {@link FakeRuntime}: an in-memory CRI runtime served over a real gRPC unix socket, so
 * code under test talks to it exactly as it would to containerd.
 *
 * @module
 */

import { randomBytes } from 'node:crypto';
import { lstat, mkdir, rm, unlink } from 'node:fs/promises';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { Server, ServerCredentials, type ServerWritableStream } from '@grpc/grpc-js';
import { type Clock, type Lifecycle, raceAbort, realClock, StartOnce } from '@nodeagent/core';
import type { PartialMessage } from '../call-options.js';
import type { ImageServiceRpc, RuntimeServiceRpc } from '../gen/facade.js';
import type {
  ContainerEventResponse,
  ContainerStatus,
  GetEventsRequest,
  Image,
  PodSandboxStatus,
  RuntimeCondition,
} from '../gen/protocol.js';
import {
  CgroupDriver,
  ContainerConfig,
  ImageServiceService,
  PodSandboxConfig,
} from '../gen/runtime/v1/api.js';
import type { BehaviourRule, ContainerBehaviour, ContainerMatch, ExecScript } from './behaviours.js';
import { type DefaultExecHandler, succeedSilently } from './exec.js';
import { FakeRuntimeConfigError } from './fake-error.js';
import { FaultPlan, type InjectedError, type RecordedCall } from './faults.js';
import { imageServiceHandlers } from './image-service.js';
import { type FakeImage, type FakeRegistryResolver, ImageStore } from './image-store.js';
import { IpPool } from './ip-pool.js';
import {
  type FakeVersionInfo,
  fakeRuntimeServiceDefinition,
  runtimeServiceHandlers,
} from './runtime-service.js';
import { RuntimeState } from './runtime-state.js';
import { FakeStreamingServer } from './streaming-server.js';
import { toContainerStatus, toImage, toSandboxStatus } from './wire.js';

/** The name of a CRI RPC, as in the proto (`"StartContainer"`, `"PullImage"`). */
export type CriMethod = RuntimeServiceRpc | ImageServiceRpc;

/** Options of {@link FakeRuntime}. */
export interface FakeRuntimeOptions {
  /** Time source for timestamps, behaviours, latencies and stop timeouts. @default realClock */
  readonly clock?: Clock;
  /** Unix socket path to listen on. @default `cri.sock` in a fresh directory under the OS temp dir */
  readonly socketPath?: string;
  /** IPv4 CIDR the pod IPs come from (network and `.1` gateway excluded). @default "10.88.0.0/16" (containerd's default bridge) */
  readonly podCidr?: string;
  /** Images present on the node at start (also pullable). @default none */
  readonly images?: readonly FakeImage[];
  /** Images only the "registry" has: pullable, not present. Pulling anything else fails with NOT_FOUND. @default none */
  readonly registryImages?: readonly FakeImage[];
  /**
   * Serves pulls of references neither `images` nor `registryImages` list (called with the
   * normalised reference): return the image to pull, or `undefined` for the registry's NOT_FOUND.
   * @default none (such pulls fail)
   */
  readonly registryResolver?: FakeRegistryResolver;
  /** Container behaviours; the first rule whose match fits a container applies. @default none (containers run until stopped) */
  readonly behaviours?: readonly BehaviourRule[];
  /** Runtime-wide `ExecSync` scripts, tried after the container's own. @default none */
  readonly execScripts?: readonly ExecScript[];
  /** Answers commands no script matches. @default exit code 0, no output */
  readonly defaultExec?: DefaultExecHandler;
  /** Whether `GetContainerEvents` streams events; `false` answers UNIMPLEMENTED, as containerd 1.6 does. @default true */
  readonly containerEvents?: boolean;
  /** Whether the v0.36 `Stream*` list RPCs are served; `false` answers UNIMPLEMENTED (runtimes before them). @default true */
  readonly streamingLists?: boolean;
  /** Items per message of the `Stream*` lists. Minimum: 1. @default 1000 */
  readonly streamChunkSize?: number;
  /** Version strings. @default { runtimeName: "fakeRuntime", runtimeVersion: "0.1.0", runtimeApiVersion: "v1" } */
  readonly version?: Partial<FakeVersionInfo>;
  /** The cgroup driver `RuntimeConfig` reports. @default "cgroupfs" (containerd's default) */
  readonly cgroupDriver?: 'systemd' | 'cgroupfs';
  /** Seed of the deterministic 64-hex IDs. @default "fake-runtime" */
  readonly idSeed?: string;
}

/** How {@link FakeRuntime.killContainer} ends a process. */
export interface KillOptions {
  /** @default 137 */
  readonly exitCode?: number;
  /** @default "Error" (use "OOMKilled" to simulate the OOM killer) */
  readonly reason?: string;
  /** @default "" */
  readonly message?: string;
}

/**
 * An in-memory CRI v1 runtime (RuntimeService + ImageService) behind a real gRPC server
 * on a unix socket. Sandboxes, containers, images, stats, exec and container events are
 * modelled; container processes follow scripted {@link ContainerBehaviour}s on the
 * injected clock; any RPC can be failed (FIFO per method) or slowed; every call is logged.
 *
 * Streaming `Exec`/`Attach`/`PortForward`, `CheckpointContainer` and the metrics RPCs
 * answer UNIMPLEMENTED.
 *
 * @example
 * ```ts
 * const fake = new FakeRuntime({ images: [{ ref: 'busybox:1.36' }] });
 * fake.addBehaviour({ name: 'job' }, { exitAfterMs: 500, exitCode: 3 });
 * await fake.start();
 * // … point the code under test at fake.endpoint ('unix:///tmp/nodeagent-fake-cri-…/cri.sock') …
 * await fake.stop();
 * ```
 */
export class FakeRuntime implements Lifecycle {
  readonly #once = new StartOnce('FakeRuntime');
  readonly #clock: Clock;
  readonly #faults = new FaultPlan();
  readonly #imageStore: ImageStore;
  readonly #behaviourRules: BehaviourRule[];
  readonly #execScripts: ExecScript[];
  readonly #state: RuntimeState;
  readonly #conditions = new Map<string, RuntimeCondition>();
  readonly #eventStreams = new Set<ServerWritableStream<GetEventsRequest, ContainerEventResponse>>();
  #streamingServer: FakeStreamingServer | undefined;
  #pool: IpPool;
  #server: Server | undefined;
  #socketPath: string | undefined;
  #ownsSocketDir = false;
  #stops = 0;

  readonly #options: FakeRuntimeOptions;
  constructor(options: FakeRuntimeOptions = {}) {
    this.#options = options;
    this.#imageStore = new ImageStore(options.registryResolver);
    this.#clock = options.clock ?? realClock;
    this.#pool = new IpPool(options.podCidr ?? '10.88.0.0/16');
    const chunk = options.streamChunkSize ?? 1000;
    if (!Number.isInteger(chunk) || chunk < 1) {
      throw new FakeRuntimeConfigError(`streamChunkSize must be an integer >= 1, got ${chunk}`);
    }
    for (const image of options.images ?? []) this.#imageStore.preload(image);
    for (const image of options.registryImages ?? []) this.#imageStore.addRemote(image);
    this.#behaviourRules = [...(options.behaviours ?? [])];
    this.#execScripts = [...(options.execScripts ?? [])];
    this.#state = new RuntimeState({
      clock: this.#clock,
      images: this.#imageStore,
      ipPool: () => this.#pool,
      behaviours: this.#behaviourRules,
      idSeed: options.idSeed ?? 'fake-runtime',
    });
    for (const type of ['RuntimeReady', 'NetworkReady']) this.setCondition(type, true);
  }

  /** The endpoint clients dial (`unix:///…`); throws before the first {@link start}. */
  get endpoint(): string {
    if (this.#socketPath === undefined) throw new Error('FakeRuntime: not started yet');
    return `unix://${this.#socketPath}`;
  }

  /** The pod CIDR IPs currently come from (changed by `UpdateRuntimeConfig`). */
  get podCidr(): string {
    return this.#pool.cidr;
  }

  /**
   * Starts serving on {@link endpoint} (`unix:///…/cri.sock`); resolves once it listens.
   * `signal` bounds only that wait. A second call rejects (`AlreadyStartedError`); use
   * {@link restart} to serve again after {@link stop}.
   */
  start(signal?: AbortSignal): Promise<void> {
    return this.#once.run(
      signal,
      () => this.#serve(),
      () => this.stop(),
    );
  }

  /**
   * Serves again on the same socket with the state intact, like a restarted runtime:
   * stops first when serving. Resolves once it listens; `signal` bounds that wait.
   */
  async restart(signal?: AbortSignal): Promise<void> {
    if (!this.#once.started) return this.start(signal);
    await this.stop();
    try {
      await raceAbort(this.#serve(), signal);
    } catch (error) {
      await this.stop();
      throw error;
    }
  }

  async #serve(): Promise<void> {
    if (this.#server) return;
    const generation = this.#stops;
    const path = await this.#prepareSocket();
    const server = new Server();
    const common = {
      faults: this.#faults,
      clock: this.#clock,
      streamingLists: this.#options.streamingLists ?? true,
    };
    const streamChunkSize = this.#options.streamChunkSize ?? 1000;
    server.addService(
      fakeRuntimeServiceDefinition,
      runtimeServiceHandlers({
        ...common,
        streamChunkSize,
        state: this.#state,
        exec: this.#streaming.deps,
        streaming: this.#streaming,
        version: {
          runtimeName: 'fakeRuntime',
          runtimeVersion: '0.1.0',
          runtimeApiVersion: 'v1',
          ...this.#options.version,
        },
        conditions: () => [...this.#conditions.values()].map((c) => ({ ...c })),
        cgroupDriver: this.#options.cgroupDriver === 'systemd' ? CgroupDriver.SYSTEMD : CgroupDriver.CGROUPFS,
        containerEvents: this.#options.containerEvents ?? true,
        setPodCidr: (cidr) => {
          if (cidr !== this.#pool.cidr) this.#pool = new IpPool(cidr);
        },
        describe: () => ({ podCidr: this.#pool.cidr, sandboxes: this.#state.sandboxes.size }),
        eventStreams: this.#eventStreams,
      }),
    );
    server.addService(
      ImageServiceService,
      imageServiceHandlers({
        ...common,
        streamChunkSize,
        images: this.#imageStore,
        nanos: this.#state.nanos,
      }),
    );
    try {
      await new Promise<void>((resolve, reject) => {
        server.bindAsync(`unix://${path}`, ServerCredentials.createInsecure(), (err) =>
          err ? reject(err) : resolve(),
        );
      });
    } catch (err) {
      server.forceShutdown();
      if (this.#ownsSocketDir) await rm(dirname(path), { recursive: true, force: true });
      throw err;
    }
    if (generation !== this.#stops) {
      // stop() ran while binding (an aborted start): do not leave the server behind.
      server.forceShutdown();
      await this.#removeSocket();
      return;
    }
    this.#server = server;
  }

  /**
   * Stops serving: open event streams end, in-flight calls are cancelled, the socket
   * (and the temp directory the fake created for it) is removed. State is kept.
   */
  async stop(): Promise<void> {
    this.#stops++;
    const server = this.#server;
    if (server === undefined) return;
    this.#server = undefined;
    for (const call of this.#eventStreams) call.end();
    this.#eventStreams.clear();
    await this.#streamingServer?.stop();
    server.forceShutdown();
    await this.#removeSocket();
  }

  /** The streaming server of `Exec` (created on first use). */
  get #streaming(): FakeStreamingServer {
    this.#streamingServer ??= new FakeStreamingServer({
      state: this.#state,
      clock: this.#clock,
      scripts: this.#execScripts,
      defaultExec: this.#options.defaultExec ?? succeedSilently,
    });
    return this.#streamingServer;
  }

  async #removeSocket(): Promise<void> {
    if (this.#socketPath !== undefined) {
      await rm(this.#socketPath, { force: true });
      if (this.#ownsSocketDir) await rm(dirname(this.#socketPath), { recursive: true, force: true });
    }
  }

  /**
   * Runs a sandbox directly, without an RPC (not logged, no injected errors or latency):
   * for seeding state a test or benchmark starts from, e.g. pods "left over" from before an
   * agent restart. Same rules and events as `RunPodSandbox`. Returns the sandbox ID.
   */
  addSandbox(config: PartialMessage<PodSandboxConfig>, runtimeHandler = ''): string {
    // fromPartial fills every omitted field; the cast only satisfies its Exact<> signature.
    return this.#state.runPodSandbox(
      PodSandboxConfig.fromPartial(config as PodSandboxConfig),
      runtimeHandler,
    );
  }

  /**
   * Creates a container directly, without an RPC, and starts it unless `start` is false
   * (behaviours apply as with `CreateContainer` + `StartContainer`). Returns the container ID.
   */
  async addContainer(
    podSandboxId: string,
    config: PartialMessage<ContainerConfig>,
    options: { readonly start?: boolean } = {},
  ): Promise<string> {
    const id = this.#state.createContainer(
      podSandboxId,
      ContainerConfig.fromPartial(config as ContainerConfig),
    );
    if (options.start ?? true) await this.#state.startContainer(id);
    return id;
  }

  /** Adds a behaviour for containers created from now on (rules are tried in the order added). */
  addBehaviour(match: ContainerMatch, behaviour: ContainerBehaviour): void {
    this.#behaviourRules.push({ match, behaviour });
  }

  /** Adds a runtime-wide `ExecSync` script (tried after the container's own scripts). */
  addExecScript(script: ExecScript): void {
    this.#execScripts.push(script);
  }

  /** Puts an image on the node (and in the registry); returns its ID. */
  preloadImage(image: FakeImage): string {
    return this.#imageStore.preload(image);
  }

  /** Makes an image pullable without putting it on the node. */
  addRegistryImage(image: FakeImage): void {
    this.#imageStore.addRemote(image);
  }

  /** Sets a runtime condition reported by `Status` (`RuntimeReady`, `NetworkReady`, or any other type). */
  setCondition(type: string, ok: boolean, reason = '', message = ''): void {
    this.#conditions.set(type, { type, status: ok, reason, message });
  }

  /** Queues `error` as the answer to the next call of `method` (FIFO per method, like upstream's `InjectError`). */
  injectError(method: CriMethod, error: InjectedError): void {
    this.#faults.injectError(method, error);
  }

  /** Delays every call of `method` by `delayMs` on the fake's clock before it is handled; 0 removes the delay. */
  setLatency(method: CriMethod, delayMs: number): void {
    this.#faults.setLatency(method, delayMs);
  }

  /** The calls received so far, oldest first; only those of `method` if given. */
  calls(method?: CriMethod): RecordedCall[] {
    const all = this.#faults.calls();
    return method === undefined ? all : all.filter((c) => c.method === method);
  }

  /** The method names of the calls received so far, oldest first (upstream's `GetCalls`). */
  callNames(): string[] {
    return this.#faults.calls().map((c) => c.method);
  }

  /** Forgets the call log. */
  clearCalls(): void {
    this.#faults.clearCalls();
  }

  /**
   * Ends a running container's process now (a crash or OOM kill from outside); no-op if it
   * is not running. @throws FakeRuntimeError NOT_FOUND for an unknown container.
   */
  killContainer(containerId: string, options: KillOptions = {}): void {
    const c = this.#state.requireContainer(containerId);
    this.#state.exit(c, options.exitCode ?? 137, options.reason ?? 'Error', options.message ?? '');
  }

  /** Changes the usage a container reports in its stats from now on. @throws FakeRuntimeError NOT_FOUND for an unknown container. */
  setContainerUsage(containerId: string, usage: { memoryWorkingSetBytes?: number; cpuCores?: number }): void {
    const c = this.#state.requireContainer(containerId);
    if (usage.memoryWorkingSetBytes !== undefined)
      c.usage.memoryWorkingSetBytes = usage.memoryWorkingSetBytes;
    if (usage.cpuCores !== undefined) c.usage.cpuCores = usage.cpuCores;
  }

  /**
   * Calls `listener` with every container and sandbox event from now on (the events
   * `GetContainerEvents` streams), synchronously as the state changes, so a listener sees a
   * container started before any client can; returns the unsubscribe function. A listener must
   * not throw: its exception would fail the CRI call that caused the event.
   */
  onContainerEvent(listener: (event: ContainerEventResponse) => void): () => void {
    return this.#state.onEvent(listener);
  }

  /** The statuses of all sandboxes, in creation order (a snapshot). */
  sandboxes(): PodSandboxStatus[] {
    return [...this.#state.sandboxes.values()].map(toSandboxStatus);
  }

  /** The statuses of all containers, in creation order (a snapshot). */
  containers(): ContainerStatus[] {
    return [...this.#state.containers.values()].map(toContainerStatus);
  }

  /** The images on the node (a snapshot). */
  images(): Image[] {
    return this.#imageStore.list().map(toImage);
  }

  async #prepareSocket(): Promise<string> {
    if (this.#socketPath === undefined) {
      if (this.#options.socketPath !== undefined) {
        this.#socketPath = this.#options.socketPath;
      } else {
        const dir = join(tmpdir(), `nodeagent-fake-cri-${process.pid}-${randomBytes(4).toString('hex')}`);
        this.#socketPath = join(dir, 'cri.sock');
        this.#ownsSocketDir = true;
      }
    }
    await mkdir(dirname(this.#socketPath), { recursive: true });
    // A socket left by a crashed run would make bind fail with EADDRINUSE; a live one is
    // another server's and must not be taken over.
    const existing = await lstat(this.#socketPath).catch(() => undefined);
    if (existing?.isSocket()) {
      if (await socketAnswers(this.#socketPath)) {
        throw new FakeRuntimeConfigError(`socket ${this.#socketPath} is in use by another server`);
      }
      await unlink(this.#socketPath);
    }
    return this.#socketPath;
  }
}

/** Whether something accepts connections on the unix socket at `path`. */
function socketAnswers(path: string): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(path);
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}
