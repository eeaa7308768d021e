/**
 * `nodeagent-crictl`: a small crictl for CRI runtimes (crictl is not packaged for Debian 12).
 * The whole command is {@link runCli}, so it can be tested without spawning processes.
 *
 * @module
 */
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { parseArgs } from 'node:util';
import { definedFields, formatGoDuration } from '@nodeagent/core';
import { stringify as toYaml } from 'yaml';
import { type CriClient, createCriClient } from '../client.js';
import { parseCriLog } from '../cri-log.js';
import { InvalidEndpointError, parseEndpoint } from '../endpoint.js';
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
import {
  ConfigFileError,
  DEFAULT_CRICTL_CONFIG,
  DEFAULT_RUNTIME_ENDPOINTS,
  type GlobalSettings,
  packageVersion,
  parseGlobalFlags,
  UsageError,
} from './global-flags.js';
import { ago, humanSize, renderTable, truncateId } from './human.js';

/** Where {@link runCli} reads and writes. */
export interface CliIo {
  /** Standard output. */
  readonly stdout: { write(text: string): unknown };
  /** Standard error. */
  readonly stderr: { write(text: string): unknown };
  /** Environment (`CONTAINER_RUNTIME_ENDPOINT`, `IMAGE_SERVICE_ENDPOINT`, `CRI_CONFIG_FILE`). */
  readonly env: Readonly<Record<string, string | undefined>>;
  /** The executable; `crictl.yaml` next to it is the fallback config file, as crictl's. */
  readonly executablePath?: string;
  /** Whether a unix socket exists (picks the default endpoint). @default fs.existsSync */
  readonly socketExists?: (path: string) => boolean;
  /** Ends `events` (Ctrl-C in the bin). */
  readonly signal?: AbortSignal;
  /** Current time, ms since the epoch, for "created … ago". @default Date.now */
  readonly nowMs?: () => number;
}

type Output = 'table' | 'json' | 'yaml';

const USAGE = `Usage: nodeagent-crictl [global options] <command> [command options] [args]

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

Command options:
  -o, --output <fmt>  table | json | yaml
  -a, --all           (ps) also show exited containers

Global options (crictl's, before the command):
  -c, --config <file>               client config file (default: ${DEFAULT_CRICTL_CONFIG}, else crictl.yaml
                                    next to the executable) [$CRI_CONFIG_FILE]
  -r, --runtime-endpoint <ep>       unix:///path or tcp://host:port [$CONTAINER_RUNTIME_ENDPOINT]
                                    (default: the first of ${DEFAULT_RUNTIME_ENDPOINTS.join(', ')}
                                    whose socket exists; deprecated, set the endpoint instead)
  -i, --image-endpoint <ep>         image service endpoint (default: the runtime endpoint)
                                    [$IMAGE_SERVICE_ENDPOINT]
  -t, --timeout <duration>          per-call deadline, a Go duration such as 2s or 1m30s; 0 or less
                                    is the default (default: 2s)
  -D, --debug                       debug output on stderr
      --max-retries <n>             accepted for compatibility (default: 3); connections are made
                                    lazily, so there is no connect step to retry
      --enable-tracing              accepted; OpenTelemetry tracing is NOT implemented: no spans are
                                    exported (a warning says so)
      --tracing-endpoint <addr>     accepted, unused (default: 127.0.0.1:4317)
      --tracing-sampling-rate-per-million <n>
                                    accepted, unused (default: -1)
      --profile-cpu, --profile-mem <file>
                                    accepted; Go pprof profiles are not written (a warning says so)
  -v, --version                     print the version
  -h, --help                        show this help
`;

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
  /** The client of the image service (`--image-endpoint`, else `cri`). */
  readonly images: CriClient;
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
    const res = await ctx.images.image.listImages({}, call(ctx));
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
    const res = await ctx.images.image.imageStatus(
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
    const options = definedFields({ signal: ctx.io.signal });
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
  const clients: CriClient[] = [];
  try {
    const { settings, rest } = parseGlobalFlags(argv, {
      env: io.env,
      ...definedFields({ executablePath: io.executablePath }),
    });
    if (settings.version) {
      io.stdout.write(`nodeagent-crictl version ${packageVersion()}\n`);
      return 0;
    }
    const { values, positionals } = parseArgs({
      args: [...rest],
      allowPositionals: true,
      options: {
        output: { type: 'string', short: 'o' },
        all: { type: 'boolean', short: 'a' },
        help: { type: 'boolean', short: 'h' },
      },
    });
    const [command, ...args] = positionals;
    const help = settings.help || values.help === true;
    if (help || command === undefined) {
      (command === undefined && !help ? io.stderr : io.stdout).write(USAGE);
      return command === undefined && !help ? 2 : 0;
    }
    const run = COMMANDS[command];
    if (run === undefined) throw new UsageError(`unknown command ${JSON.stringify(command)}`);
    const output = values.output ?? 'table';
    if (output !== 'table' && output !== 'json' && output !== 'yaml') {
      throw new UsageError(`invalid --output ${JSON.stringify(output)} (table, json or yaml)`);
    }
    if (values.all && command !== 'ps') throw new UsageError('-a/--all only applies to ps');
    const log = logTo(io, settings);
    warnUnsupported(log, settings);
    const endpoint = runtimeEndpoint(io, settings, log);
    const { timeoutMs } = settings;
    log.debug(`Using runtime connection timeout: ${formatGoDuration(timeoutMs)}`);
    const cri = createCriClient(endpoint, { timeoutMs });
    clients.push(cri);
    let images = cri;
    if (settings.imageEndpoint !== undefined && settings.imageEndpoint !== endpoint) {
      log.debug(`Get image connection: ${settings.imageEndpoint}`);
      images = createCriClient(settings.imageEndpoint, { timeoutMs });
      clients.push(images);
    }
    await run({
      io,
      cri,
      images,
      output,
      timeoutMs,
      all: values.all ?? false,
      args,
      now: (io.nowMs ?? Date.now)(),
    });
    return 0;
  } catch (error) {
    if (error instanceof UsageError || (error instanceof TypeError && 'code' in error)) {
      io.stderr.write(`nodeagent-crictl: ${error.message}\n\n${USAGE}`);
      return 2;
    }
    if (
      error instanceof InvalidEndpointError ||
      error instanceof CriError ||
      error instanceof CliFailure ||
      error instanceof ConfigFileError
    ) {
      io.stderr.write(`nodeagent-crictl: ${error.message}\n`);
      return 1;
    }
    io.stderr.write(`nodeagent-crictl: ${error instanceof Error ? error.message : String(error)}\n`);
    return 1;
  } finally {
    for (const client of clients) client.close();
  }
}

