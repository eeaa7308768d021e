/**
 * `nodeagent-proxy run`'s configuration: kube-proxy's command-line flags and its
 * `KubeProxyConfiguration` file (`kubeproxy.config.k8s.io/v1alpha1`), resolved the way
 * kube-proxy resolves them — defaults, then either the flags or (with `--config`) the file,
 * where only `--hostname-override` and `--v` still apply on top of the file — and validated
 * with kube-proxy's field paths and wording.
 *
 * @module
 */
import { parseArgs } from 'node:util';
import { InvalidDurationError, parseCIDR, parseGoDuration, parseIP } from '@nodeagent/core';
import { parseAllDocuments } from 'yaml';
import { loadBackendModule, type ModuleLoader, type ProxyMode } from '../backend-loader.js';
import { CliUsageError, oneLine } from './errors.js';
import { validateNodePortAddresses } from './kube-proxy-flags.js';

export type { ProxyMode };

/** kube-proxy's `detectLocalMode` values. */
export type DetectLocalMode = 'ClusterCIDR' | 'NodeCIDR' | 'BridgeInterface' | 'InterfaceNamePrefix';

/** The resolved configuration of `nodeagent-proxy run` (kube-proxy's, with the fields `run` uses). */
export interface RunConfig {
  /** `mode` / `--proxy-mode`; blank means iptables, as kube-proxy on Linux. */
  readonly mode: ProxyMode;
  /** `clientConnection.kubeconfig` / `--kubeconfig`; `''` = `--master` or the in-cluster configuration. */
  readonly kubeconfig: string;
  /** `--master`: overrides the API server address of the kubeconfig. */
  readonly master: string;
  /**
   * `clientConnection.qps` / `--kube-api-qps`: requests per second to the API server
   * (client-go's: 0 → 5, negative → no client-side limit). @default 5
   */
  readonly kubeApiQps: number;
  /** `clientConnection.burst` / `--kube-api-burst`: requests at once above the QPS (0 → 10). @default 10 */
  readonly kubeApiBurst: number;
  /** `hostnameOverride` / `--hostname-override`, lower-cased; `''` = the host name. */
  readonly hostnameOverride: string;
  /** `bindAddress` / `--bind-address`: the node's primary IP when not `0.0.0.0`/`::`. */
  readonly bindAddress: string;
  /** `healthzBindAddress` / `--healthz-bind-address`; `''` disables the healthz server. */
  readonly healthzBindAddress: string;
  /** `metricsBindAddress` / `--metrics-bind-address`. */
  readonly metricsBindAddress: string;
  /** `clusterCIDR` / `--cluster-cidr` (one per family, canonical). */
  readonly clusterCIDRs: readonly string[];
  /** `nodePortAddresses` / `--nodeport-addresses`: canonical CIDRs and the keywords `primary`, `localhost`, `all`; empty = the mode's default. */
  readonly nodePortAddresses: readonly string[];
  /** `detectLocalMode` / `--detect-local-mode`; blank = ClusterCIDR when a cluster CIDR is set. */
  readonly detectLocalMode: DetectLocalMode | '';
  /** `detectLocal.bridgeInterface` / `--pod-bridge-interface`. */
  readonly bridgeInterface: string;
  /** `detectLocal.interfaceNamePrefix` / `--pod-interface-name-prefix`. */
  readonly interfaceNamePrefix: string;
  /** The selected mode's `masqueradeAll` / `--masquerade-all`. */
  readonly masqueradeAll: boolean;
  /** The selected mode's `masqueradeBit` / `--iptables-masquerade-bit` (0-31). */
  readonly masqueradeBit: number;
  /** `iptables.localhostNodePorts` / `--iptables-localhost-nodeports`. */
  readonly localhostNodePorts: boolean;
  /** The selected mode's `syncPeriod` in ms. */
  readonly syncPeriodMs: number;
  /** The selected mode's `minSyncPeriod` in ms. */
  readonly minSyncPeriodMs: number;
  /** `configSyncPeriod` / `--config-sync-period` in ms (the informers' resync). */
  readonly configSyncPeriodMs: number;
  /** `ipvs.*` / `--ipvs-*`. */
  readonly ipvs: {
    readonly scheduler: string;
    readonly excludeCIDRs: readonly string[];
    readonly strictARP: boolean;
    readonly tcpTimeoutMs: number;
    readonly tcpFinTimeoutMs: number;
    readonly udpTimeoutMs: number;
  };
  /** `logging.verbosity` / `--v`. */
  readonly verbosity: number;
  /** The configuration as `/configz` shows it (the file's or the flags' values, defaulted). */
  readonly configz: Record<string, unknown>;
}

