/**
 * `nodeagent-crictl`: a small crictl for CRI runtimes (crictl is not packaged for Debian 12).
 * The whole command is {@link runCli}, so it can be tested without spawning processes.
 *
 * @module
 */
import { readFile } from 'node:fs/promises';
import { parseArgs } from 'node:util';
import { stringify as toYaml } from 'yaml';
import { type CriClient, createCriClient } from '../client.js';
import { parseCriLog } from '../cri-log.js';
import { DEFAULT_CRI_ENDPOINT, InvalidEndpointError } from '../endpoint.js';
import { CriError } from '../errors.js';
import {
  ContainerEventResponse,
  ContainerState,
  ContainerStatusResponse,
  containerStateToJSON,
  ImageStatusResponse,
  ListContainerStatsResponse,
  ListContainersResponse,
  ListImagesResponse,
  ListPodSandboxResponse,
  PodSandboxStatusResponse,
  podSandboxStateToJSON,
  StatusResponse,
  VersionResponse,
} from '../gen/runtime/v1/api.js';
import { ago, humanSize, renderTable, truncateId } from './human.js';

/** Where {@link runCli} reads and writes. */
export interface CliIo {
  /** Standard output. */
  readonly stdout: { write(text: string): unknown };
  /** Standard error. */
  readonly stderr: { write(text: string): unknown };
  /** Environment (for `CONTAINER_RUNTIME_ENDPOINT`). */
  readonly env: Readonly<Record<string, string | undefined>>;
  /** Ends `events` (Ctrl-C in the bin). */
  readonly signal?: AbortSignal;
  /** Current time, ms since the epoch, for "created … ago". @default Date.now */
  readonly nowMs?: () => number;
}

type Output = 'table' | 'json' | 'yaml';

const USAGE = `Usage: nodeagent-crictl [global options] <command> [args]

Commands:
  version            runtime name and versions
  info               runtime status and conditions (verbose info)
  pods               list pod sandboxes
  ps [-a]            list containers (running only, unless -a)
  images             list images
  inspect <id>       container status
  inspectp <id>      pod sandbox status
  inspecti <image>   image status
  logs <id>          print a container's log (reads the CRI log file)
  stats              container resource usage
  events             stream container events until interrupted

Global options:
  -r, --runtime-endpoint <ep>  unix:///path or tcp://host:port
                               (default: $CONTAINER_RUNTIME_ENDPOINT, else ${DEFAULT_CRI_ENDPOINT})
  -o, --output <fmt>           table | json | yaml
  -t, --timeout <duration>     per-call deadline, e.g. 10s, 500ms, 2m (default 2m)
  -h, --help
`;

/** A usage error: bad flags or arguments (exit code 2). */
class UsageError extends Error {}

/** Parses "10s", "500ms", "2m", "1h" or a plain number of seconds into ms. */
function parseDurationMs(text: string): number {
  const match = /^(\d+(?:\.\d+)?)(ms|s|m|h)?$/.exec(text);
  if (!match) throw new UsageError(`invalid --timeout ${JSON.stringify(text)} (e.g. 10s, 500ms, 2m)`);
  const scale = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 }[(match[2] ?? 's') as 'ms' | 's' | 'm' | 'h'];
  return Number(match[1]) * scale;
}

function print(io: CliIo, output: Output, json: unknown): void {
  io.stdout.write(output === 'yaml' ? toYaml(json) : `${JSON.stringify(json, null, 2)}\n`);
}

/** Parses JSON values of a verbose `info` map, keeping strings that are not JSON. */
function infoJson(info: Readonly<Record<string, string>>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(info)) {
    try {
      out[key] = JSON.parse(value);
    } catch {
      out[key] = value;
    }
  }
  return out;
}

interface Context {
  readonly io: CliIo;
  readonly cri: CriClient;
  readonly output: Output;
  readonly timeoutMs: number;
  readonly all: boolean;
  readonly args: readonly string[];
  readonly now: number;
}

