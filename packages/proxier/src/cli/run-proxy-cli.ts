/**
 * The `nodeagent-proxy` command as a function: `render`, `trace` and `apply` over Services and
 * EndpointSlices read from manifests, with the iptables, nftables or IPVS backend libraries
 * (loaded on first use: `run` needs only its mode's package).
 * The bin (`cli.ts`) only calls {@link runProxyCli} with the process's streams.
 *
 * @module
 */

import { readFile as readFileText0 } from 'node:fs/promises';
import { definedFields } from '@nodeagent/core';
import type { NfacctClient } from '@nodeagent/iptables';
import type { ModuleLoader } from '../backend-loader.js';
import type { ParsedCommand } from './args.js';
import { offlineBackendModule } from './backend-modules.js';
import { CliFailure, CliUsageError, oneLine } from './errors.js';
import { defaultReadManifest, type LoadedInput, loadInput, type ReadManifest } from './load-input.js';
import { runProxy } from './run.js';
import { KubeProxyConfigError, parseRunCommandLine } from './run-config.js';
import { RUN_USAGE, USAGE } from './usage.js';
import { proxierVersion } from './version.js';

/** A text sink such as `process.stdout`. */
export interface CliOutput {
  /** Writes `text` as is. */
  write(text: string): unknown;
}

/** Where {@link runProxyCli} reads and writes. */
export interface ProxyCliIo {
  /** Rulesets, trace results and apply summaries. */
  readonly stdout: CliOutput;
  /** Usage, one line per invalid object, notes and failures. */
  readonly stderr: CliOutput;
  /** The environment (`NODE_NAME` is the default of `--node-name`). */
  readonly env: NodeJS.ProcessEnv;
  /**
   * Reads a manifest file (`-` = stdin).
   * @default UTF-8 file contents; all of `process.stdin` for `-`
   */
  readonly readFile?: ReadManifest;
  /**
   * `run` only: resolves (with the signal's name) when the proxy should stop.
   * @default the first SIGTERM or SIGINT of this process
   */
  readonly stopSignal?: Promise<string>;
  /**
   * render/trace/apply with `-b iptables`: the nfacct client of `--nfacct auto` (detection on
   * this node) and of `apply` (counters ensured in the namespace).
   * @default the `nfacct` tool, in `netns` when given
   */
  readonly nfacct?: (netns: string | undefined) => NfacctClient;
  /**
   * Imports a backend package by name (`@nodeagent/nftables`, …), for every command: `run`
   * loads its mode's, the others the ones they need.
   * @default (specifier) => import(specifier)
   */
  readonly load?: ModuleLoader;
}

/**
 * The modules of `render`, `trace`, `apply` and `doctor`, loaded on first use. They import no
 * backend package themselves: each command loads the package of the backend it was given
 * (`-b`; `doctor` those of the modes it finds), so one backend package installed is enough.
 */
async function offlineCommands() {
  const [args, apply, doctor, render, trace] = await Promise.all([
    import('./args.js'),
    import('./apply.js'),
    import('./doctor.js'),
    import('./render-backend.js'),
    import('./trace.js'),
  ]);
  return {
    parseCommandLine: args.parseCommandLine,
    applyRules: apply.applyRules,
    runDoctorCli: doctor.runDoctorCli,
    renderBackend: render.renderBackend,
    resolveNfacct: render.resolveNfacct,
    traceRules: trace.traceRules,
    formatTrace: trace.formatTrace,
    formatTraceJson: trace.formatTraceJson,
  };
}

/**
 * Parses an offline command line; an `--ipvs-scheduler` value is checked with `@nodeagent/ipvs`
 * (loaded only then, as kube-proxy checks it).
 */
async function parseOffline(m: OfflineCommands, argv: readonly string[], io: ProxyCliIo) {
  let scheduler = false;
  const cmd = m.parseCommandLine(argv, io.env, (s) => {
    if (s !== '') scheduler = true;
    return undefined;
  });
  if (!scheduler || cmd.command === 'help') return cmd;
  const ipvs = await offlineBackendModule('ipvs', cmd.backend.backend, io.load);
  return m.parseCommandLine(argv, io.env, ipvs.ipvsSchedulerProblem);
}

