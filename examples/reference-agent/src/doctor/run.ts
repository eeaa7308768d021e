/**
 * `nodeagent doctor [flags]`: explains a NotReady or unhealthy node. Takes the agent's own
 * flags (so it looks where the agent looks: `--kubeconfig`, `--runtime-endpoint`,
 * `--root-dir`, `--cgroup-driver`, `--eviction-hard`, `--port`, `--healthz-port`,
 * `--tls-cert-file`, ...) plus `--json`, `--fail-swap-on`, `--container-runtime-endpoint`
 * and `--timeout`; runs every check and prints the findings as text or one JSON object.
 *
 * @module
 */
import { parseArgs } from 'node:util';
import { parseGoDuration } from '@nodeagent/core';
import { parseThresholdConfig } from '@nodeagent/eviction';
import { type DataPlaneDoctorOptions, dataPlaneDoctor } from '@nodeagent/proxier';
import { type AgentFlags, FlagError, parseFlags } from '../flags.js';
import {
  type ApiServerDateReading,
  type CertificateReading,
  type CgroupReadings,
  checkCertificates,
  checkCgroups,
  checkClockSkew,
  checkDataPlane,
  checkDisk,
  checkPleg,
  checkPorts,
  checkRuntime,
  checkSwap,
  type DataPlaneFindingReading,
  type FsReading,
  type PortSpec,
  parseProcNetTcp,
} from './checks.js';
import {
  httpGet,
  loadKubeConfig,
  nearestExisting,
  readApiServerDate,
  readCertificates,
  readCgroups,
  readRuntime,
  readText,
  socketOwners,
  statfsReading,
} from './readers.js';
import {
  DOCTOR_CHECKS,
  type DoctorCheck,
  type DoctorFinding,
  type DoctorSeverity,
  type HttpAnswer,
  type ReadResult,
  type RuntimeReading,
  type SocketOwner,
  type StatfsReading,
} from './types.js';

/** The `--json` document's `schemaVersion`. */
export const NODE_DOCTOR_SCHEMA_VERSION = 1;

/** The `--json` document (stable: fields are only ever added). */
export interface NodeDoctorReport {
  /** {@link NODE_DOCTOR_SCHEMA_VERSION}. */
  readonly schemaVersion: number;
  /** The node name (`--node-name`, default the host name). */
  readonly node: string;
  /** When the report was made (RFC 3339). */
  readonly time: string;
  /** The worst severity of each check. */
  readonly checks: Readonly<Record<DoctorCheck, DoctorSeverity>>;
  /** Every finding, grouped by check in {@link DOCTOR_CHECKS} order. */
  readonly findings: readonly DoctorFinding[];
  /** Counts. */
  readonly summary: { readonly errors: number; readonly warnings: number };
}

/** Doctor-only settings (besides the agent's flags). */
export interface DoctorSettings {
  /** `--json`. */
  readonly json: boolean;
  /** `--fail-swap-on` (the kubelet's flag). @default true */
  readonly failSwapOn: boolean;
  /** `--timeout`: deadline of each remote call, ms. @default 5000 */
  readonly timeoutMs: number;
  /** `--container-runtime-endpoint` or the agent's `--runtime-endpoint`. */
  readonly runtimeEndpoint: string | undefined;
  /** `--root-dir` was given (else the kubelet's default `/var/lib/kubelet`). */
  readonly rootDir: string;
  /** `--root-dir` given explicitly. */
  readonly rootDirGiven: boolean;
}

/**
 * Everything doctor reads, injectable: tests hand in fakes, the CLI the real readers.
 * Every reader turns failures into readings; none should throw.
 */
export interface DoctorReaders {
  /** Reads a file (`/proc/swaps`, `/proc/net/tcp`, `/proc/net/tcp6`). */
  readonly readFile: (path: string) => Promise<ReadResult>;
  /** Reads `/sys/fs/cgroup`. */
  readonly cgroups: () => Promise<CgroupReadings>;
  /** Asks the CRI runtime. */
  readonly runtime: (endpoint: string, timeoutMs: number) => Promise<RuntimeReading>;
  /** GET a URL. */
  readonly httpGet: (url: string, timeoutMs: number) => Promise<HttpAnswer>;
  /** The API server's `Date` (undefined: no kubeconfig and not in a cluster). */
  readonly apiServerDate: (timeoutMs: number) => Promise<ApiServerDateReading | undefined>;
  /** The certificates to check. */
  readonly certificates: () => Promise<CertificateReading[]>;
  /** statfs of a path. */
  readonly statfs: (path: string) => Promise<StatfsReading>;
  /** The nearest existing ancestor of a path. */
  readonly nearestExisting: (path: string) => Promise<string>;
  /** Owners of socket inodes. */
  readonly socketOwners: (inodes: ReadonlySet<number>) => Promise<ReadonlyMap<number, SocketOwner>>;
  /** This process's PID (its sockets count as the agent's: an in-process agent). */
  readonly selfPid: number;
  /** The data-plane doctor. */
  readonly dataPlane: () => Promise<{
    modes: readonly string[];
    findings: readonly DataPlaneFindingReading[];
  }>;
  /** Now, ms since the epoch. */
  readonly now: () => number;
}