/** `run`'s command line, resolved. */
export interface RunCommand {
  /** Discriminator. */
  readonly command: 'run';
  /** The resolved configuration. */
  readonly config: RunConfig;
  /** `--cleanup`: remove every mode's rules, then exit. */
  readonly cleanup: boolean;
  /** Problems that do not stop kube-proxy (unknown config fields: lenient decoding, as kube-proxy). */
  readonly warnings: readonly string[];
}

/** The flags of `run` (kube-proxy's names). */
export const RUN_OPTIONS = {
  config: { type: 'string' },
  'proxy-mode': { type: 'string' },
  kubeconfig: { type: 'string' },
  master: { type: 'string' },
  'kube-api-qps': { type: 'string' },
  'kube-api-burst': { type: 'string' },
  'hostname-override': { type: 'string' },
  'bind-address': { type: 'string' },
  'healthz-bind-address': { type: 'string' },
  'metrics-bind-address': { type: 'string' },
  'cluster-cidr': { type: 'string' },
  'nodeport-addresses': { type: 'string', multiple: true },
  'detect-local-mode': { type: 'string' },
  'pod-bridge-interface': { type: 'string' },
  'pod-interface-name-prefix': { type: 'string' },
  'masquerade-all': { type: 'string' },
  'iptables-masquerade-bit': { type: 'string' },
  'iptables-localhost-nodeports': { type: 'string' },
  'iptables-sync-period': { type: 'string' },
  'iptables-min-sync-period': { type: 'string' },
  'ipvs-sync-period': { type: 'string' },
  'ipvs-min-sync-period': { type: 'string' },
  'ipvs-scheduler': { type: 'string' },
  'ipvs-exclude-cidrs': { type: 'string', multiple: true },
  'ipvs-strict-arp': { type: 'string' },
  'ipvs-tcp-timeout': { type: 'string' },
  'ipvs-tcpfin-timeout': { type: 'string' },
  'ipvs-udp-timeout': { type: 'string' },
  'config-sync-period': { type: 'string' },
  cleanup: { type: 'string' },
  v: { type: 'string', short: 'v' },
  help: { type: 'boolean', short: 'h' },
} as const;

/** pflag boolean flags: `--flag` alone means true; `--flag=false` is allowed. */
const BOOLEAN_FLAGS = new Set([
  'masquerade-all',
  'iptables-localhost-nodeports',
  'ipvs-strict-arp',
  'cleanup',
]);

/** The API version and kind of kube-proxy's configuration file. */
export const KUBE_PROXY_CONFIG_API_VERSION = 'kubeproxy.config.k8s.io/v1alpha1';
const KIND = 'KubeProxyConfiguration';

/** A configuration file that cannot be used: read, decoded or validated. Exit code 1. */
export class KubeProxyConfigError extends Error {
  override readonly name = 'KubeProxyConfigError';
}

type Values = Record<string, string | boolean | (string | boolean)[] | undefined>;

/** pflag lets `--bool` stand alone; node's parser wants a value for string options, so fill it in. */
function normaliseBooleans(argv: readonly string[]): string[] {
  const out: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    const m = /^--([a-z-]+)$/.exec(a);
    if (m && BOOLEAN_FLAGS.has(m[1]!)) {
      out.push(`${a}=true`);
      continue;
    }
    out.push(a);
  }
  return out;
}

/** Go's `strconv.ParseBool`, as pflag parses boolean flags. */
function parseBool(text: string, flag: string): boolean {
  if (['1', 't', 'T', 'true', 'TRUE', 'True'].includes(text)) return true;
  if (['0', 'f', 'F', 'false', 'FALSE', 'False'].includes(text)) return false;
  throw new CliUsageError(
    `invalid argument ${JSON.stringify(text)} for "--${flag}" flag: strconv.ParseBool: parsing ${JSON.stringify(text)}: invalid syntax`,
    'run',
  );
}

