/**
 * Command-line parsing for `nodeagent-proxy`: argv → a typed, validated command. Every
 * problem is a {@link CliUsageError} (exit code 2).
 *
 * @module
 */
import { parseArgs } from 'node:util';
import { parseCIDR, parseIP } from '@nodeagent/core';
import type { NftLayout } from '@nodeagent/nftables';
import type { IPFamily } from '@nodeagent/proxy-state';
import { CliUsageError, oneLine } from './errors.js';
import { type IpvsArgs, parseIpvsArgs, parseNodePortAddresses } from './kube-proxy-flags.js';

/** The proxy backends the CLI can render, trace and apply. */
export type Backend = 'iptables' | 'nftables' | 'ipvs';

/** The commands. */
export type CommandName = 'render' | 'trace' | 'apply';

/** Protocols a traced packet can have. */
export type PacketProtocol = 'TCP' | 'UDP' | 'SCTP';

/** Where the objects come from and which node they are seen from. */
export interface InputArgs {
  /** Manifest files (`-` = stdin), in order. */
  readonly files: readonly string[];
  /** `--node-name`, else `NODE_NAME` from the environment. */
  readonly nodeName: string;
  /** `--node-ip`, canonical; empty = take them from a `Node` object in the manifests. */
  readonly nodeIPs: readonly string[];
  /** `--cluster-cidr`, canonical (at most one per family). */
  readonly clusterCIDRs: readonly string[];
  /**
   * `--service-cluster-ip-range` (our extension; kube-proxy learns them from `ServiceCIDR`
   * objects only), canonical: the service CIDRs whose unallocated ClusterIPs nftables drops.
   */
  readonly serviceClusterIPRanges: readonly string[];
  /** `--ip-family`; undefined = derived (trace: `--dst`; otherwise the first node IP). */
  readonly ipFamily: IPFamily | undefined;
  /** `--strict`: any skipped object fails the command before anything is written. */
  readonly strict: boolean;
  /** `-v`: also print ignored objects (and, for trace, the matched rules). */
  readonly verbose: boolean;
}

/** How rules are rendered. */
export interface BackendArgs {
  /** `--backend` (default `iptables`, kube-proxy's default mode). */
  readonly backend: Backend;
  /** `--masquerade-all`. */
  readonly masqueradeAll: boolean;
  /** False with `--no-localhost-nodeports` (iptables only). */
  readonly localhostNodePorts: boolean;
  /** `--nftables-layout` (default `kube-proxy`). */
  readonly nftablesLayout: NftLayout;
  /**
   * `--nodeport-addresses`: canonical CIDRs and the keywords `primary`, `localhost`, `all`;
   * empty = the backend's default (`primary` for nftables, every node IP otherwise).
   */
  readonly nodePortAddresses: readonly string[];
  /** The `--ipvs-*` settings (ipvs backend only). */
  readonly ipvs: IpvsArgs;
  /**
   * `--nfacct auto|on|off` (iptables only): whether the rules use kube-proxy's nfacct
   * counters. `auto` (the default) asks this node's kernel.
   */
  readonly nfacct: NfacctMode;
}

/** `--nfacct`: `on` as upstream's test proxier, `off` as a kernel without nfacct, `auto` = detect. */
export type NfacctMode = 'auto' | 'on' | 'off';

/** The packet of `trace`. */
export interface PacketArgs {
  /** Source address (canonical). */
  readonly sourceIP: string;
  /** Destination address (canonical). */
  readonly destIP: string;
  /** Destination port, 1-65535. */
  readonly destPort: number;
  /** Protocol (default TCP). */
  readonly protocol: PacketProtocol;
}

/** `render`. */
export interface RenderCommand {
  /** Discriminator. */
  readonly command: 'render';
  /** Inputs. */
  readonly input: InputArgs;
  /** Backend. */
  readonly backend: BackendArgs;
}