type OfflineCommands = Awaited<ReturnType<typeof offlineCommands>>;

/** The first SIGTERM or SIGINT this process receives. */
function processStopSignal(): Promise<string> {
  return new Promise((resolve) => {
    const on = (sig: NodeJS.Signals) => {
      process.off('SIGTERM', on);
      process.off('SIGINT', on);
      resolve(sig);
    };
    process.on('SIGTERM', on);
    process.on('SIGINT', on);
  });
}

/** Exit codes of `nodeagent-proxy`. */
export const EXIT_CODES = {
  /** Done; invalid objects, if any, were skipped and reported on stderr. */
  ok: 0,
  /** Nothing usable: unreadable file, no valid service port, `--strict` with invalid objects, a tool failed. */
  failure: 1,
  /** The command line cannot be used. */
  usage: 2,
} as const;

const PREFIX = 'nodeagent-proxy';

const readFileText = (path: string) => readFileText0(path, 'utf8');

/** The `Usage:` lines of a command's help (what a usage error shows). */
function shortUsage(command: string | undefined): string {
  const text = command === 'run' ? RUN_USAGE : USAGE[(command ?? '') as keyof typeof USAGE];
  const head = text.split('\n\n')[0]!;
  const more = command === undefined ? `${PREFIX} --help` : `${PREFIX} ${command} --help`;
  return `${head}\nRun '${more}' for the options.\n`;
}

async function notesFor(cmd: Exclude<ParsedCommand, { command: 'help' }>, io: ProxyCliIo): Promise<string[]> {
  const b = cmd.backend;
  const notes: string[] = [];
  if (!b.localhostNodePorts && b.backend !== 'iptables') {
    notes.push(`--no-localhost-nodeports only applies to iptables; ignored for ${b.backend}`);
  }
  if (b.nftablesLayout !== 'kube-proxy' && b.backend !== 'nftables') {
    notes.push(`--nftables-layout only applies to nftables; ignored for ${b.backend}`);
  }
  const i = b.ipvs;
  const ipvsFlags = [
    i.scheduler !== '' && '--ipvs-scheduler',
    i.excludeCIDRs.length > 0 && '--ipvs-exclude-cidrs',
    i.strictARP && '--ipvs-strict-arp',
    i.tcpTimeoutMs > 0 && '--ipvs-tcp-timeout',
    i.tcpFinTimeoutMs > 0 && '--ipvs-tcpfin-timeout',
    i.udpTimeoutMs > 0 && '--ipvs-udp-timeout',
  ].filter((f): f is string => typeof f === 'string');
  if (ipvsFlags.length > 0 && b.backend !== 'ipvs') {
    notes.push(`${ipvsFlags.join(', ')} only apply to ipvs; ignored for ${b.backend}`);
  }
  if (b.backend === 'ipvs' && cmd.command === 'apply')
    notes.push((await offlineBackendModule('ipvs', 'ipvs', io.load)).IPVS_DEPRECATION_MESSAGE);
  return notes;
}

async function run(
  cmd: Exclude<ParsedCommand, { command: 'help' }>,
  io: ProxyCliIo,
  m: OfflineCommands,
): Promise<number> {
  const err = (line: string) => io.stderr.write(`${PREFIX}: ${line}\n`);
  const packetFamily =
    cmd.command === 'trace' ? (cmd.packet.destIP.includes(':') ? (6 as const) : (4 as const)) : undefined;
  const input: LoadedInput = await loadInput(
    cmd.input,
    io.readFile ?? defaultReadManifest,
    cmd.command,
    packetFamily,
  );
  const nfacct = await m.resolveNfacct(
    cmd.backend,
    cmd.command === 'apply' ? cmd.netns : undefined,
    io.nfacct ?? ((netns, ipt) => new ipt.SpawnNfacctClient(definedFields({ netns }))),
    io.load,
  );
  const rules = await m.renderBackend(cmd.backend, input, nfacct, io.load);
  const problems = [...input.problems, ...rules.problems];
  for (const n of [...(await notesFor(cmd, io)), ...input.notes]) err(`note: ${n}`);
  for (const p of problems) err(`error: ${p}`);
  if (problems.length > 0) {
    if (cmd.input.strict) {
      err(
        `error: ${problems.length} invalid object(s) with --strict: nothing ${cmd.command === 'apply' ? 'applied' : 'written'}`,
      );
      return EXIT_CODES.failure;
    }
    if (rules.programmedPorts === 0) {
      err(
        `error: no valid service port left in the input: nothing ${cmd.command === 'apply' ? 'applied' : 'written'}`,
      );
      return EXIT_CODES.failure;
    }
    err(`note: ${problems.length} invalid object(s) skipped; ${rules.programmedPorts} service port(s) used`);
  }
  switch (cmd.command) {
    case 'render':
      io.stdout.write(rules.text);
      return EXIT_CODES.ok;
    case 'trace': {
      const result = await m.traceRules(rules, cmd.packet, input.nodeIPs, io.load);
      io.stdout.write(
        cmd.json ? m.formatTraceJson(result, cmd.input.verbose) : m.formatTrace(result, cmd.input.verbose),
      );
      return EXIT_CODES.ok;
    }
    case 'apply':
      io.stdout.write(`${await m.applyRules(rules, input, cmd.netns, cmd.backend, io.load)}\n`);
      return EXIT_CODES.ok;
  }
}