function flagDuration(text: string, flag: string): number {
  try {
    return parseGoDuration(text.trim());
  } catch (e) {
    if (!(e instanceof InvalidDurationError)) throw e;
    throw new CliUsageError(
      `invalid argument ${JSON.stringify(text)} for "--${flag}" flag: time: invalid duration ${JSON.stringify(text)}`,
      'run',
    );
  }
}

function flagInt(text: string, flag: string): number {
  if (!/^-?[0-9]+$/.test(text.trim())) {
    throw new CliUsageError(
      `invalid argument ${JSON.stringify(text)} for "--${flag}" flag: strconv.ParseInt: parsing ${JSON.stringify(text)}: invalid syntax`,
      'run',
    );
  }
  return Number(text.trim());
}

function flagFloat(text: string, flag: string): number {
  const t = text.trim();
  const n = Number(t);
  if (t === '' || !Number.isFinite(n)) {
    throw new CliUsageError(
      `invalid argument ${JSON.stringify(text)} for "--${flag}" flag: strconv.ParseFloat: parsing ${JSON.stringify(text)}: invalid syntax`,
      'run',
    );
  }
  return n;
}

function splitList(v: unknown): string[] {
  const raw = Array.isArray(v) ? v : typeof v === 'string' ? [v] : [];
  return raw
    .flatMap((s) => String(s).split(','))
    .map((s) => s.trim())
    .filter((s) => s !== '');
}

/** kube-proxy's v1alpha1 defaults (`SetDefaults_KubeProxyConfiguration`), as the file's shape. */
export function defaultKubeProxyConfiguration(): Record<string, unknown> {
  return {
    apiVersion: KUBE_PROXY_CONFIG_API_VERSION,
    kind: KIND,
    bindAddress: '0.0.0.0',
    clientConnection: {
      acceptContentTypes: '',
      burst: 10,
      contentType: 'application/vnd.kubernetes.protobuf',
      kubeconfig: '',
      qps: 5,
    },
    clusterCIDR: '',
    configSyncPeriod: '15m0s',
    conntrack: {
      maxPerCore: 32768,
      min: 131072,
      tcpCloseWaitTimeout: '1h0m0s',
      tcpEstablishedTimeout: '24h0m0s',
      udpStreamTimeout: '0s',
      udpTimeout: '0s',
    },
    detectLocal: { bridgeInterface: '', interfaceNamePrefix: '' },
    detectLocalMode: '',
    healthzBindAddress: '0.0.0.0:10256',
    hostnameOverride: '',
    iptables: {
      localhostNodePorts: true,
      masqueradeAll: false,
      masqueradeBit: 14,
      minSyncPeriod: '1s',
      syncPeriod: '30s',
    },
    ipvs: {
      excludeCIDRs: null,
      minSyncPeriod: '0s',
      scheduler: '',
      strictARP: false,
      syncPeriod: '30s',
      tcpFinTimeout: '0s',
      tcpTimeout: '0s',
      udpTimeout: '0s',
    },
    logging: { verbosity: 0 },
    metricsBindAddress: '127.0.0.1:10249',
    mode: '',
    nftables: { masqueradeAll: false, masqueradeBit: 14, minSyncPeriod: '1s', syncPeriod: '30s' },
    nodePortAddresses: null,
    oomScoreAdj: -999,
  };
}

/** Fields of the file that `run` reads; others are accepted (as kube-proxy decodes them) but have no effect. */
const KNOWN_TOP = new Set([
  'apiVersion',
  'kind',
  'featureGates',
  'clientConnection',
  'logging',
  'hostnameOverride',
  'bindAddress',
  'healthzBindAddress',
  'metricsBindAddress',
  'bindAddressHardFail',
  'enableProfiling',
  'showHiddenMetricsForVersion',
  'mode',
  'iptables',
  'ipvs',
  'nftables',
  'winkernel',
  'detectLocalMode',
  'detectLocal',
  'clusterCIDR',
  'nodePortAddresses',
  'oomScoreAdj',
  'conntrack',
  'configSyncPeriod',
  'portRange',
  'windowsRunAsService',
]);

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** Deep merge of a decoded file over the defaults (objects merge; everything else replaces). */
function mergeOver(base: Record<string, unknown>, over: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = { ...base };
  for (const [k, v] of Object.entries(over)) {
    out[k] = isObject(v) && isObject(base[k]) ? mergeOver(base[k] as Record<string, unknown>, v) : v;
  }
  return out;
}

