/**
 * The fake's `runtime.v1.RuntimeService` handlers: decode, call the state machine,
 * encode. `Exec` answers with a URL on {@link FakeStreamingServer}; RPCs it does not model (attach/port-forward, checkpoint,
 * metrics) answer UNIMPLEMENTED.
 *
 * @module
 */
import { existsSync } from 'node:fs';
import { appendFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import type { ServerWritableStream } from '@grpc/grpc-js';
import {
  type CgroupDriver,
  type ContainerEventResponse,
  ContainerState,
  type GetEventsRequest,
  type ListContainersResponse,
  type ListPodSandboxResponse,
  PodSandboxState,
  type RuntimeCondition,
  type RuntimeServiceServer,
  RuntimeServiceService,
  type StreamContainerStatsRequest,
  type StreamContainersRequest,
  type StreamContainersResponse,
  type StreamPodSandboxesRequest,
  type StreamPodSandboxesResponse,
  type StreamPodSandboxStatsRequest,
} from '../gen/runtime/v1/api.js';
import { acceptPreEncoded, encodeContainerList, encodeSandboxList, preEncoded } from './encoded-lists.js';
import type { ExecDeps } from './exec.js';
import { runExecSync } from './exec.js';
import { invalidArgument, wrongState } from './fake-error.js';
import {
  chunkedList,
  type HandlerContext,
  serverStream,
  unary,
  unimplementedStream,
  unimplementedUnary,
} from './rpc-handlers.js';
import type { ContainerListFilter, RuntimeState, SandboxListFilter } from './runtime-state.js';
import { containerStatsOf, sandboxStatsOf } from './stats.js';
import type { FakeStreamingServer } from './streaming-server.js';
import { toContainerStatus, toSandboxStatus } from './wire.js';

/** The version strings the fake reports. */
export interface FakeVersionInfo {
  /** @default "fakeRuntime" (upstream fake's name) */
  readonly runtimeName: string;
  /** @default "0.1.0" */
  readonly runtimeVersion: string;
  /** @default "v1" (what CRI v1 runtimes answer) */
  readonly runtimeApiVersion: string;
}

/** Everything the RuntimeService handlers read or change besides the state machine. */
export interface RuntimeServiceContext extends HandlerContext {
  readonly state: RuntimeState;
  readonly exec: ExecDeps;
  /** Serves `Exec` sessions. */
  readonly streaming: FakeStreamingServer;
  readonly version: FakeVersionInfo;
  readonly conditions: () => RuntimeCondition[];
  readonly cgroupDriver: CgroupDriver;
  readonly containerEvents: boolean;
  readonly streamingLists: boolean;
  readonly streamChunkSize: number;
  /** Applies UpdateRuntimeConfig's pod CIDR (may throw for a bad CIDR). */
  readonly setPodCidr: (cidr: string) => void;
  /** Describes the fake for `Status(verbose)`. */
  readonly describe: () => Record<string, unknown>;
  /** Open GetContainerEvents streams, ended when the server stops. */
  readonly eventStreams: Set<ServerWritableStream<GetEventsRequest, ContainerEventResponse>>;
}

/**
 * `RuntimeServiceService` with the container and sandbox lists answered from cached
 * encodings (see encoded-lists.ts): serve {@link runtimeServiceHandlers} with this definition.
 */
export const fakeRuntimeServiceDefinition = acceptPreEncoded(RuntimeServiceService, [
  'listPodSandbox',
  'streamPodSandboxes',
  'listContainers',
  'streamContainers',
]);

/** Builds the RuntimeService implementation over `ctx`. */
export function runtimeServiceHandlers(ctx: RuntimeServiceContext): RuntimeServiceServer {
  const { state } = ctx;
  const containerStats = (filter: ContainerListFilter | undefined) => {
    const now = state.nanos.now();
    return state.listContainers(filter).map((c) => containerStatsOf(c, now));
  };
  const sandboxStats = (filter: SandboxListFilter | undefined) => {
    const now = state.nanos.now();
    return state.listSandboxes(filter).map((s) => sandboxStatsOf(s, state.containersOf(s.id), now));
  };
  const streamOrUnimplemented = <Req, Res, Item>(
    method: string,
    list: (req: Req) => Item[],
    wrap: (chunk: Item[]) => Res,
  ) =>
    ctx.streamingLists
      ? chunkedList<Req, Res, Item>(ctx, method, list, wrap, ctx.streamChunkSize)
      : unimplementedStream<Req, Res>(ctx, method);

  return {
    version: unary(ctx, 'Version', () => ({ version: '0.1.0', ...ctx.version })),
    status: unary(ctx, 'Status', (req) => ({
      status: { conditions: ctx.conditions() },
      info: req.verbose ? { config: JSON.stringify(ctx.describe()) } : {},
      runtimeHandlers: [{ name: '', features: { recursiveReadOnlyMounts: false, userNamespaces: false } }],
      features: { supplementalGroupsPolicy: false, userNamespacesHostNetwork: false },
    })),
    runtimeConfig: unary(ctx, 'RuntimeConfig', () => ({ linux: { cgroupDriver: ctx.cgroupDriver } })),
    updateRuntimeConfig: unary(ctx, 'UpdateRuntimeConfig', (req) => {
      const cidr = req.runtimeConfig?.networkConfig?.podCidr ?? '';
      if (cidr !== '') {
        try {
          ctx.setPodCidr(cidr);
        } catch (err) {
          throw invalidArgument(err instanceof Error ? err.message : String(err));
        }
      }
      return {};
    }),

    runPodSandbox: unary(ctx, 'RunPodSandbox', (req) => ({
      podSandboxId: state.runPodSandbox(req.config, req.runtimeHandler),
    })),
    stopPodSandbox: unary(ctx, 'StopPodSandbox', (req) => {
      state.stopPodSandbox(req.podSandboxId);
      return {};
    }),
    removePodSandbox: unary(ctx, 'RemovePodSandbox', (req) => {
      state.removePodSandbox(req.podSandboxId);
      return {};
    }),
    podSandboxStatus: unary(ctx, 'PodSandboxStatus', (req) => {
      const sandbox = state.requireSandbox(req.podSandboxId);
      return {
        status: toSandboxStatus(sandbox),
        info: req.verbose
          ? { info: JSON.stringify({ ip: sandbox.ip, hostNetwork: sandbox.hostNetwork }) }
          : {},
        containersStatuses: state.containersOf(sandbox.id).map(toContainerStatus),
        timestamp: state.nanos.now(),
      };
    }),
    listPodSandbox: unary(ctx, 'ListPodSandbox', (req) =>
      preEncoded<ListPodSandboxResponse>(encodeSandboxList(state.listSandboxes(req.filter))),
    ),
    streamPodSandboxes: streamOrUnimplemented(
      'StreamPodSandboxes',
      (req: StreamPodSandboxesRequest) => state.listSandboxes(req.filter),
      (chunk) => preEncoded<StreamPodSandboxesResponse>(encodeSandboxList(chunk)),
    ),
    updatePodSandboxResources: unary(ctx, 'UpdatePodSandboxResources', (req) => {
      const sandbox = state.requireSandbox(req.podSandboxId);
      if (sandbox.state !== PodSandboxState.SANDBOX_READY)
        throw wrongState(`sandbox "${sandbox.id}" is not ready`);
      return {};
    }),

    createContainer: unary(ctx, 'CreateContainer', (req) => ({
      containerId: state.createContainer(req.podSandboxId, req.config),
    })),
    startContainer: unary(ctx, 'StartContainer', async (req) => {
      await state.startContainer(req.containerId);
      return {};
    }),
    stopContainer: unary(ctx, 'StopContainer', async (req) => {
      await state.stopContainer(req.containerId, Number(req.timeout));
      return {};
    }),
    removeContainer: unary(ctx, 'RemoveContainer', (req) => {
      state.removeContainer(req.containerId);
      return {};
    }),
    listContainers: unary(ctx, 'ListContainers', (req) =>
      preEncoded<ListContainersResponse>(encodeContainerList(state.listContainers(req.filter))),
    ),
    streamContainers: streamOrUnimplemented(
      'StreamContainers',
      (req: StreamContainersRequest) => state.listContainers(req.filter),
      (chunk) => preEncoded<StreamContainersResponse>(encodeContainerList(chunk)),
    ),
    containerStatus: unary(ctx, 'ContainerStatus', (req) => {
      const c = state.requireContainer(req.containerId);
      return {
        status: toContainerStatus(c),
        info: req.verbose ? { info: JSON.stringify({ sandboxId: c.sandboxId, behaviour: c.behaviour }) } : {},
      };
    }),
    updateContainerResources: unary(ctx, 'UpdateContainerResources', (req) => {
      const c = state.requireContainer(req.containerId);
      c.resources = { linux: req.linux ?? c.resources?.linux, windows: req.windows ?? c.resources?.windows };
      return {};
    }),
    reopenContainerLog: unary(ctx, 'ReopenContainerLog', async (req) => {
      const c = state.requireContainer(req.containerId);
      if (c.state !== ContainerState.CONTAINER_RUNNING)
        throw wrongState(`container "${c.id}" is not running`);
      // As containerd: the log file is opened again, created when a rotation renamed it (in
      // its existing directory; no directory is created).
      if (c.logPath !== '' && existsSync(dirname(c.logPath))) await appendFile(c.logPath, '');
      return {};
    }),
    execSync: unary(ctx, 'ExecSync', async (req) => {
      const result = await runExecSync(ctx.exec, req.containerId, req.cmd, Number(req.timeout));
      return {
        stdout: Buffer.from(result.stdout),
        stderr: Buffer.from(result.stderr),
        exitCode: result.exitCode,
      };
    }),
    exec: unary(ctx, 'Exec', async (req) => {
      if (req.cmd.length === 0) throw invalidArgument('exec command must not be empty');
      if (!req.stdin && !req.stdout && !req.stderr) {
        throw invalidArgument('one of stdin, stdout, or stderr must be set');
      }
      state.requireContainer(req.containerId);
      return {
        url: await ctx.streaming.execUrl({
          containerId: req.containerId,
          cmd: req.cmd,
          stdout: req.stdout,
          stderr: req.stderr,
          stdin: req.stdin,
          tty: req.tty,
        }),
      };
    }),
    attach: unimplementedUnary(ctx, 'Attach'),
    portForward: unimplementedUnary(ctx, 'PortForward'),
    checkpointContainer: unimplementedUnary(ctx, 'CheckpointContainer'),

    containerStats: unary(ctx, 'ContainerStats', (req) => ({
      stats: containerStatsOf(state.requireContainer(req.containerId), state.nanos.now()),
    })),
    listContainerStats: unary(ctx, 'ListContainerStats', (req) => ({ stats: containerStats(req.filter) })),
    streamContainerStats: streamOrUnimplemented(
      'StreamContainerStats',
      (req: StreamContainerStatsRequest) => containerStats(req.filter),
      (containerStats) => ({ containerStats }),
    ),
    podSandboxStats: unary(ctx, 'PodSandboxStats', (req) => {
      const sandbox = state.requireSandbox(req.podSandboxId);
      return { stats: sandboxStatsOf(sandbox, state.containersOf(sandbox.id), state.nanos.now()) };
    }),
    listPodSandboxStats: unary(ctx, 'ListPodSandboxStats', (req) => ({ stats: sandboxStats(req.filter) })),
    streamPodSandboxStats: streamOrUnimplemented(
      'StreamPodSandboxStats',
      (req: StreamPodSandboxStatsRequest) => sandboxStats(req.filter),
      (podSandboxStats) => ({ podSandboxStats }),
    ),
    listMetricDescriptors: unimplementedUnary(ctx, 'ListMetricDescriptors'),
    listPodSandboxMetrics: unimplementedUnary(ctx, 'ListPodSandboxMetrics'),
    streamPodSandboxMetrics: unimplementedStream(ctx, 'StreamPodSandboxMetrics'),

    getContainerEvents: ctx.containerEvents
      ? serverStream(ctx, 'GetContainerEvents', (call) => {
          const unsubscribe = state.onEvent((event) => call.write(event));
          ctx.eventStreams.add(call);
          const close = (): void => {
            unsubscribe();
            ctx.eventStreams.delete(call);
          };
          call.on('cancelled', close);
          call.on('finish', close);
          call.on('close', close);
        })
      : unimplementedStream(ctx, 'GetContainerEvents'),
  };
}
