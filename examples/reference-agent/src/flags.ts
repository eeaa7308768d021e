/**
 * The command line of the reference agent (kubelet-style flag names where one exists).
 *
 * @module
 */
import { readFileSync } from 'node:fs';
import os from 'node:os';
import { parseArgs } from 'node:util';
import type { V1Taint } from '@kubernetes/client-node';
import { SysctlAllowlist } from '@nodeagent/admission';
import { type LogLevel, parseGoDuration, parseIP } from '@nodeagent/core';
import { parseNodeLabels, parseReservation, parseTaints, type ResourceList } from '@nodeagent/status';
import {
  CGROUP_FLAG_OPTIONS,
  CGROUP_FLAGS_USAGE,
  type CgroupFlags,
  normalizeCgroupArgv,
  parseCgroupFlags,
} from './cgroups-wiring.js';
import { DNS_FLAG_OPTIONS, DNS_USAGE, type DnsSettings, parseDnsFlags } from './dns-wiring.js';
import { EMBEDDED_BUSYBOX_IMAGE, type EmbeddedImagePolicy } from './embedded-runtime.js';
import {
  EVICTION_FLAG_OPTIONS,
  EVICTION_USAGE,
  type EvictionSettings,
  parseEvictionFlags,
} from './eviction-wiring.js';
import { canonicalFlag, rewriteDeprecatedFlags } from './flag-aliases.js';
import {
  type ConfigFlag,
  KubeletConfigError,
  mergeConfigArgv,
  parseKubeletConfig,
} from './kubelet-config.js';
import {
  KUBELET_SERVER_BOOL_FLAGS,
  KUBELET_SERVER_FLAG_OPTIONS,
  KUBELET_SERVER_USAGE,
  type KubeletServerSettings,
  parseKubeletServerFlags,
} from './kubelet-server-wiring.js';
import {
  LOG_ROTATION_FLAG_OPTIONS,
  LOG_ROTATION_USAGE,
  type LogRotationSettings,
  parseLogRotationFlags,
} from './log-rotation-wiring.js';
// --- kube-proxy flags (proxy-wiring.ts) ---
import {
  PROXY_BOOL_FLAGS,
  PROXY_FLAG_OPTIONS,
  PROXY_USAGE,
  type ProxySettings,
  parseProxyFlags,
} from './proxy-wiring.js';

/** A bad command line; the bin prints it with the usage and exits with 2. */
export class FlagError extends Error {
  override readonly name = 'FlagError';
}

