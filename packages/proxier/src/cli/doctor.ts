/**
 * `nodeagent-proxy doctor`: reads the node (or a named network namespace) and explains what
 * the proxy rules there do and what is wrong with them, as text or `--json`.
 *
 * @module
 */
import { parseArgs } from 'node:util';
import { parseIP } from '@nodeagent/core';
import {
  BackendNotInstalledError,
  loadBackendModule,
  type ModuleLoader,
  missingBackendPackage,
} from '../backend-loader.js';
import { type ParsedCommand, parseCommandLine } from './args.js';
// Types only: the checks (and the backend parsers they use) are loaded when the doctor runs.
import type { DetectedMode, Finding, NodeView, ServiceQuery, ServiceTrace } from './doctor-checks.js';
import { type DoctorRunner, readNode, spawnDoctorRunner } from './doctor-read.js';
import { CliFailure, CliUsageError, oneLine } from './errors.js';
import { loadInput, type ReadManifest } from './load-input.js';
import { renderBackend } from './render-backend.js';

/** The `--json` document's `schemaVersion`. */
export const DOCTOR_JSON_SCHEMA_VERSION = 1;

/** The `--json` document (stable: fields are only ever added). */
export interface DoctorReport {
  /** {@link DOCTOR_JSON_SCHEMA_VERSION}. */
  readonly schemaVersion: number;
  /** The namespace read (`null`: the caller's). */
  readonly netns: string | null;
  /** Proxy modes whose rules are present. */
  readonly modes: readonly DetectedMode[];
  /** Every finding, most severe first. */
  readonly findings: readonly Finding[];
  /** `--service`: each destination traced through the live rules. */
  readonly traces: readonly ServiceTrace[];
  /** Counts by severity. */
  readonly summary: { readonly errors: number; readonly warnings: number; readonly infos: number };
}

/** Where doctor reads and writes. */
export interface DoctorIo {
  /** The report. */
  readonly stdout: { write(text: string): unknown };
  /** Usage errors. */
  readonly stderr: { write(text: string): unknown };
  /** The environment (`NODE_NAME`). */
  readonly env: NodeJS.ProcessEnv;
  /** Reads manifests (`-f`). @default the file */
  readonly readFile?: ReadManifest;
  /** Runs read-only commands on the node. @default spawned, inside `--netns` */
  readonly runner?: DoctorRunner;
  /**
   * Lists the API server's Services, EndpointSlices and Nodes as manifests text (for
   * `--kubeconfig` / in-cluster). @default `@kubernetes/client-node` with the kubeconfig
   */
  readonly listFromApi?: (kubeconfig: string | undefined) => Promise<string>;
  /** Imports a backend package by name. @default (specifier) => import(specifier) */
  readonly load?: ModuleLoader;
}

/**
 * The doctor's checks. Whatever mode runs, they parse `iptables-save` output and `nft list`
 * listings (to find every mode's rules, mixed modes and stale chains), so they need
 * `@nodeagent/iptables` and `@nodeagent/nftables`; `@nodeagent/ipvs` only for `-b ipvs` drift.
 * @throws CliFailure naming the missing packages
 */
async function loadChecks(load: ModuleLoader | undefined) {
  const missing: string[] = [];
  // An injected loader says what is installed; otherwise the checks' own import does.
  if (load) {
    for (const pkg of ['iptables', 'nftables'] as const) {
      try {
        await loadBackendModule(pkg, { load });
      } catch (e) {
        if (!(e instanceof BackendNotInstalledError)) throw e;
        missing.push(e.packageName);
      }
    }
  }
  if (missing.length === 0) {
    try {
      return await import('./doctor-checks.js');
    } catch (e) {
      const pkg = missingBackendPackage(e);
      if (pkg === undefined) throw e;
      missing.push(pkg);
    }
  }
  throw new CliFailure(
    `doctor reads iptables and nftables rules whatever the mode, so it needs @nodeagent/iptables and @nodeagent/nftables (${missing.join(', ')} not installed): npm install ${missing.join(' ')}`,
  );
}