/**
 * Decodes a `KubeProxyConfiguration` file (YAML or JSON) over kube-proxy's defaults.
 * Unknown fields are reported in `warnings` and ignored (kube-proxy's lenient decoding of
 * v1alpha1); a wrong `apiVersion`/`kind` or a field of the wrong type is an error.
 * @throws KubeProxyConfigError naming the file and the field.
 */
export function decodeKubeProxyConfiguration(
  text: string,
  path: string,
): { config: Record<string, unknown>; warnings: string[] } {
  let docs: unknown[];
  try {
    const parsed = parseAllDocuments(text);
    if (!Array.isArray(parsed)) throw new Error('not a YAML stream');
    for (const d of parsed) if (d.errors.length > 0) throw d.errors[0]!;
    docs = parsed.map((d) => d.toJS()).filter((d) => d !== null && d !== undefined);
  } catch (e) {
    throw new KubeProxyConfigError(
      `failed to decode ${path}: ${oneLine(e instanceof Error ? e.message : String(e))}`,
    );
  }
  if (docs.length !== 1 || !isObject(docs[0])) {
    throw new KubeProxyConfigError(`failed to decode ${path}: expected one ${KIND} object`);
  }
  const obj = docs[0];
  if (obj.kind !== KIND || obj.apiVersion !== KUBE_PROXY_CONFIG_API_VERSION) {
    throw new KubeProxyConfigError(
      `failed to decode ${path}: no kind ${JSON.stringify(String(obj.kind ?? ''))} is registered for version ${JSON.stringify(String(obj.apiVersion ?? ''))}; ` +
        `want apiVersion: ${KUBE_PROXY_CONFIG_API_VERSION}, kind: ${KIND}`,
    );
  }
  const warnings = Object.keys(obj)
    .filter((k) => !KNOWN_TOP.has(k))
    .map((k) => `${path}: unknown field ${JSON.stringify(k)} (ignored; lenient decoding as kube-proxy)`);
  return { config: mergeOver(defaultKubeProxyConfiguration(), obj), warnings };
}

/** Typed reads from the decoded configuration, naming the field on a wrong type. */
class FieldReader {
  constructor(
    readonly root: Record<string, unknown>,
    readonly source: string,
  ) {}
  #at(path: string): unknown {
    let v: unknown = this.root;
    for (const p of path.split('.')) v = isObject(v) ? v[p] : undefined;
    return v;
  }
  #wrong(path: string, want: string, v: unknown): never {
    throw new KubeProxyConfigError(
      `${this.source}: ${path}: expected ${want}, got ${Array.isArray(v) ? 'an array' : typeof v} ${oneLine(JSON.stringify(v) ?? '')}`,
    );
  }
  string(path: string): string {
    const v = this.#at(path);
    if (v === undefined || v === null) return '';
    if (typeof v !== 'string') this.#wrong(path, 'a string', v);
    return v;
  }
  bool(path: string): boolean {
    const v = this.#at(path);
    if (v === undefined || v === null) return false;
    if (typeof v !== 'boolean') this.#wrong(path, 'a boolean', v);
    return v;
  }
  number(path: string): number {
    const v = this.#at(path);
    if (typeof v !== 'number' || !Number.isFinite(v)) this.#wrong(path, 'a number', v);
    return v;
  }
  int(path: string): number {
    const v = this.#at(path);
    if (typeof v !== 'number' || !Number.isInteger(v)) this.#wrong(path, 'an integer', v);
    return v;
  }
  strings(path: string): string[] {
    const v = this.#at(path);
    if (v === undefined || v === null) return [];
    if (!Array.isArray(v) || v.some((x) => typeof x !== 'string')) this.#wrong(path, 'a list of strings', v);
    return v as string[];
  }
  durationMs(path: string): number {
    const text = this.string(path);
    try {
      return parseGoDuration(text === '' ? '0s' : text);
    } catch (e) {
      if (!(e instanceof InvalidDurationError)) throw e;
      throw new KubeProxyConfigError(
        `${this.source}: ${path}: time: invalid duration ${JSON.stringify(text)}`,
      );
    }
  }
}