/** Parsed flags. */
export interface AgentFlags {
  /** `--kubeconfig`: external API server instead of the embedded one. */
  readonly kubeconfig: string | undefined;
  /** `--container-runtime-endpoint` (deprecated alias `--runtime-endpoint`): real CRI runtime instead of the fake. */
  readonly runtimeEndpoint: string | undefined;
  /** `--hostname-override` (deprecated alias `--node-name`), default the host name (lower-cased). */
  readonly nodeName: string;
  /** `--config`: the KubeletConfiguration file read (kubelet-config.ts), if any. */
  readonly config: string | undefined;
  /** `--fail-swap-on`; `undefined` when neither the flag nor the config file set it (swap-check.ts decides). */
  readonly failSwapOn: boolean | undefined;
  /** `--sync-frequency` (Go duration), ms: the pod workers' resync period. */
  readonly syncFrequencyMs: number | undefined;
  /** `nodeLeaseDurationSeconds` of the config file (config-only, as in the kubelet). */
  readonly nodeLeaseDurationSeconds: number | undefined;
  /** `nodeStatusReportFrequency` of the config file, ms (config-only, as in the kubelet). */
  readonly nodeStatusReportFrequencyMs: number | undefined;
  /** `--embedded-image-policy simulate|known-only` (agent-only; the embedded fake runtime). */
  readonly embeddedImagePolicy: EmbeddedImagePolicy;
  /** Deprecation warnings and config-file warnings, for the CLI to print on stderr. */
  readonly warnings: readonly string[];
  /** `--node-ip`. */
  readonly nodeIp: string | undefined;
  /** `--pod-cidr`. */
  readonly podCidr: string | undefined;
  /** `--demo`. */
  readonly demo: boolean;
  /** `--demo-image`, default the busybox image of the embedded runtime and the node sandbox. */
  readonly demoImage: string;
  /** `--exit-after SECONDS`. */
  readonly exitAfterSeconds: number | undefined;
  /** `--log-level`. */
  readonly logLevel: LogLevel;
  /** `--log-format pretty|json`. */
  readonly logFormat: 'pretty' | 'json';
  /** `--pods-root`. */
  readonly podsRoot: string | undefined;
  /** `--root-dir` (kubelet): pod directories under `<root-dir>/pods`. */
  readonly rootDir: string | undefined;
  /** `--volume-memory-medium tmpfs|directory` (agent-only). */
  readonly volumeMemoryMedium: 'tmpfs' | 'directory' | undefined;
  /** `--pod-logs-root`. */
  readonly podLogsRoot: string | undefined;
  /** `--health-port` (0: any free port). */
  readonly healthPort: number | undefined;
  /** `--node-labels k=v,...` (set at registration). */
  readonly nodeLabels: Readonly<Record<string, string>> | undefined;
  /** `--register-with-taints key=value:Effect,...`. */
  readonly registerWithTaints: readonly V1Taint[] | undefined;
  /** `--kube-reserved cpu=100m,memory=256Mi,...`. */
  readonly kubeReserved: ResourceList | undefined;
  /** `--system-reserved cpu=100m,memory=256Mi,...`. */
  readonly systemReserved: ResourceList | undefined;
  /** `--eviction-*`, `--image-gc-*`, `--minimum-*-ttl-duration`, `--maximum-dead-containers*` (eviction-wiring.ts). */
  readonly eviction: EvictionSettings;
  /** `--container-log-max-size`, `--container-log-max-files`, `--container-log-monitor-interval`, `--container-log-max-workers` (log-rotation-wiring.ts). */
  readonly logRotation: LogRotationSettings;
  /** `--proxy-mode` and the other kube-proxy flags (proxy-wiring.ts); undefined when none was given. */
  readonly proxy: ProxySettings | undefined;
  /** `--max-pods`. */
  readonly maxPods: number | undefined;
  /** `--cluster-dns`, `--cluster-domain`, `--resolv-conf` (dns-wiring.ts). */
  readonly dns: DnsSettings;
  /** `--volume-stats-agg-period` (Go duration), ms; <= 0 turns volume measurement off. */
  readonly volumeStatsAggPeriodMs: number | undefined;
  /** `--node-status-update-frequency` (Go duration), ms. */
  readonly nodeStatusUpdateFrequencyMs: number | undefined;
  /** `--max-container-restart-period SECONDS` (CrashLoopBackOff cap). */
  readonly maxContainerRestartPeriodSeconds: number | undefined;
  /** `--pod-manifest-path`: static pod manifests (directory or file). */
  readonly podManifestPath: string | undefined;
  /** `--manifest-url`: URL of a Pod or PodList. */
  readonly manifestUrl: string | undefined;
  /** `--manifest-url-header 'Name:value'` (repeatable; a value may list several with commas). */
  readonly manifestUrlHeaders: readonly (readonly [string, string])[];
  /** `--allowed-unsafe-sysctls a,b*` */
  readonly allowedUnsafeSysctls: readonly string[];
  /** `--cgroup-driver`, `--cgroup-root`, `--cgroups-per-qos`, `--enforce-node-allocatable`. */
  readonly cgroups: CgroupFlags;
  /** The kubelet API flags (`--port`, `--read-only-port`, `--healthz-port`, ...; kubelet-server-wiring.ts). */
  readonly kubeletServer: KubeletServerSettings;
  /** `--help`. */
  readonly help: boolean;
  /** `--version`. */
  readonly version: boolean;
}