interface CliLog {
  debug(message: string): void;
  warn(message: string): void;
}

/** logrus-style lines on stderr (`level=warning msg="…"`), debug ones only with `--debug`. */
function logTo(io: CliIo, settings: GlobalSettings): CliLog {
  const line = (level: string, message: string) =>
    io.stderr.write(`level=${level} msg=${JSON.stringify(message)}\n`);
  return {
    debug: (message) => {
      if (settings.debug) line('debug', message);
    },
    warn: (message) => line('warning', message),
  };
}

function warnUnsupported(log: CliLog, settings: GlobalSettings): void {
  if (settings.enableTracing) {
    log.warn(
      `tracing is not implemented by nodeagent-crictl: no spans are exported to ${settings.tracingEndpoint}`,
    );
  }
  if (settings.profileCpu !== undefined || settings.profileMem !== undefined) {
    log.warn('--profile-cpu and --profile-mem are accepted but no profile is written');
  }
}

/** The configured endpoint, else crictl's deprecated defaults (the first whose socket exists). */
function runtimeEndpoint(io: CliIo, settings: GlobalSettings, log: CliLog): string {
  if (settings.runtimeEndpoint !== undefined) {
    log.debug(`Get runtime connection: ${settings.runtimeEndpoint}`);
    return settings.runtimeEndpoint;
  }
  log.warn(
    `runtime connect using default endpoints: [${DEFAULT_RUNTIME_ENDPOINTS.join(' ')}]. As the default settings are now deprecated, you should set the endpoint instead.`,
  );
  const exists = io.socketExists ?? existsSync;
  for (const candidate of DEFAULT_RUNTIME_ENDPOINTS) {
    const parsed = parseEndpoint(candidate);
    if (parsed.kind === 'unix' && exists(parsed.path)) {
      log.debug(`Connected successfully using endpoint: ${candidate}`);
      return candidate;
    }
    log.debug(`Endpoint ${candidate} has no socket, trying the next one`);
  }
  return DEFAULT_RUNTIME_ENDPOINTS[0];
}