/** Usage of `doctor`. */
export const DOCTOR_USAGE = `Usage: nodeagent-proxy doctor [--netns <name>] [--service <ns/name> [--port <name|n>]]
                              [-f <file|-> | --kubeconfig <file> | --in-cluster] [options]

Reads the proxy rules of this node (or of the network namespace /run/netns/<name>) and
explains them: which rules are present (iptables legacy and nft backends, table ip/ip6
kube-proxy, IPVS), mixed modes, rules left by another kube-proxy, stale chains, missing
prerequisites (ip_forward, br_netfilter, route_localnet, conntrack, tool versions), drift
against what the Services and EndpointSlices imply, and why a client of one Service gets
what it gets (a trace through the LIVE rules). Nothing is changed.

  --netns <name>                  read this network namespace (default: the caller's)
  --service <ns/name>             trace this Service's ClusterIP, NodePorts and external IPs
  --port <name|n>                 only this port of the Service
  --src <ip>                      the traced client's address (default 192.0.2.10)
  --json                          one JSON object (schemaVersion ${DOCTOR_JSON_SCHEMA_VERSION}) on stdout
Drift (render the objects and diff against the kernel; the mode detected on the node unless
-b is given):
  -f, --file <file|->             manifests, as for render (repeatable)
  --kubeconfig <file>             list the objects from this API server instead
  --in-cluster                    list them with the in-cluster configuration
  --node-name, --node-ip, --cluster-cidr, -b/--backend, --nftables-layout, --masquerade-all,
  --no-localhost-nodeports, --nodeport-addresses, --ip-family: as for render (--node-ip
  defaults to the addresses read from the node)
  -h, --help                      this help

Exit codes: 0 no problems (only information); 1 problems found (an error or a warning) or
the node could not be read; 2 usage error.
`;

const OPTIONS = {
  netns: { type: 'string' },
  service: { type: 'string' },
  port: { type: 'string' },
  src: { type: 'string' },
  json: { type: 'boolean' },
  kubeconfig: { type: 'string' },
  'in-cluster': { type: 'boolean' },
  help: { type: 'boolean', short: 'h' },
  // Passed on to render's parser.
  file: { type: 'string', short: 'f', multiple: true },
  backend: { type: 'string', short: 'b' },
  'node-name': { type: 'string' },
  'node-ip': { type: 'string', multiple: true },
  'cluster-cidr': { type: 'string', multiple: true },
  'nftables-layout': { type: 'string' },
  'masquerade-all': { type: 'boolean' },
  'no-localhost-nodeports': { type: 'boolean' },
  'nodeport-addresses': { type: 'string', multiple: true },
  'ip-family': { type: 'string' },
} as const;

const RENDER_FLAGS = [
  'backend',
  'node-name',
  'node-ip',
  'cluster-cidr',
  'nftables-layout',
  'masquerade-all',
  'no-localhost-nodeports',
  'nodeport-addresses',
  'ip-family',
] as const;

/** A parsed `doctor` command line. */
export interface DoctorCommand {
  /** `--netns`. */
  readonly netns: string | undefined;
  /** `--service` and `--port`. */
  readonly service: ServiceQuery | undefined;
  /** `--src`. */
  readonly sourceIP: string;
  /** `--json`. */
  readonly json: boolean;
  /** Where the objects for drift come from. */
  readonly objects:
    | { readonly from: 'none' }
    | { readonly from: 'files' }
    | { readonly from: 'api'; readonly kubeconfig: string | undefined };
  /** `-b` given explicitly. */
  readonly backend: string | undefined;
  /** The render flags, as render's command line (without `-f`). */
  readonly renderArgv: readonly string[];
  /** `-f`. */
  readonly files: readonly string[];
}

class DoctorUsageError extends CliUsageError {}