/** The usage text. */
export const USAGE = `Usage: nodeagent-reference-agent [flags]

With no flags: an embedded API server on 127.0.0.1 and an in-process fake container runtime.

  --config FILE                  a KubeletConfiguration (kubelet.config.k8s.io/v1beta1) YAML/JSON file;
                                 flags given on the command line override its fields
  --kubeconfig PATH              use this API server instead of the embedded one (without it, in a pod:
                                 KUBERNETES_SERVICE_HOST/PORT and the service account token)
  --container-runtime-endpoint unix:///P
                                 use this CRI runtime (e.g. containerd) instead of the fake one
                                 (--runtime-endpoint: deprecated alias)
  --hostname-override NAME       node name (default: the host name; --node-name: deprecated alias)
  --fail-swap-on[=BOOL]          refuse to start when swap is on (default true; with the embedded fake
                                 runtime only when given)
  --sync-frequency DURATION      how often each pod is resynced (default 1m0s)
  --embedded-image-policy simulate|known-only
                                 embedded fake runtime: any image pulls as a simulated one (default
                                 simulate) or only the preloaded ones; not a kubelet flag
  --node-ip IP[,IP]              InternalIP of the node and hostIP of pods (default: first IPv4 address)
  --node-labels K=V,...          labels to add when registering the node
  --register-with-taints K[=V]:EFFECT,...
                                 taints to add when registering the node
  --kube-reserved R=Q,...        resources reserved for Kubernetes daemons (cpu, memory, ephemeral-storage, pid)
  --system-reserved R=Q,...      resources reserved for the system (same resources)
  --max-pods N                   pods this node can run (default 110)
  --node-status-update-frequency DURATION
                                 how often the node status is computed (default 10s)
  --pod-cidr CIDR                spec.podCIDR, also sent to the runtime
${DNS_USAGE}  --volume-stats-agg-period DURATION
                                 how often pod volumes are measured for the Summary API; <= 0: never (default 1m0s)
  --demo                         create demo pods and a Service for this node and print their progress
  --demo-image REF               image of the demo pods (default ${EMBEDDED_BUSYBOX_IMAGE})
  --exit-after SECONDS           stop after this long
  --log-level LEVEL              trace|debug|info|warn|error (default info)
  --log-format pretty|json       log line format on stderr (default pretty)
  --root-dir DIR                 kubelet state directory; pod directories and volumes go to DIR/pods
  --pods-root DIR                pod directories (default: ROOT-DIR/pods, else a temp dir removed on exit)
  --volume-memory-medium tmpfs|directory
                                 memory-backed volumes (secret, projected, downwardAPI, emptyDir Memory):
                                 tmpfs (default, needs root) or plain directories (fake runtime without root
                                 only: secrets then touch the disk); not a kubelet flag
  --pod-logs-root DIR            pod log directories (default: a temp dir, removed on exit)
  --health-port PORT             serve /healthz on 127.0.0.1:PORT (0: any free port)
  --max-container-restart-period SECONDS
                                 CrashLoopBackOff cap (default 300; below 10 it lowers the first delay too)
  --pod-manifest-path PATH       static pod manifests: a directory (YAML/JSON, one pod per file) or one file
  --manifest-url URL             static pods from this URL (a Pod or PodList), polled every 20 s
  --manifest-url-header 'K:V'    header of the manifest URL requests (repeatable)
  --allowed-unsafe-sysctls LIST  comma-separated sysctls or prefix* patterns pods may set besides the safe ones
${CGROUP_FLAGS_USAGE}${EVICTION_USAGE}${LOG_ROTATION_USAGE}${PROXY_USAGE}${KUBELET_SERVER_USAGE}  -h, --help                     this text
  --version                      print the agent's version and exit
`;

const LEVELS: readonly LogLevel[] = ['trace', 'debug', 'info', 'warn', 'error'];

function number(name: string, value: string | undefined, min: number): number | undefined {
  if (value === undefined) return undefined;
  const n = Number(value);
  if (value.trim() === '' || !Number.isFinite(n) || n < min) {
    throw new FlagError(`--${name}: expected a number >= ${min}, got "${value}"`);
  }
  return n;
}

/** Go bool flags that may be given bare (`--fail-swap-on` means `--fail-swap-on=true`). */
const BARE_BOOL_FLAGS: readonly string[] = [
  ...KUBELET_SERVER_BOOL_FLAGS,
  ...PROXY_BOOL_FLAGS,
  '--fail-swap-on',
];

/**
 * Parses `argv` (without node and the script): deprecated aliases are rewritten (with a
 * warning), then a `--config` file's fields become flags the command line overrides
 * (kubelet-config.ts). `readFile` reads the config file (tests inject it).
 * @throws FlagError (a config file error as its message)
 */