/** `trace`. */
export interface TraceCommand {
  /** Discriminator. */
  readonly command: 'trace';
  /** Inputs. */
  readonly input: InputArgs;
  /** Backend. */
  readonly backend: BackendArgs;
  /** The packet. */
  readonly packet: PacketArgs;
  /** `--json`. */
  readonly json: boolean;
}

/** `apply`. */
export interface ApplyCommand {
  /** Discriminator. */
  readonly command: 'apply';
  /** Inputs. */
  readonly input: InputArgs;
  /** Backend. */
  readonly backend: BackendArgs;
  /** `--netns`: the named network namespace (`/run/netns/<name>`) to program. */
  readonly netns: string;
}

/** `--help` of a command (or of the whole tool when `command` is undefined). */
export interface HelpCommand {
  /** Discriminator. */
  readonly command: 'help';
  /** Which usage text. */
  readonly topic: CommandName | undefined;
}

/** A parsed command line. */
export type ParsedCommand = RenderCommand | TraceCommand | ApplyCommand | HelpCommand;

const COMMANDS: readonly CommandName[] = ['render', 'trace', 'apply'];

const COMMON_OPTIONS = {
  backend: { type: 'string', short: 'b' },
  file: { type: 'string', short: 'f', multiple: true },
  'node-name': { type: 'string' },
  'node-ip': { type: 'string', multiple: true },
  'cluster-cidr': { type: 'string', multiple: true },
  'service-cluster-ip-range': { type: 'string', multiple: true },
  nfacct: { type: 'string' },
  'masquerade-all': { type: 'boolean' },
  'no-localhost-nodeports': { type: 'boolean' },
  'nftables-layout': { type: 'string' },
  'nodeport-addresses': { type: 'string', multiple: true },
  'ipvs-scheduler': { type: 'string' },
  'ipvs-exclude-cidrs': { type: 'string', multiple: true },
  'ipvs-strict-arp': { type: 'boolean' },
  'ipvs-tcp-timeout': { type: 'string' },
  'ipvs-tcpfin-timeout': { type: 'string' },
  'ipvs-udp-timeout': { type: 'string' },
  'ip-family': { type: 'string' },
  strict: { type: 'boolean' },
  verbose: { type: 'boolean', short: 'v' },
  help: { type: 'boolean', short: 'h' },
} as const;

const TRACE_OPTIONS = {
  ...COMMON_OPTIONS,
  src: { type: 'string' },
  dst: { type: 'string' },
  port: { type: 'string' },
  proto: { type: 'string' },
  json: { type: 'boolean' },
} as const;

const APPLY_OPTIONS = { ...COMMON_OPTIONS, netns: { type: 'string' } } as const;

type Values = Record<string, string | boolean | (string | boolean)[] | undefined>;

function str(values: Values, name: string): string | undefined {
  const v = values[name];
  return typeof v === 'string' ? v : undefined;
}

/** A repeatable, comma-separated option (`--node-ip a,b --node-ip c`) as a flat list. */
function list(values: Values, name: string): string[] {
  const v = values[name];
  const items = Array.isArray(v) ? v : typeof v === 'string' ? [v] : [];
  return items
    .flatMap((s) => String(s).split(','))
    .map((s) => s.trim())
    .filter((s) => s !== '');
}

function ipArg(text: string, option: string, command: CommandName): { ip: string; family: IPFamily } {
  const p = parseIP(text);
  if (!p) throw new CliUsageError(`--${option}: ${JSON.stringify(text)} is not an IP address`, command);
  return p;
}