/** Parses `doctor`'s arguments (after the word `doctor`). @throws CliUsageError */
export function parseDoctorCommandLine(argv: readonly string[]): DoctorCommand | 'help' {
  let values: Record<string, string | boolean | string[] | undefined>;
  try {
    ({ values } = parseArgs({ args: [...argv], options: OPTIONS, allowPositionals: false, strict: true }));
  } catch (e) {
    throw new DoctorUsageError(oneLine((e as Error).message), 'doctor');
  }
  if (values.help === true) return 'help';
  const str = (k: string) => (typeof values[k] === 'string' ? (values[k] as string) : undefined);
  let service: ServiceQuery | undefined;
  const s = str('service');
  if (s !== undefined) {
    const m = /^([a-z0-9]([-a-z0-9]*[a-z0-9])?)\/([a-z0-9]([-a-z0-9]*[a-z0-9])?)$/.exec(s);
    if (!m)
      throw new DoctorUsageError(`--service must be <namespace>/<name>, got ${JSON.stringify(s)}`, 'doctor');
    service = { namespace: m[1]!, name: m[3]!, port: str('port') };
  } else if (str('port') !== undefined) {
    throw new DoctorUsageError('--port needs --service', 'doctor');
  }
  const src = str('src') ?? '192.0.2.10';
  if (!parseIP(src))
    throw new DoctorUsageError(`--src: ${JSON.stringify(src)} is not an IP address`, 'doctor');
  const files = (values.file as string[] | undefined) ?? [];
  const kubeconfig = str('kubeconfig');
  const inCluster = values['in-cluster'] === true;
  if ([files.length > 0, kubeconfig !== undefined, inCluster].filter(Boolean).length > 1) {
    throw new DoctorUsageError('give at most one of -f, --kubeconfig and --in-cluster', 'doctor');
  }
  const renderArgv: string[] = [];
  for (const k of RENDER_FLAGS) {
    const v = values[k];
    if (v === true) renderArgv.push(`--${k}`);
    else if (typeof v === 'string') renderArgv.push(`--${k}`, v);
    else if (Array.isArray(v)) for (const x of v) renderArgv.push(`--${k}`, x);
  }
  return {
    netns: str('netns'),
    service,
    sourceIP: parseIP(src)!.ip,
    json: values.json === true,
    objects:
      files.length > 0
        ? { from: 'files' }
        : kubeconfig !== undefined || inCluster
          ? { from: 'api', kubeconfig }
          : { from: 'none' },
    backend: str('backend'),
    renderArgv,
    files,
  };
}

const SEVERITY_ORDER = { error: 0, warning: 1, info: 2 } as const;

/** Reads the node and builds the report. */
export async function runDoctor(cmd: DoctorCommand, io: DoctorIo): Promise<DoctorReport> {
  if (cmd.netns !== undefined && io.runner === undefined) {
    const { existsSync } = await import('node:fs');
    if (!existsSync(`/run/netns/${cmd.netns}`)) {
      throw new CliFailure(
        `network namespace ${JSON.stringify(cmd.netns)} does not exist (no /run/netns/${cmd.netns})`,
      );
    }
  }
  const checks = await loadChecks(io.load);
  const { prerequisiteFindings, presenceFindings, staleChainFindings, traceService, viewNode } = checks;
  const runner = io.runner ?? spawnDoctorRunner(cmd.netns);
  const readings = await readNode(runner);
  const view = viewNode(readings);
  const findings: Finding[] = [
    ...presenceFindings(view),
    ...staleChainFindings(view),
    ...prerequisiteFindings(readings, view),
  ];
  if (cmd.objects.from !== 'none')
    findings.push(...(await drift(cmd, io, view, readings, checks.driftFindings)));
  let traces: ServiceTrace[] = [];
  if (cmd.service !== undefined) {
    const nodeIPs = nodeIPArgs(cmd.renderArgv);
    const t = traceService(
      view,
      readings,
      cmd.service,
      cmd.sourceIP,
      nodeIPs.length > 0 ? nodeIPs : readings.addresses,
    );
    traces = t.traces;
    findings.push(...t.findings);
  }
  const sorted = findings
    .map((f, i) => ({ f, i }))
    .sort((a, b) => SEVERITY_ORDER[a.f.severity] - SEVERITY_ORDER[b.f.severity] || a.i - b.i)
    .map((x) => x.f);
  return {
    schemaVersion: DOCTOR_JSON_SCHEMA_VERSION,
    netns: cmd.netns ?? null,
    modes: view.modes,
    findings: sorted,
    traces,
    summary: {
      errors: sorted.filter((f) => f.severity === 'error').length,
      warnings: sorted.filter((f) => f.severity === 'warning').length,
      infos: sorted.filter((f) => f.severity === 'info').length,
    },
  };
}