/** Applies the flags the user gave (only those) onto the defaults' shape, as kube-proxy's flag set writes into its config. */
function applyFlags(base: Record<string, unknown>, values: Values): Record<string, unknown> {
  const c = structuredClone(base) as Record<string, Record<string, unknown> & unknown>;
  const set = (path: string, v: unknown) => {
    const parts = path.split('.');
    let o = c as Record<string, unknown>;
    for (const p of parts.slice(0, -1)) o = o[p] as Record<string, unknown>;
    o[parts.at(-1)!] = v;
  };
  const s = (flag: string) => (typeof values[flag] === 'string' ? (values[flag] as string) : undefined);
  const str: [string, string][] = [
    ['proxy-mode', 'mode'],
    ['kubeconfig', 'clientConnection.kubeconfig'],
    ['bind-address', 'bindAddress'],
    ['healthz-bind-address', 'healthzBindAddress'],
    ['metrics-bind-address', 'metricsBindAddress'],
    ['cluster-cidr', 'clusterCIDR'],
    ['detect-local-mode', 'detectLocalMode'],
    ['pod-bridge-interface', 'detectLocal.bridgeInterface'],
    ['pod-interface-name-prefix', 'detectLocal.interfaceNamePrefix'],
    ['ipvs-scheduler', 'ipvs.scheduler'],
  ];
  for (const [flag, path] of str) if (s(flag) !== undefined) set(path, s(flag));
  const durations: [string, string[]][] = [
    ['iptables-sync-period', ['iptables.syncPeriod', 'nftables.syncPeriod']],
    ['iptables-min-sync-period', ['iptables.minSyncPeriod', 'nftables.minSyncPeriod']],
    ['ipvs-sync-period', ['ipvs.syncPeriod']],
    ['ipvs-min-sync-period', ['ipvs.minSyncPeriod']],
    ['ipvs-tcp-timeout', ['ipvs.tcpTimeout']],
    ['ipvs-tcpfin-timeout', ['ipvs.tcpFinTimeout']],
    ['ipvs-udp-timeout', ['ipvs.udpTimeout']],
    ['config-sync-period', ['configSyncPeriod']],
  ];
  for (const [flag, paths] of durations) {
    const t = s(flag);
    if (t === undefined) continue;
    flagDuration(t, flag);
    for (const p of paths) set(p, t.trim());
  }
  const bools: [string, string[]][] = [
    ['masquerade-all', ['iptables.masqueradeAll', 'nftables.masqueradeAll']],
    ['iptables-localhost-nodeports', ['iptables.localhostNodePorts']],
    ['ipvs-strict-arp', ['ipvs.strictARP']],
  ];
  for (const [flag, paths] of bools) {
    const t = s(flag);
    if (t === undefined) continue;
    const b = parseBool(t, flag);
    for (const p of paths) set(p, b);
  }
  const qps = s('kube-api-qps');
  if (qps !== undefined) set('clientConnection.qps', flagFloat(qps, 'kube-api-qps'));
  const burst = s('kube-api-burst');
  if (burst !== undefined) set('clientConnection.burst', flagInt(burst, 'kube-api-burst'));
  const bit = s('iptables-masquerade-bit');
  if (bit !== undefined) {
    const n = flagInt(bit, 'iptables-masquerade-bit');
    set('iptables.masqueradeBit', n);
    set('nftables.masqueradeBit', n);
  }
  if (values['nodeport-addresses'] !== undefined)
    set('nodePortAddresses', splitList(values['nodeport-addresses']));
  if (values['ipvs-exclude-cidrs'] !== undefined)
    set('ipvs.excludeCIDRs', splitList(values['ipvs-exclude-cidrs']));
  return c;
}