function oneArg(ctx: Context, what: string): string {
  const [arg, ...extra] = ctx.args;
  if (arg === undefined || extra.length > 0) throw new UsageError(`expected exactly one ${what}`);
  return arg;
}

const call = (ctx: Context) => ({ timeoutMs: ctx.timeoutMs });

const COMMANDS: Readonly<Record<string, (ctx: Context) => Promise<void>>> = {
  async version(ctx) {
    const v = await ctx.cri.runtime.version({ version: 'v1' }, call(ctx));
    if (ctx.output !== 'table') return print(ctx.io, ctx.output, VersionResponse.toJSON(v));
    ctx.io.stdout.write(
      `Version:  ${v.version}\nRuntimeName:  ${v.runtimeName}\nRuntimeVersion:  ${v.runtimeVersion}\nRuntimeApiVersion:  ${v.runtimeApiVersion}\n`,
    );
  },

  async info(ctx) {
    const status = await ctx.cri.runtime.status({ verbose: true }, call(ctx));
    const json = StatusResponse.toJSON({ ...status, info: {} }) as Record<string, unknown>;
    delete json.info;
    print(ctx.io, ctx.output === 'yaml' ? 'yaml' : 'json', { ...json, ...infoJson(status.info) });
  },

  async pods(ctx) {
    const res = await ctx.cri.runtime.listPodSandbox({}, call(ctx));
    const items = [...res.items].sort((a, b) =>
      b.createdAt > a.createdAt ? 1 : b.createdAt < a.createdAt ? -1 : 0,
    );
    if (ctx.output !== 'table') return print(ctx.io, ctx.output, ListPodSandboxResponse.toJSON({ items }));
    const rows = items.map((p) => [
      truncateId(p.id),
      ago(ctx.now, p.createdAt),
      podSandboxStateToJSON(p.state).replace('SANDBOX_', ''),
      p.metadata?.name ?? '',
      p.metadata?.namespace ?? '',
      String(p.metadata?.attempt ?? 0),
      p.runtimeHandler === '' ? '(default)' : p.runtimeHandler,
    ]);
    ctx.io.stdout.write(
      renderTable(['POD ID', 'CREATED', 'STATE', 'NAME', 'NAMESPACE', 'ATTEMPT', 'RUNTIME'], rows),
    );
  },

  async ps(ctx) {
    const filter = ctx.all ? {} : { state: { state: ContainerState.CONTAINER_RUNNING } };
    const [res, pods] = await Promise.all([
      ctx.cri.runtime.listContainers({ filter }, call(ctx)),
      ctx.output === 'table' ? ctx.cri.runtime.listPodSandbox({}, call(ctx)) : undefined,
    ]);
    const containers = [...res.containers].sort((a, b) =>
      b.createdAt > a.createdAt ? 1 : b.createdAt < a.createdAt ? -1 : 0,
    );
    if (ctx.output !== 'table')
      return print(ctx.io, ctx.output, ListContainersResponse.toJSON({ containers }));
    const podNames = new Map((pods?.items ?? []).map((p) => [p.id, p.metadata?.name ?? '']));
    const rows = containers.map((c) => [
      truncateId(c.id),
      truncateId(c.imageRef === '' ? (c.image?.image ?? '') : c.imageRef),
      ago(ctx.now, c.createdAt),
      containerStateToJSON(c.state)
        .replace('CONTAINER_', '')
        .replace(/^(.)(.*)$/, (_, a: string, b: string) => a + b.toLowerCase()),
      c.metadata?.name ?? '',
      String(c.metadata?.attempt ?? 0),
      truncateId(c.podSandboxId),
      podNames.get(c.podSandboxId) ?? 'unknown',
    ]);
    ctx.io.stdout.write(
      renderTable(['CONTAINER', 'IMAGE', 'CREATED', 'STATE', 'NAME', 'ATTEMPT', 'POD ID', 'POD'], rows),
    );
  },

  async images(ctx) {
    const res = await ctx.cri.image.listImages({}, call(ctx));
    if (ctx.output !== 'table') return print(ctx.io, ctx.output, ListImagesResponse.toJSON(res));
    const rows: string[][] = [];
    for (const image of res.images) {
      const tags = image.repoTags.length > 0 ? image.repoTags : ['<none>:<none>'];
      for (const tag of tags) {
        const at = tag.lastIndexOf(':');
        rows.push([tag.slice(0, at), tag.slice(at + 1), truncateId(image.id), humanSize(image.size)]);
      }
    }
    ctx.io.stdout.write(renderTable(['IMAGE', 'TAG', 'IMAGE ID', 'SIZE'], rows));
  },

  async inspect(ctx) {
    const res = await ctx.cri.runtime.containerStatus(
      { containerId: oneArg(ctx, 'container ID'), verbose: true },
      call(ctx),
    );
    const json = ContainerStatusResponse.toJSON({ ...res, info: {} }) as Record<string, unknown>;
    print(ctx.io, ctx.output === 'yaml' ? 'yaml' : 'json', { status: json.status, info: infoJson(res.info) });
  },

  async inspectp(ctx) {
    const res = await ctx.cri.runtime.podSandboxStatus(
      { podSandboxId: oneArg(ctx, 'pod ID'), verbose: true },
      call(ctx),
    );
    const json = PodSandboxStatusResponse.toJSON({ ...res, info: {} }) as Record<string, unknown>;
    print(ctx.io, ctx.output === 'yaml' ? 'yaml' : 'json', { status: json.status, info: infoJson(res.info) });
  },

  async inspecti(ctx) {
    const res = await ctx.cri.image.imageStatus(
      { image: { image: oneArg(ctx, 'image') }, verbose: true },
      call(ctx),
    );
    if (res.image === undefined) throw new CliFailure(`no such image ${JSON.stringify(ctx.args[0])}`);
    const json = ImageStatusResponse.toJSON({ ...res, info: {} }) as Record<string, unknown>;
    print(ctx.io, ctx.output === 'yaml' ? 'yaml' : 'json', { status: json.image, info: infoJson(res.info) });
  },

  async logs(ctx) {
    const res = await ctx.cri.runtime.containerStatus(
      { containerId: oneArg(ctx, 'container ID') },
      call(ctx),
    );
    const logPath = res.status?.logPath ?? '';
    if (logPath === '') throw new CliFailure('the runtime reports no log path for this container');
    const text = await readFile(logPath, 'utf8');
    for (const line of parseCriLog(text, {
      onInvalidLine: (e) => ctx.io.stderr.write(`warning: ${e.message}\n`),
    })) {
      (line.stream === 'stderr' ? ctx.io.stderr : ctx.io.stdout).write(`${line.content}\n`);
    }
  },

  async stats(ctx) {
    const [res, containers] = await Promise.all([
      ctx.cri.runtime.listContainerStats({}, call(ctx)),
      ctx.cri.runtime.listContainers({}, call(ctx)),
    ]);
    if (ctx.output !== 'table') return print(ctx.io, ctx.output, ListContainerStatsResponse.toJSON(res));
    const pods = new Map(containers.containers.map((c) => [c.id, c.podSandboxId]));
    const rows = res.stats.map((s) => {
      const id = s.attributes?.id ?? '';
      const nanoCores = s.cpu?.usageNanoCores?.value;
      return [
        truncateId(id),
        s.attributes?.metadata?.name ?? '',
        nanoCores === undefined ? '-' : (Number(nanoCores) / 1e7).toFixed(2),
        s.memory?.workingSetBytes === undefined ? '-' : humanSize(s.memory.workingSetBytes.value),
        s.writableLayer?.usedBytes === undefined ? '-' : humanSize(s.writableLayer.usedBytes.value),
        s.writableLayer?.inodesUsed === undefined ? '-' : String(s.writableLayer.inodesUsed.value),
        truncateId(pods.get(id) ?? ''),
      ];
    });
    ctx.io.stdout.write(renderTable(['CONTAINER', 'NAME', 'CPU %', 'MEM', 'DISK', 'INODES', 'POD ID'], rows));
  },

  async events(ctx) {
    const options = ctx.io.signal === undefined ? {} : { signal: ctx.io.signal };
    for await (const event of ctx.cri.runtime.getContainerEvents({}, options)) {
      const json = ContainerEventResponse.toJSON(event);
      if (ctx.output === 'table') {
        const e = json as { containerId?: string; containerEventType?: string; createdAt?: string };
        ctx.io.stdout.write(`${e.containerEventType ?? ''} ${e.containerId ?? ''} ${e.createdAt ?? '0'}\n`);
      } else if (ctx.output === 'yaml') ctx.io.stdout.write(`---\n${toYaml(json)}`);
      else ctx.io.stdout.write(`${JSON.stringify(json)}\n`);
    }
  },
};