function nodeIPArgs(argv: readonly string[]): string[] {
  const out: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    if (argv[i] === '--node-ip')
      out.push(
        ...argv[i + 1]!.split(',')
          .map((s) => s.trim())
          .filter(Boolean),
      );
  }
  return out;
}

async function drift(
  cmd: DoctorCommand,
  io: DoctorIo,
  view: NodeView,
  readings: Awaited<ReturnType<typeof readNode>>,
  driftFindings: typeof import('./doctor-checks.js')['driftFindings'],
): Promise<Finding[]> {
  const mode = cmd.backend ?? (view.modes.length === 1 ? view.modes[0] : undefined);
  if (mode === undefined) {
    return [
      {
        id: 'drift-skipped',
        severity: 'info',
        message: `drift not checked: ${view.modes.length === 0 ? 'no proxy mode detected' : `several modes present (${view.modes.join(', ')})`}; give -b iptables|nftables|ipvs`,
      },
    ];
  }
  const argv = [...cmd.renderArgv];
  if (cmd.backend === undefined) argv.push('--backend', mode);
  if (nodeIPArgs(argv).length === 0 && readings.addresses.length > 0)
    argv.push('--node-ip', readings.addresses.join(','));
  if (!argv.includes('--nftables-layout') && mode === 'nftables') {
    const t = view.nft.get('ip') ?? view.nft.get('ip6');
    if (t && [...t.chains.keys()].some((c) => c.startsWith('cluster-ip-') || c.startsWith('lb-'))) {
      argv.push('--nftables-layout', 'optimized');
    }
  }
  let read: ReadManifest;
  let files: readonly string[];
  if (cmd.objects.from === 'api') {
    const list = io.listFromApi ?? listFromApi;
    const text = await list(cmd.objects.kubeconfig);
    read = async () => text;
    files = ['<api>'];
  } else {
    read = io.readFile ?? (async (p) => (await import('node:fs/promises')).readFile(p, 'utf8'));
    files = cmd.files;
  }
  const fileArgs = files.flatMap((f) => ['-f', f]);
  let parsed: ParsedCommand;
  try {
    parsed = parseCommandLine(['render', ...fileArgs, ...argv], io.env);
  } catch (e) {
    if (e instanceof CliUsageError) throw new DoctorUsageError(e.message, 'doctor');
    throw e;
  }
  if (parsed.command !== 'render') throw new DoctorUsageError('unexpected --help', 'doctor');
  const input = await loadInput(parsed.input, read, 'render');
  const rules = await renderBackend(parsed.backend, input, undefined, io.load);
  const problems = [...input.problems, ...rules.problems].map(
    (p): Finding => ({
      id: 'invalid-object',
      severity: 'warning',
      message: p,
      remedy: 'fix the object; the proxy skips it too',
    }),
  );
  return [...problems, ...driftFindings(view, rules, readings)];
}