/** The real readers for the agent flags `flags`. */
export function nodeReaders(
  flags: AgentFlags,
  env: NodeJS.ProcessEnv,
  dataPlane: DataPlaneDoctorOptions = {},
): DoctorReaders {
  let kc: ReturnType<typeof loadKubeConfig>;
  let kcError: string | undefined;
  try {
    kc = loadKubeConfig(flags.kubeconfig, env);
  } catch (e) {
    kcError = (e as Error).message;
  }
  return {
    readFile: readText,
    cgroups: () => readCgroups(),
    runtime: readRuntime,
    httpGet,
    apiServerDate: async (timeoutMs) => {
      if (kcError !== undefined)
        return { ok: false, server: flags.kubeconfig ?? '(in-cluster)', reason: 'error', message: kcError };
      return kc === undefined ? undefined : readApiServerDate(kc, timeoutMs);
    },
    certificates: () => readCertificates(flags.kubeletServer.tlsCertFile, kc),
    statfs: statfsReading,
    nearestExisting,
    socketOwners: (inodes) => socketOwners(inodes),
    selfPid: process.pid,
    dataPlane: () => dataPlaneDoctor(dataPlane),
    now: Date.now,
  };
}

/** The agent's command lines: `nodeagent`, `nodeagent-reference-agent`, `examples/reference-agent/...`. */
const AGENT_CMDLINE = /nodeagent|reference-agent/;
/** The proxy's: kube-proxy or `nodeagent-proxy`. */
const PROXY_CMDLINE = /kube-proxy|nodeagent-proxy|nodeagent/;

/** The ports to check for these flags. */
export function portSpecs(flags: AgentFlags): PortSpec[] {
  const s = flags.kubeletServer;
  const agent = { expectedOwner: AGENT_CMDLINE, expectedName: 'the agent' };
  const healthz = flags.healthPort ?? s.healthzPort;
  const out: PortSpec[] = [];
  if (s.port > 0) out.push({ port: s.port, purpose: '--port, kubelet API', ...agent });
  out.push({
    port: s.readOnlyPort > 0 ? s.readOnlyPort : 10255,
    purpose: s.readOnlyPort > 0 ? '--read-only-port' : 'read-only port (off here)',
    ...agent,
  });
  if (healthz > 0) out.push({ port: healthz, purpose: '--healthz-port', ...agent });
  out.push({
    port: 10256,
    purpose: 'proxy healthz',
    expectedOwner: PROXY_CMDLINE,
    expectedName: 'the proxy',
  });
  return out;
}

function hostFor(address: string): string {
  if (address === '0.0.0.0' || address === '') return '127.0.0.1';
  if (address === '::') return '[::1]';
  return address.includes(':') ? `[${address}]` : address;
}