export function parseFlags(
  argv: readonly string[],
  hostname: string = os.hostname(),
  readFile: (path: string) => string = (path) => readFileSync(path, 'utf8'),
): AgentFlags {
  const rewritten = rewriteDeprecatedFlags(argv);
  const configPath = configFlag(rewritten.argv);
  if (configPath === undefined) return parseArgv(rewritten.argv, hostname, undefined, rewritten.warnings);
  let text: string;
  try {
    text = readFile(configPath);
  } catch (err) {
    throw new FlagError(new KubeletConfigError(configPath, undefined, (err as Error).message).message);
  }
  let file: ReturnType<typeof parseKubeletConfig>;
  try {
    file = parseKubeletConfig(text, configPath, (flags: readonly ConfigFlag[]) => {
      parseArgv(
        flags.map((f) => `--${f.flag}=${f.value}`),
        hostname,
        undefined,
        [],
      );
    });
  } catch (err) {
    if (err instanceof KubeletConfigError) throw new FlagError(err.message);
    throw err;
  }
  return parseArgv(mergeConfigArgv(file, rewritten.argv, canonicalFlag), hostname, file, [
    ...rewritten.warnings,
    ...file.warnings,
  ]);
}

/** The value of `--config` in `argv` (last one wins), if any. */
function configFlag(argv: readonly string[]): string | undefined {
  let found: string | undefined;
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i] as string;
    if (a === '--') break;
    if (a === '--config') found = argv[i + 1];
    else if (a.startsWith('--config=')) found = a.slice('--config='.length);
  }
  return found;
}