function parseBackend(values: Values, command: CommandName, schedulerProblem: SchedulerCheck): BackendArgs {
  const backend = str(values, 'backend') ?? 'iptables';
  if (backend !== 'iptables' && backend !== 'nftables' && backend !== 'ipvs') {
    throw new CliUsageError(
      `--backend must be iptables, nftables or ipvs, got ${JSON.stringify(backend)}`,
      command,
    );
  }
  const layout = str(values, 'nftables-layout') ?? 'kube-proxy';
  if (layout !== 'kube-proxy' && layout !== 'optimized') {
    throw new CliUsageError(
      `--nftables-layout must be kube-proxy or optimized, got ${JSON.stringify(layout)}`,
      command,
    );
  }
  const nfacct = str(values, 'nfacct') ?? 'auto';
  if (nfacct !== 'auto' && nfacct !== 'on' && nfacct !== 'off') {
    throw new CliUsageError(`--nfacct must be auto, on or off, got ${JSON.stringify(nfacct)}`, command);
  }
  return {
    backend,
    nfacct,
    masqueradeAll: values['masquerade-all'] === true,
    localhostNodePorts: values['no-localhost-nodeports'] !== true,
    nftablesLayout: layout,
    nodePortAddresses: parseNodePortAddresses(list(values, 'nodeport-addresses'), command),
    ipvs: parseIpvsArgs(values, command, schedulerProblem),
  };
}

function parseInput(values: Values, env: NodeJS.ProcessEnv, command: CommandName): InputArgs {
  const files = ((values.file as string[] | undefined) ?? []).filter((f) => f !== '');
  if (files.length === 0) throw new CliUsageError('at least one -f <file|-> is required', command);
  if (files.filter((f) => f === '-').length > 1)
    throw new CliUsageError('-f - (stdin) can be given once', command);
  const nodeName = str(values, 'node-name') ?? env.NODE_NAME;
  if (nodeName === undefined || nodeName.trim() === '') {
    throw new CliUsageError('--node-name is required (or set NODE_NAME)', command);
  }
  const nodeIPs = list(values, 'node-ip').map((t) => ipArg(t, 'node-ip', command).ip);
  const clusterCIDRs: string[] = [];
  const cidrFamilies = new Set<IPFamily>();
  for (const t of list(values, 'cluster-cidr')) {
    const c = parseCIDR(t);
    if (!c) throw new CliUsageError(`--cluster-cidr: ${JSON.stringify(t)} is not a CIDR`, command);
    if (cidrFamilies.has(c.family)) {
      throw new CliUsageError(`--cluster-cidr: more than one IPv${c.family} CIDR`, command);
    }
    cidrFamilies.add(c.family);
    clusterCIDRs.push(c.cidr);
  }
  const serviceClusterIPRanges: string[] = [];
  for (const t of list(values, 'service-cluster-ip-range')) {
    const c = parseCIDR(t);
    if (!c)
      throw new CliUsageError(`--service-cluster-ip-range: ${JSON.stringify(t)} is not a CIDR`, command);
    if (!serviceClusterIPRanges.includes(c.cidr)) serviceClusterIPRanges.push(c.cidr);
  }
  const fam = str(values, 'ip-family');
  if (fam !== undefined && fam !== '4' && fam !== '6') {
    throw new CliUsageError(`--ip-family must be 4 or 6, got ${JSON.stringify(fam)}`, command);
  }
  return {
    files,
    nodeName: nodeName.trim(),
    nodeIPs,
    clusterCIDRs,
    serviceClusterIPRanges,
    ipFamily: fam === undefined ? undefined : fam === '4' ? 4 : 6,
    strict: values.strict === true,
    verbose: values.verbose === true,
  };
}