/** Lists Services, EndpointSlices and Nodes from the API server as one v1 List (JSON). */
async function listFromApi(kubeconfig: string | undefined): Promise<string> {
  const k8s = await import('@kubernetes/client-node');
  const kc = new k8s.KubeConfig();
  try {
    if (kubeconfig !== undefined) kc.loadFromFile(kubeconfig);
    else kc.loadFromCluster();
  } catch (e) {
    throw new CliFailure(`cannot load the API server configuration: ${oneLine((e as Error).message)}`);
  }
  try {
    const core = kc.makeApiClient(k8s.CoreV1Api);
    const disc = kc.makeApiClient(k8s.DiscoveryV1Api);
    const [svcs, slices, nodes] = await Promise.all([
      core.listServiceForAllNamespaces(),
      disc.listEndpointSliceForAllNamespaces(),
      core.listNode(),
    ]);
    const items = [
      ...svcs.items.map((o) => ({ ...o, apiVersion: 'v1', kind: 'Service' })),
      ...slices.items.map((o) => ({ ...o, apiVersion: 'discovery.k8s.io/v1', kind: 'EndpointSlice' })),
      ...nodes.items.map((o) => ({ ...o, apiVersion: 'v1', kind: 'Node' })),
    ];
    return JSON.stringify({ apiVersion: 'v1', kind: 'List', items });
  } catch (e) {
    throw new CliFailure(
      `cannot list Services/EndpointSlices/Nodes from the API server: ${oneLine((e as Error).message)}`,
    );
  }
}

const MARK = { error: 'ERROR', warning: 'WARN ', info: 'info ' } as const;

/** The text form: one line per finding with its severity, the remedy indented below. */
export function formatDoctorText(r: DoctorReport): string {
  const lines = [
    `nodeagent-proxy doctor: ${r.netns === null ? 'this network namespace' : `netns ${r.netns}`}; proxy modes with rules: ${r.modes.length > 0 ? r.modes.join(', ') : '(none)'}`,
  ];
  for (const f of r.findings) {
    lines.push(`${MARK[f.severity]} [${f.id}] ${f.message}`);
    if (f.remedy !== undefined) lines.push(`      fix: ${f.remedy}`);
  }
  lines.push(
    `${r.summary.errors} error(s), ${r.summary.warnings} warning(s)${r.summary.errors + r.summary.warnings === 0 ? ': no problems found' : ''}`,
  );
  return `${lines.join('\n')}\n`;
}

/**
 * Runs `doctor` with its arguments (after the word `doctor`) and resolves with the exit
 * code: 0 no problems, 1 problems found or the node could not be read, 2 usage error.
 */
export async function runDoctorCli(argv: readonly string[], io: DoctorIo): Promise<number> {
  let cmd: DoctorCommand | 'help';
  try {
    cmd = parseDoctorCommandLine(argv);
  } catch (e) {
    io.stderr.write(
      `nodeagent-proxy: error: ${oneLine((e as Error).message)}\n${DOCTOR_USAGE.split('\n\n')[0]}\nRun 'nodeagent-proxy doctor --help' for the options.\n`,
    );
    return 2;
  }
  if (cmd === 'help') {
    io.stdout.write(DOCTOR_USAGE);
    return 0;
  }
  try {
    const report = await runDoctor(cmd, io);
    io.stdout.write(cmd.json ? `${JSON.stringify(report)}\n` : formatDoctorText(report));
    return report.summary.errors + report.summary.warnings > 0 ? 1 : 0;
  } catch (e) {
    if (e instanceof DoctorUsageError) {
      io.stderr.write(
        `nodeagent-proxy: error: ${oneLine(e.message)}\nRun 'nodeagent-proxy doctor --help' for the options.\n`,
      );
      return 2;
    }
    if (e instanceof CliFailure) {
      io.stderr.write(`nodeagent-proxy: error: ${e.message}\n`);
      for (const d of e.details) io.stderr.write(`  ${d}\n`);
      return 1;
    }
    io.stderr.write(`nodeagent-proxy: error: ${oneLine(e instanceof Error ? e.message : String(e))}\n`);
    return 1;
  }
}