/** Runs every check and builds the report. */
export async function runNodeDoctor(
  flags: AgentFlags,
  settings: DoctorSettings,
  readers: DoctorReaders,
): Promise<NodeDoctorReport> {
  const t = settings.timeoutMs;
  const s = flags.kubeletServer;
  const healthzPort = flags.healthPort ?? s.healthzPort;
  const healthzUrl =
    healthzPort > 0 ? `http://${hostFor(s.healthzBindAddress)}:${healthzPort}/healthz?verbose` : undefined;
  const metricsUrl =
    s.readOnlyPort > 0 ? `http://${hostFor(s.address)}:${s.readOnlyPort}/metrics` : undefined;
  const ports = portSpecs(flags);

  const runtimeP =
    settings.runtimeEndpoint === undefined
      ? Promise.resolve(undefined)
      : readers.runtime(settings.runtimeEndpoint, t);
  const [swaps, cgroups, runtime, healthz, metrics, apiDate, certs, tcp4, tcp6, dataPlane] =
    await Promise.all([
      readers.readFile('/proc/swaps'),
      readers.cgroups(),
      runtimeP,
      healthzUrl === undefined ? undefined : readers.httpGet(healthzUrl, t),
      metricsUrl === undefined ? undefined : readers.httpGet(metricsUrl, t),
      readers.apiServerDate(t),
      readers.certificates(),
      readers.readFile('/proc/net/tcp'),
      readers.readFile('/proc/net/tcp6'),
      readers.dataPlane().then(
        (r) => ({ ok: true as const, ...r }),
        (e: unknown) => ({ ok: false as const, message: e instanceof Error ? e.message : String(e) }),
      ),
    ]);

  // Ports: listeners of both families; owners only for the sockets on the ports we need.
  const listeners: Parameters<typeof checkPorts>[1] = tcp4.ok
    ? { ok: true, list: [...parseProcNetTcp(tcp4.text), ...(tcp6.ok ? parseProcNetTcp(tcp6.text) : [])] }
    : { ok: false, message: tcp4.message };
  const wanted = new Set(
    listeners.ok
      ? listeners.list.filter((l) => ports.some((p) => p.port === l.port)).map((l) => l.inode)
      : [],
  );
  const owners = await readers.socketOwners(wanted);

  // Disk: the root dir (or where it would be created) and the runtime's image filesystem.
  const nodefsPath = settings.rootDirGiven
    ? settings.rootDir
    : await readers.nearestExisting(settings.rootDir);
  const imagefsPath = runtime?.imageFsMountpoint ?? nodefsPath;
  const fs: FsReading[] = [{ kind: 'nodefs', path: nodefsPath, stat: await readers.statfs(nodefsPath) }];
  fs.push({
    kind: 'imagefs',
    path: imagefsPath,
    stat: imagefsPath === nodefsPath ? fs[0]!.stat : await readers.statfs(imagefsPath),
  });
  const thresholds = parseThresholdConfig(flags.eviction.thresholds);

  const findings: DoctorFinding[] = [
    ...checkSwap(swaps, settings.failSwapOn),
    ...checkCgroups(cgroups, flags.cgroups.cgroupDriver, runtime),
    ...checkRuntime(runtime),
    ...checkPleg(healthzUrl, healthz, metricsUrl, metrics, readers.now()),
    ...checkClockSkew(apiDate),
    ...checkCertificates(certs, readers.now()),
    ...checkPorts(ports, listeners, owners, readers.selfPid),
    ...checkDisk(fs, thresholds),
    ...checkDataPlane(dataPlane),
  ];
  const rank = { ok: 0, warn: 1, error: 2 } as const;
  const checks = Object.fromEntries(
    DOCTOR_CHECKS.map((c) => [
      c,
      findings
        .filter((f) => f.check === c)
        .reduce<DoctorSeverity>((worst, f) => (rank[f.severity] > rank[worst] ? f.severity : worst), 'ok'),
    ]),
  ) as Record<DoctorCheck, DoctorSeverity>;
  return {
    schemaVersion: NODE_DOCTOR_SCHEMA_VERSION,
    node: flags.nodeName,
    time: new Date(readers.now()).toISOString(),
    checks,
    findings,
    summary: {
      errors: findings.filter((f) => f.severity === 'error').length,
      warnings: findings.filter((f) => f.severity === 'warn').length,
    },
  };
}

const MARK = { error: 'ERROR', warn: 'WARN ', ok: 'ok   ' } as const;

/** The text form: a line per finding under its check, the remedy indented below. */
export function formatNodeDoctorText(r: NodeDoctorReport): string {
  const lines = [`nodeagent doctor: node ${r.node} at ${r.time}`];
  for (const c of DOCTOR_CHECKS) {
    lines.push(`${c}:`);
    for (const f of r.findings.filter((x) => x.check === c)) {
      lines.push(
        `  ${MARK[f.severity]} ${f.skipped ? '(not checked) ' : ''}${f.id !== undefined ? `[${f.id}] ` : ''}${f.message}`,
      );
      if (f.remedy !== undefined && f.severity !== 'ok') lines.push(`        fix: ${f.remedy}`);
    }
  }
  lines.push(
    `${r.summary.errors} error(s), ${r.summary.warnings} warning(s)${r.summary.errors + r.summary.warnings === 0 ? ': no problems found' : ''}`,
  );
  return `${lines.join('\n')}\n`;
}

/** Usage of `doctor`. */
export const DOCTOR_USAGE = `Usage: nodeagent doctor [--json] [--fail-swap-on=BOOL] [--timeout DURATION] [agent flags]

Explains a NotReady or unhealthy node: swap, cgroup version and driver (vs the runtime's),
the runtime's reachability and status conditions, PLEG health (from the running agent's
healthz), clock skew to the API server, certificates about to expire, the agent's ports,
disk and inode pressure against the eviction thresholds, and the data-plane doctor
(nodeagent-proxy doctor). Nothing is changed.

Give it the agent's flags so it looks where the agent looks: --kubeconfig, --runtime-endpoint
(or --container-runtime-endpoint), --root-dir (default /var/lib/kubelet), --cgroup-driver,
--eviction-hard, --port, --read-only-port, --healthz-port, --health-port, --tls-cert-file, ...

  --json                         one JSON object (schemaVersion ${NODE_DOCTOR_SCHEMA_VERSION}) on stdout
  --fail-swap-on[=BOOL]          as the kubelet's: swap on is an error (default true)
  --container-runtime-endpoint unix:///P
                                 the CRI runtime to ask (the kubelet's name for --runtime-endpoint)
  --timeout DURATION             deadline of each call to the runtime, agent and API server (default 5s)
  -h, --help                     this text

Exit codes: 0 no problems; 1 a warning or an error; 2 usage error.
`;