function parsePacket(values: Values): PacketArgs {
  const need = (name: string): string => {
    const v = str(values, name);
    if (v === undefined) throw new CliUsageError(`--${name} is required`, 'trace');
    return v.trim();
  };
  const src = ipArg(need('src'), 'src', 'trace');
  const dst = ipArg(need('dst'), 'dst', 'trace');
  if (src.family !== dst.family) {
    throw new CliUsageError(`--src ${src.ip} and --dst ${dst.ip} are of different IP families`, 'trace');
  }
  const portText = need('port');
  const port = /^[0-9]{1,5}$/.test(portText) ? Number(portText) : Number.NaN;
  if (!(port >= 1 && port <= 65535)) {
    throw new CliUsageError(
      `--port must be a number from 1 to 65535, got ${JSON.stringify(portText)}`,
      'trace',
    );
  }
  const proto = (str(values, 'proto') ?? 'tcp').toUpperCase();
  if (proto !== 'TCP' && proto !== 'UDP' && proto !== 'SCTP') {
    throw new CliUsageError(
      `--proto must be tcp, udp or sctp, got ${JSON.stringify(str(values, 'proto'))}`,
      'trace',
    );
  }
  return { sourceIP: src.ip, destIP: dst.ip, destPort: port, protocol: proto };
}

/**
 * Checks an `--ipvs-scheduler` value: `@nodeagent/ipvs`' `ipvsSchedulerProblem` (the caller
 * loads that package only when a scheduler was given).
 */
export type SchedulerCheck = (scheduler: string) => string | undefined;

/**
 * Parses `argv` (without the node and script paths).
 * @param schedulerProblem - checks `--ipvs-scheduler`; `@nodeagent/ipvs`' `ipvsSchedulerProblem`. @default accepts any (the caller checks with the ipvs package when a scheduler is given)
 * @throws CliUsageError for anything that cannot be used.
 */
export function parseCommandLine(
  argv: readonly string[],
  env: NodeJS.ProcessEnv,
  schedulerProblem: SchedulerCheck = () => undefined,
): ParsedCommand {
  const [first, ...rest] = argv;
  if (first === undefined || first === '--help' || first === '-h' || first === 'help') {
    const topic = first === 'help' ? rest[0] : undefined;
    if (topic !== undefined && !(COMMANDS as readonly string[]).includes(topic)) {
      throw new CliUsageError(`unknown command ${JSON.stringify(topic)}`);
    }
    if (first === undefined) throw new CliUsageError('a command is required');
    return { command: 'help', topic: topic as CommandName | undefined };
  }
  if (!(COMMANDS as readonly string[]).includes(first)) {
    throw new CliUsageError(`unknown command ${JSON.stringify(first)}`);
  }
  const command = first as CommandName;
  const options = command === 'trace' ? TRACE_OPTIONS : command === 'apply' ? APPLY_OPTIONS : COMMON_OPTIONS;
  let values: Values;
  try {
    const parsed = parseArgs({ args: rest, options, strict: true, allowPositionals: true });
    if (parsed.positionals.length > 0) {
      throw new CliUsageError(`unexpected argument ${JSON.stringify(parsed.positionals[0])}`, command);
    }
    values = parsed.values as Values;
  } catch (e) {
    if (e instanceof CliUsageError) throw e;
    // node's messages for unknown options / missing values are clear; keep them on one line.
    throw new CliUsageError(oneLine((e as Error).message), command);
  }
  if (values.help === true) return { command: 'help', topic: command };
  const backend = parseBackend(values, command, schedulerProblem);
  const input = parseInput(values, env, command);
  if (command === 'render') return { command, input, backend };
  if (command === 'trace') {
    const packet = parsePacket(values);
    if (input.ipFamily !== undefined && input.ipFamily !== (packet.destIP.includes(':') ? 6 : 4)) {
      throw new CliUsageError(`--ip-family ${input.ipFamily} does not match --dst ${packet.destIP}`, command);
    }
    return { command, input, backend, packet, json: values.json === true };
  }
  const netns = str(values, 'netns');
  if (netns === undefined) throw new CliUsageError('--netns <name> is required', command);
  if (!/^[A-Za-z0-9_.-]{1,64}$/.test(netns) || netns === '.' || netns === '..') {
    throw new CliUsageError(`--netns: ${JSON.stringify(netns)} is not a valid namespace name`, command);
  }
  return { command, input, backend, netns };
}