/**
 * Runs `nodeagent-proxy` with `argv` (without the node and script paths; `--version` prints
 * the package version) and resolves with
 * the exit code: 0 done (invalid objects skipped, one `error:` line each on stderr), 1
 * nothing usable or a tool failed, 2 usage error (short usage on stderr). Never throws.
 *
 * @example
 * ```ts
 * const code = await runProxyCli(
 *   ['render', '--backend', 'nftables', '-f', 'cluster.yaml', '--node-name', 'n1', '--node-ip', '192.168.0.2'],
 *   { stdout: process.stdout, stderr: process.stderr, env: process.env },
 * );
 * ```
 */
export async function runProxyCli(argv: readonly string[], io: ProxyCliIo): Promise<number> {
  const err = (line: string) => io.stderr.write(`${PREFIX}: ${line}\n`);
  try {
    if (argv.length === 1 && (argv[0] === '--version' || argv[0] === '-V')) {
      io.stdout.write(`${PREFIX} ${proxierVersion()}\n`);
      return EXIT_CODES.ok;
    }
    if (argv[0] === 'doctor' || (argv[0] === 'help' && argv[1] === 'doctor')) {
      const m = await offlineCommands();
      return await m.runDoctorCli(argv[0] === 'help' ? ['--help'] : argv.slice(1), io);
    }
    if (argv[0] === 'run' || (argv[0] === 'help' && argv[1] === 'run')) {
      const readFile = (path: string) => readFileText(path);
      const cmd =
        argv[0] === 'help'
          ? ({ command: 'help' } as const)
          : await parseRunCommandLine(argv.slice(1), readFile);
      if (cmd.command === 'help') {
        io.stdout.write(RUN_USAGE);
        return EXIT_CODES.ok;
      }
      return await runProxy(cmd, {
        stderr: io.stderr,
        env: io.env,
        stopSignal: io.stopSignal ?? processStopSignal(),
        ...(io.load ? { load: io.load } : {}),
      });
    }
    const m = await offlineCommands();
    const cmd = await parseOffline(m, argv, io);
    if (cmd.command === 'help') {
      io.stdout.write(USAGE[cmd.topic ?? '']);
      return EXIT_CODES.ok;
    }
    return await run(cmd, io, m);
  } catch (e) {
    if (e instanceof CliUsageError) {
      err(`error: ${oneLine(e.message)}`);
      io.stderr.write(shortUsage(e.command));
      return EXIT_CODES.usage;
    }
    if (e instanceof KubeProxyConfigError) {
      err(`error: ${oneLine(e.message)}`);
      return EXIT_CODES.failure;
    }
    if (e instanceof CliFailure) {
      err(`error: ${e.message}`);
      for (const d of e.details) io.stderr.write(`  ${d}\n`);
      return EXIT_CODES.failure;
    }
    // Unusable render options, a tracer that cannot read a rule, an unexpected tool error.
    err(`error: ${oneLine(e instanceof Error ? e.message : String(e))}`);
    return EXIT_CODES.failure;
  }
}