function invalid(path: string, value: unknown, detail: string): string {
  return `${path}: Invalid value: ${JSON.stringify(value)}: ${detail}`;
}

function validateHostPort(text: string, path: string): string[] {
  const m = /^(?:\[([^\]]*)\]|([^:]*)):([^:]*)$/.exec(text);
  if (!m) return [invalid(path, text, 'must be IP:port')];
  const host = m[1] ?? m[2] ?? '';
  const out: string[] = [];
  if (!parseIP(host)) out.push(invalid(path, host, 'must be a valid IP'));
  const port = m[3]!;
  if (!/^[0-9]+$/.test(port) || Number(port) < 1 || Number(port) > 65535)
    out.push(invalid(path, port, 'must be a valid port'));
  return out;
}

/** Resolves and validates the decoded configuration into a {@link RunConfig}. */
function resolve(
  raw: Record<string, unknown>,
  source: string,
  hostnameOverride: string | undefined,
  v: string | undefined,
  schedulerProblem: (scheduler: string) => string | undefined,
): RunConfig {
  const r = new FieldReader(raw, source);
  const problems: string[] = [];
  const P = 'KubeProxyConfiguration';
  const modeText = r.string('mode');
  if (modeText !== '' && modeText !== 'iptables' && modeText !== 'nftables' && modeText !== 'ipvs') {
    problems.push(
      `${P}.Mode: Unsupported value: ${JSON.stringify(modeText)}: supported values: "iptables", "ipvs", "nftables"`,
    );
  }
  const mode: ProxyMode = modeText === 'nftables' || modeText === 'ipvs' ? modeText : 'iptables';
  const modeKey = mode;
  const modePath = `${P}.${mode === 'iptables' ? 'KubeProxyIPTablesConfiguration' : mode === 'nftables' ? 'KubeProxyNFTablesConfiguration' : 'KubeProxyIPVSConfiguration'}`;
  const syncPeriodMs = r.durationMs(`${modeKey}.syncPeriod`);
  const minSyncPeriodMs = r.durationMs(`${modeKey}.minSyncPeriod`);
  if (syncPeriodMs <= 0)
    problems.push(
      invalid(`${modePath}.SyncPeriod`, r.string(`${modeKey}.syncPeriod`), 'must be greater than 0'),
    );
  if (minSyncPeriodMs < 0)
    problems.push(
      invalid(
        `${modePath}.MinSyncPeriod`,
        r.string(`${modeKey}.minSyncPeriod`),
        'must be greater than or equal to 0',
      ),
    );
  if (minSyncPeriodMs > syncPeriodMs && syncPeriodMs > 0)
    problems.push(
      invalid(
        `${modePath}.SyncPeriod`,
        r.string(`${modeKey}.minSyncPeriod`),
        `must be greater than or equal to ${modePath}.MinSyncPeriod`,
      ),
    );
  const bitKey = mode === 'nftables' ? 'nftables' : 'iptables';
  const masqueradeBit = r.int(`${bitKey}.masqueradeBit`);
  if (masqueradeBit < 0 || masqueradeBit > 31)
    problems.push(
      invalid(
        `${P}.KubeProxyIPTablesConfiguration.MasqueradeBit`,
        masqueradeBit,
        'must be within the range [0, 31]',
      ),
    );
  const bindAddress = r.string('bindAddress');
  if (!parseIP(bindAddress))
    problems.push(
      invalid(`${P}.BindAddress`, bindAddress, 'not a valid textual representation of an IP address'),
    );
  const healthzBindAddress = r.string('healthzBindAddress');
  if (healthzBindAddress !== '')
    problems.push(...validateHostPort(healthzBindAddress, `${P}.HealthzBindAddress`));
  const metricsBindAddress = r.string('metricsBindAddress');
  problems.push(...validateHostPort(metricsBindAddress, `${P}.MetricsBindAddress`));
  const clusterCIDRText = r.string('clusterCIDR');
  const clusterCIDRs: string[] = [];
  if (clusterCIDRText !== '') {
    const parts = clusterCIDRText.split(',');
    const parsed = parts.map((p) => parseCIDR(p.trim()));
    if (parts.length > 2) {
      problems.push(
        invalid(
          `${P}.ClusterCIDR`,
          clusterCIDRText,
          'only one CIDR allowed or a valid DualStack CIDR (e.g. 10.100.0.0/16,fde4:8dba:82e1::/48)',
        ),
      );
    } else if (parts.length === 2 && (!parsed[0] || !parsed[1] || parsed[0].family === parsed[1].family)) {
      problems.push(
        invalid(
          `${P}.ClusterCIDR`,
          clusterCIDRText,
          'must be a valid DualStack CIDR (e.g. 10.100.0.0/16,fde4:8dba:82e1::/48)',
        ),
      );
    } else if (parts.length === 1 && !parsed[0]) {
      problems.push(
        invalid(
          `${P}.ClusterCIDR`,
          clusterCIDRText,
          'must be a valid CIDR block (e.g. 10.100.0.0/16 or fde4:8dba:82e1::/48)',
        ),
      );
    } else {
      for (const c of parsed) if (c) clusterCIDRs.push(c.cidr);
    }
  }
  const npa = validateNodePortAddresses(r.strings('nodePortAddresses'));
  problems.push(...npa.problems);
  const nodePortAddresses = npa.values;
  const dlm = r.string('detectLocalMode');
  const modes = ['ClusterCIDR', 'NodeCIDR', 'BridgeInterface', 'InterfaceNamePrefix'];
  if (dlm !== '' && !modes.includes(dlm))
    problems.push(
      `${P}.DetectLocalMode: Unsupported value: ${JSON.stringify(dlm)}: supported values: ${modes.map((m) => JSON.stringify(m)).join(', ')}`,
    );
  const bridgeInterface = r.string('detectLocal.bridgeInterface');
  const interfaceNamePrefix = r.string('detectLocal.interfaceNamePrefix');
  if (dlm === 'BridgeInterface' && bridgeInterface === '')
    problems.push(
      `${P}.DetectLocal.BridgeInterface: Required value: must not be empty with detectLocalMode BridgeInterface`,
    );
  if (dlm === 'InterfaceNamePrefix' && interfaceNamePrefix === '')
    problems.push(
      `${P}.DetectLocal.InterfaceNamePrefix: Required value: must not be empty with detectLocalMode InterfaceNamePrefix`,
    );
  const ipvsPath = `${P}.KubeProxyIPVSConfiguration`;
  const scheduler = r.string('ipvs.scheduler');
  const excludeCIDRs: string[] = [];
  const ipvsTimeouts = {
    tcpTimeoutMs: r.durationMs('ipvs.tcpTimeout'),
    tcpFinTimeoutMs: r.durationMs('ipvs.tcpFinTimeout'),
    udpTimeoutMs: r.durationMs('ipvs.udpTimeout'),
  };
  if (mode === 'ipvs') {
    const sp = schedulerProblem(scheduler);
    if (sp !== undefined) problems.push(invalid(`${ipvsPath}.Scheduler`, scheduler, sp));
    for (const t of r.strings('ipvs.excludeCIDRs')) {
      const c = parseCIDR(t);
      if (!c)
        problems.push(
          invalid(`${ipvsPath}.ExcludeCidrs`, r.strings('ipvs.excludeCIDRs'), 'must be a valid IP block'),
        );
      else excludeCIDRs.push(c.cidr);
    }
    for (const [k, f] of [
      ['tcpTimeoutMs', 'TCPTimeout'],
      ['tcpFinTimeoutMs', 'TCPFinTimeout'],
      ['udpTimeoutMs', 'UDPTimeout'],
    ] as const) {
      if (ipvsTimeouts[k] < 0)
        problems.push(invalid(`${ipvsPath}.${f}`, ipvsTimeouts[k], 'must be greater than or equal to 0'));
    }
  }
  const kubeApiQps = r.number('clientConnection.qps');
  const kubeApiBurst = r.int('clientConnection.burst');
  if (kubeApiBurst < 0)
    problems.push(invalid(`${P}.ClientConnection.Burst`, kubeApiBurst, 'must be greater than or equal to 0'));
  const configSyncPeriodMs = r.durationMs('configSyncPeriod');
  if (configSyncPeriodMs <= 0)
    problems.push(invalid(`${P}.ConfigSyncPeriod`, r.string('configSyncPeriod'), 'must be greater than 0'));
  let verbosity = r.int('logging.verbosity');
  if (v !== undefined) verbosity = flagInt(v, 'v');
  let hostname = r.string('hostnameOverride');
  if (hostnameOverride !== undefined) {
    const h = hostnameOverride.trim();
    if (h === '') throw new CliUsageError('empty hostname-override is invalid', 'run');
    hostname = h;
  }
  if (problems.length > 0) throw new KubeProxyConfigError(problems.join('; '));
  return {
    mode,
    kubeconfig: r.string('clientConnection.kubeconfig'),
    master: '',
    kubeApiQps,
    kubeApiBurst,
    hostnameOverride: hostname.toLowerCase(),
    bindAddress,
    healthzBindAddress,
    metricsBindAddress,
    clusterCIDRs,
    nodePortAddresses,
    detectLocalMode: dlm as DetectLocalMode | '',
    bridgeInterface,
    interfaceNamePrefix,
    masqueradeAll: r.bool(`${bitKey}.masqueradeAll`),
    masqueradeBit,
    localhostNodePorts: r.bool('iptables.localhostNodePorts'),
    syncPeriodMs,
    minSyncPeriodMs,
    configSyncPeriodMs,
    ipvs: { scheduler, excludeCIDRs, strictARP: r.bool('ipvs.strictARP'), ...ipvsTimeouts },
    verbosity,
    configz: {
      ...raw,
      hostnameOverride: hostname.toLowerCase(),
      logging: { ...(raw.logging as object), verbosity },
    },
  };
}