function parseArgv(
  argv: readonly string[],
  hostname: string,
  file: ReturnType<typeof parseKubeletConfig> | undefined,
  warnings: readonly string[],
): AgentFlags {
  let values: Record<string, string | boolean | string[] | undefined>;
  try {
    ({ values } = parseArgs({
      // Go bool flags given bare mean true.
      args: normalizeCgroupArgv(argv).map((a) => (BARE_BOOL_FLAGS.includes(a) ? `${a}=true` : a)),
      strict: true,
      allowPositionals: false,
      options: {
        kubeconfig: { type: 'string' },
        config: { type: 'string' },
        'container-runtime-endpoint': { type: 'string' },
        'hostname-override': { type: 'string' },
        'fail-swap-on': { type: 'string' },
        'sync-frequency': { type: 'string' },
        'embedded-image-policy': { type: 'string' },
        'node-ip': { type: 'string' },
        'pod-cidr': { type: 'string' },
        demo: { type: 'boolean' },
        'demo-image': { type: 'string' },
        'exit-after': { type: 'string' },
        'log-level': { type: 'string' },
        'log-format': { type: 'string' },
        'pods-root': { type: 'string' },
        'root-dir': { type: 'string' },
        'volume-memory-medium': { type: 'string' },
        'pod-logs-root': { type: 'string' },
        'health-port': { type: 'string' },
        'max-container-restart-period': { type: 'string' },
        'pod-manifest-path': { type: 'string' },
        'manifest-url': { type: 'string' },
        'manifest-url-header': { type: 'string', multiple: true },
        'allowed-unsafe-sysctls': { type: 'string' },
        'node-labels': { type: 'string' },
        'register-with-taints': { type: 'string' },
        'kube-reserved': { type: 'string' },
        'system-reserved': { type: 'string' },
        'max-pods': { type: 'string' },
        'node-status-update-frequency': { type: 'string' },
        ...CGROUP_FLAG_OPTIONS,
        ...EVICTION_FLAG_OPTIONS,
        ...LOG_ROTATION_FLAG_OPTIONS,
        ...DNS_FLAG_OPTIONS,
        'volume-stats-agg-period': { type: 'string' },
        ...PROXY_FLAG_OPTIONS,
        ...KUBELET_SERVER_FLAG_OPTIONS,
        help: { type: 'boolean', short: 'h' },
        version: { type: 'boolean' },
      },
    }));
  } catch (err) {
    throw new FlagError((err as Error).message);
  }
  const str = (k: string) => values[k] as string | undefined;
  const logLevel = (str('log-level') ?? 'info') as LogLevel;
  if (!LEVELS.includes(logLevel))
    throw new FlagError(`--log-level: expected one of ${LEVELS.join('|')}, got "${logLevel}"`);
  const logFormat = str('log-format') ?? 'pretty';
  if (logFormat !== 'pretty' && logFormat !== 'json')
    throw new FlagError(`--log-format: expected pretty|json, got "${logFormat}"`);
  const endpoint = str('container-runtime-endpoint');
  if (endpoint !== undefined && !/^(unix:\/\/\/|tcp:\/\/)/.test(endpoint)) {
    throw new FlagError(
      `--container-runtime-endpoint: expected unix:///path or tcp://host:port, got "${endpoint}"`,
    );
  }
  const nodeName = (str('hostname-override') ?? hostname).toLowerCase();
  if (!/^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$/.test(nodeName) || nodeName.length > 253) {
    throw new FlagError(`--hostname-override: "${nodeName}" is not a valid DNS subdomain name`);
  }
  const failSwapOnText = str('fail-swap-on');
  if (failSwapOnText !== undefined && failSwapOnText !== 'true' && failSwapOnText !== 'false') {
    throw new FlagError(`--fail-swap-on: expected true|false, got "${failSwapOnText}"`);
  }
  const syncFrequencyText = str('sync-frequency');
  let syncFrequencyMs: number | undefined;
  if (syncFrequencyText !== undefined) {
    try {
      syncFrequencyMs = parseGoDuration(syncFrequencyText);
    } catch (err) {
      throw new FlagError(`--sync-frequency: ${(err as Error).message}`);
    }
    if (syncFrequencyMs <= 0) {
      throw new FlagError(`--sync-frequency: expected a positive duration, got "${syncFrequencyText}"`);
    }
  }
  const embeddedImagePolicy = str('embedded-image-policy') ?? 'simulate';
  if (embeddedImagePolicy !== 'simulate' && embeddedImagePolicy !== 'known-only') {
    throw new FlagError(
      `--embedded-image-policy: expected simulate|known-only, got "${embeddedImagePolicy}"`,
    );
  }
  const podCidr = str('pod-cidr');
  if (podCidr !== undefined && !/^\d{1,3}(\.\d{1,3}){3}\/\d{1,2}$/.test(podCidr)) {
    throw new FlagError(`--pod-cidr: expected an IPv4 CIDR such as 10.88.0.0/24, got "${podCidr}"`);
  }
  const healthPort = number('health-port', str('health-port'), 0);
  if (healthPort !== undefined && (!Number.isInteger(healthPort) || healthPort > 65535)) {
    throw new FlagError(`--health-port: expected a port 0-65535, got "${str('health-port')}"`);
  }
  const manifestUrlHeaders = ((values['manifest-url-header'] as string[] | undefined) ?? []).map((h) => {
    const colon = h.indexOf(':');
    if (colon <= 0) throw new FlagError(`--manifest-url-header: expected 'Name:value', got "${h}"`);
    return [h.slice(0, colon).trim(), h.slice(colon + 1).trim()] as const;
  });
  const allowedUnsafeSysctls = (str('allowed-unsafe-sysctls') ?? '')
    .split(',')
    .map((x) => x.trim())
    .filter((x) => x !== '');
  try {
    new SysctlAllowlist(allowedUnsafeSysctls);
  } catch (err) {
    throw new FlagError(`--allowed-unsafe-sysctls: ${(err as Error).message}`);
  }
  const nodeIp = str('node-ip');
  for (const ip of nodeIp?.split(',') ?? []) {
    if (parseIP(ip.trim()) === null) throw new FlagError(`--node-ip: "${ip}" is not an IP address`);
  }
  const maxPods = number('max-pods', str('max-pods'), 1);
  if (maxPods !== undefined && !Number.isInteger(maxPods)) {
    throw new FlagError(`--max-pods: expected an integer >= 1, got "${str('max-pods')}"`);
  }
  const volumeMemoryMedium = str('volume-memory-medium');
  if (
    volumeMemoryMedium !== undefined &&
    volumeMemoryMedium !== 'tmpfs' &&
    volumeMemoryMedium !== 'directory'
  ) {
    throw new FlagError(`--volume-memory-medium: expected tmpfs|directory, got "${volumeMemoryMedium}"`);
  }
  let eviction: EvictionSettings;
  try {
    eviction = parseEvictionFlags(values);
  } catch (err) {
    throw new FlagError((err as Error).message);
  }
  let logRotation: LogRotationSettings;
  try {
    logRotation = parseLogRotationFlags(values);
  } catch (err) {
    throw new FlagError((err as Error).message);
  }
  let proxy: ProxySettings | undefined;
  try {
    proxy = parseProxyFlags(values);
  } catch (err) {
    throw new FlagError((err as Error).message);
  }
  let kubeletServer: KubeletServerSettings;
  try {
    kubeletServer = parseKubeletServerFlags(values);
  } catch (err) {
    throw new FlagError((err as Error).message);
  }
  return {
    ...statusFlags(str),
    kubeletServer,
    rootDir: str('root-dir'),
    volumeMemoryMedium,
    eviction,
    logRotation,
    proxy,
    maxPods,
    dns: parseDnsFlags(values),
    volumeStatsAggPeriodMs: volumeStatsAggPeriod(str('volume-stats-agg-period')),
    kubeconfig: str('kubeconfig'),
    runtimeEndpoint: endpoint,
    nodeName,
    config: str('config'),
    failSwapOn: failSwapOnText === undefined ? undefined : failSwapOnText === 'true',
    syncFrequencyMs,
    nodeLeaseDurationSeconds: file?.nodeLeaseDurationSeconds,
    nodeStatusReportFrequencyMs: file?.nodeStatusReportFrequencyMs,
    embeddedImagePolicy,
    warnings,
    nodeIp,
    podCidr,
    demo: values.demo === true,
    demoImage: str('demo-image') ?? EMBEDDED_BUSYBOX_IMAGE,
    exitAfterSeconds: number('exit-after', str('exit-after'), 0),
    logLevel,
    logFormat,
    podsRoot: str('pods-root'),
    podLogsRoot: str('pod-logs-root'),
    healthPort,
    maxContainerRestartPeriodSeconds: number(
      'max-container-restart-period',
      str('max-container-restart-period'),
      1,
    ),
    podManifestPath: str('pod-manifest-path'),
    manifestUrl: str('manifest-url'),
    manifestUrlHeaders,
    allowedUnsafeSysctls,
    cgroups: parseCgroupFlags(str, (message) => {
      throw new FlagError(message);
    }),
    help: values.help === true,
    version: values.version === true,
  };
}