/** A command that ran but failed (exit code 1). */
class CliFailure extends Error {}

/**
 * Runs `nodeagent-crictl` with `argv` (without the node and script paths) and returns the
 * exit code: 0 on success, 1 when the runtime call failed, 2 on a usage error.
 *
 * @example
 * ```ts
 * const code = await runCli(['ps', '-a', '-o', 'json'], { stdout: process.stdout, stderr: process.stderr, env: process.env });
 * ```
 */
export async function runCli(argv: readonly string[], io: CliIo): Promise<number> {
  let cri: CriClient | undefined;
  try {
    const { values, positionals } = parseArgs({
      args: [...argv],
      allowPositionals: true,
      options: {
        'runtime-endpoint': { type: 'string', short: 'r' },
        output: { type: 'string', short: 'o' },
        timeout: { type: 'string', short: 't' },
        all: { type: 'boolean', short: 'a' },
        help: { type: 'boolean', short: 'h' },
      },
    });
    const [command, ...args] = positionals;
    if (values.help || command === undefined) {
      (command === undefined && !values.help ? io.stderr : io.stdout).write(USAGE);
      return command === undefined && !values.help ? 2 : 0;
    }
    const run = COMMANDS[command];
    if (run === undefined) throw new UsageError(`unknown command ${JSON.stringify(command)}`);
    const output = values.output ?? 'table';
    if (output !== 'table' && output !== 'json' && output !== 'yaml') {
      throw new UsageError(`invalid --output ${JSON.stringify(output)} (table, json or yaml)`);
    }
    if (values.all && command !== 'ps') throw new UsageError('-a/--all only applies to ps');
    const endpoint =
      values['runtime-endpoint'] ?? (io.env.CONTAINER_RUNTIME_ENDPOINT || DEFAULT_CRI_ENDPOINT);
    const timeoutMs = values.timeout === undefined ? 120_000 : parseDurationMs(values.timeout);
    cri = createCriClient(endpoint, { timeoutMs });
    await run({ io, cri, output, timeoutMs, all: values.all ?? false, args, now: (io.nowMs ?? Date.now)() });
    return 0;
  } catch (error) {
    if (error instanceof UsageError || (error instanceof TypeError && 'code' in error)) {
      io.stderr.write(`nodeagent-crictl: ${error.message}\n\n${USAGE}`);
      return 2;
    }
    if (error instanceof InvalidEndpointError || error instanceof CriError || error instanceof CliFailure) {
      io.stderr.write(`nodeagent-crictl: ${error.message}\n`);
      return 1;
    }
    io.stderr.write(`nodeagent-crictl: ${error instanceof Error ? error.message : String(error)}\n`);
    return 1;
  } finally {
    cri?.close();
  }
}