/** A parsed doctor command line. */
export interface DoctorCommandLine {
  /** The agent's flags. */
  readonly flags: AgentFlags;
  /** Doctor's own. */
  readonly settings: DoctorSettings;
}

/** Parses `doctor`'s arguments (after the word `doctor`). @throws FlagError */
export function parseDoctorArgs(argv: readonly string[]): DoctorCommandLine | 'help' {
  const own: string[] = [];
  const rest: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    const name = a.split('=')[0]!;
    if (name === '--json' || name === '--fail-swap-on' || name === '--help' || name === '-h') own.push(a);
    else if (name === '--timeout' || name === '--container-runtime-endpoint') {
      own.push(a);
      if (!a.includes('=') && i + 1 < argv.length) own.push(argv[++i]!);
    } else rest.push(a);
  }
  let values: Record<string, string | boolean | undefined>;
  try {
    ({ values } = parseArgs({
      args: own.map((a) => (a === '--fail-swap-on' ? '--fail-swap-on=true' : a)),
      strict: true,
      allowPositionals: false,
      options: {
        json: { type: 'boolean' },
        'fail-swap-on': { type: 'string' },
        timeout: { type: 'string' },
        'container-runtime-endpoint': { type: 'string' },
        help: { type: 'boolean', short: 'h' },
      },
    }));
  } catch (e) {
    throw new FlagError((e as Error).message);
  }
  if (values.help === true) return 'help';
  const swap = values['fail-swap-on'] as string | undefined;
  if (swap !== undefined && swap !== 'true' && swap !== 'false')
    throw new FlagError(`--fail-swap-on: expected true or false, got "${swap}"`);
  let timeoutMs = 5000;
  const timeout = values.timeout as string | undefined;
  if (timeout !== undefined) {
    try {
      timeoutMs = parseGoDuration(timeout);
    } catch (e) {
      throw new FlagError(`--timeout: ${(e as Error).message}`);
    }
    if (!(timeoutMs > 0)) throw new FlagError(`--timeout: expected a positive duration, got "${timeout}"`);
  }
  const cre = values['container-runtime-endpoint'] as string | undefined;
  if (cre !== undefined) rest.push('--runtime-endpoint', cre);
  const flags = parseFlags(rest);
  return {
    flags,
    settings: {
      json: values.json === true,
      failSwapOn: swap !== 'false',
      timeoutMs,
      runtimeEndpoint: flags.runtimeEndpoint,
      rootDir: flags.rootDir ?? '/var/lib/kubelet',
      rootDirGiven: flags.rootDir !== undefined,
    },
  };
}

/** Where doctor writes, and its readers (tests). */
export interface DoctorIo {
  /** The report. */
  readonly stdout: { write(text: string): unknown };
  /** Usage errors. */
  readonly stderr: { write(text: string): unknown };
  /** The environment (in-cluster detection). @default process.env */
  readonly env?: NodeJS.ProcessEnv;
  /** Replace the readers (tests); gets the real ones for the parsed flags. */
  readonly readers?: (flags: AgentFlags, real: DoctorReaders) => DoctorReaders;
}

/** Runs `nodeagent doctor` (arguments after the word `doctor`); resolves with the exit code. */
export async function runDoctorCli(argv: readonly string[], io: DoctorIo): Promise<number> {
  let cmd: DoctorCommandLine | 'help';
  try {
    cmd = parseDoctorArgs(argv);
  } catch (e) {
    if (!(e instanceof FlagError)) throw e;
    io.stderr.write(`error: ${e.message}\n\n${DOCTOR_USAGE}`);
    return 2;
  }
  if (cmd === 'help') {
    io.stdout.write(DOCTOR_USAGE);
    return 0;
  }
  const real = nodeReaders(cmd.flags, io.env ?? process.env);
  const readers = io.readers ? io.readers(cmd.flags, real) : real;
  let report: NodeDoctorReport;
  try {
    report = await runNodeDoctor(cmd.flags, cmd.settings, readers);
  } catch (e) {
    io.stderr.write(`error: doctor failed: ${e instanceof Error ? e.message : String(e)}\n`);
    return 1;
  }
  io.stdout.write(cmd.settings.json ? `${JSON.stringify(report, null, 2)}\n` : formatNodeDoctorText(report));
  return report.summary.errors + report.summary.warnings > 0 ? 1 : 0;
}