/** Reads a file for `--config`. */
export type ReadConfigFile = (path: string) => Promise<string>;

/**
 * Parses `run`'s arguments (after `run`). With `--config` the file replaces every other flag
 * except `--hostname-override` and `--v` (kube-proxy's rule); `--master` and `--cleanup` are
 * never in the file.
 * @throws CliUsageError for an unusable command line; KubeProxyConfigError for a bad file or value.
 */
export async function parseRunCommandLine(
  argv: readonly string[],
  readFile: ReadConfigFile,
  load?: ModuleLoader,
): Promise<RunCommand | { command: 'help' }> {
  let values: Values;
  try {
    const parsed = parseArgs({
      args: normaliseBooleans(argv),
      options: RUN_OPTIONS,
      strict: true,
      allowPositionals: true,
    });
    if (parsed.positionals.length > 0) {
      throw new CliUsageError(`unexpected argument ${JSON.stringify(parsed.positionals[0])}`, 'run');
    }
    values = parsed.values as Values;
  } catch (e) {
    if (e instanceof CliUsageError) throw e;
    throw new CliUsageError(oneLine((e as Error).message), 'run');
  }
  if (values.help === true) return { command: 'help' };
  const s = (k: string) => (typeof values[k] === 'string' ? (values[k] as string) : undefined);
  const cleanup = s('cleanup') !== undefined ? parseBool(s('cleanup')!, 'cleanup') : false;
  let raw: Record<string, unknown>;
  let warnings: string[] = [];
  let source = 'flags';
  const configPath = s('config');
  if (configPath !== undefined && configPath !== '') {
    let text: string;
    try {
      text = await readFile(configPath);
    } catch (e) {
      throw new KubeProxyConfigError(`failed to read ${configPath}: ${oneLine((e as Error).message)}`);
    }
    ({ config: raw, warnings } = decodeKubeProxyConfiguration(text, configPath));
    source = configPath;
  } else {
    raw = applyFlags(defaultKubeProxyConfiguration(), values);
  }
  // IPVS mode validates its scheduler with @nodeagent/ipvs, loaded only for that mode (an
  // optional install: BackendNotInstalledError when missing).
  const schedulerProblem =
    raw.mode === 'ipvs'
      ? (await loadBackendModule('ipvs', load ? { load } : {})).ipvsSchedulerProblem
      : () => undefined;
  const config = resolve(raw, source, s('hostname-override'), s('v'), schedulerProblem);
  return { command: 'run', config: { ...config, master: s('master') ?? '' }, cleanup, warnings };
}