/** `--volume-stats-agg-period`: a Go duration (negative allowed: off, as the kubelet). @throws FlagError */
function volumeStatsAggPeriod(text: string | undefined): number | undefined {
  if (text === undefined) return undefined;
  try {
    return parseGoDuration(text);
  } catch (err) {
    throw new FlagError(`--volume-stats-agg-period: ${(err as Error).message}`);
  }
}

/** The node registration and status flags, parsed by `@nodeagent/status`. @throws FlagError */
function statusFlags(str: (k: string) => string | undefined) {
  const parse = <T>(flag: string, fn: (text: string) => T): T | undefined => {
    const text = str(flag);
    if (text === undefined) return undefined;
    try {
      return fn(text);
    } catch (err) {
      const message = (err as Error).message;
      throw new FlagError(message.startsWith('--') ? message : `--${flag}: ${message}`);
    }
  };
  const frequency = parse('node-status-update-frequency', parseGoDuration);
  if (frequency !== undefined && frequency < 1) {
    throw new FlagError(
      `--node-status-update-frequency: expected a positive duration, got "${str('node-status-update-frequency')}"`,
    );
  }
  return {
    nodeLabels: parse('node-labels', parseNodeLabels),
    registerWithTaints: parse('register-with-taints', parseTaints),
    kubeReserved: parse('kube-reserved', (t) => parseReservation(t, '--kube-reserved')),
    systemReserved: parse('system-reserved', (t) => parseReservation(t, '--system-reserved')),
    nodeStatusUpdateFrequencyMs: frequency,
  };
}
