/**
 * `--config FILE`: a `KubeletConfiguration` (`kubelet.config.k8s.io/v1beta1`, YAML or JSON)
 * read as the kubelet reads it, turned into the agent's flags.
 *
 * - Every supported field maps to the flag the kubelet maps it to (`maxPods` → `--max-pods`,
 *   `staticPodPath` → `--pod-manifest-path`, ...), except the config-only fields
 *   `nodeLeaseDurationSeconds`, `nodeStatusReportFrequency` and `maxParallelImagePulls`, which
 *   come back separately.
 * - Precedence is the kubelet's (`kubeletConfigFlagPrecedence` in `cmd/kubelet/app/server.go`):
 *   a flag given on the command line wins over the file's field for that flag; the file wins
 *   over the defaults. With a file, fields it does not set get the `v1beta1` defaults, which for
 *   the kubelet API's authentication and authorization differ from the flags' legacy defaults:
 *   `authentication.anonymous.enabled: false`, `authentication.webhook.enabled: true`,
 *   `authorization.mode: Webhook` (the flags' are true, false, AlwaysAllow).
 * - Unknown fields are an error, with the wording of the kubelet's strict decoder (`strict
 *   decoding error: unknown field "x"`). Upstream then retries leniently for `v1beta1` and only
 *   logs; this agent refuses, so a typo never silently falls back to a default.
 * - Fields of `KubeletConfiguration` this agent does not implement are reported as warnings
 *   naming each one ("ignored"), and the agent still starts: a config written for a real
 *   kubelet (kubeadm's `clusterDNS`, `rotateCertificates`, ...) is usable.
 * - A wrong type is an error naming the field, as Go's JSON decoder words it
 *   (`cannot unmarshal string into Go struct field KubeletConfiguration.maxPods of type int32`).
 *
 * @module
 */
import { parseGoDuration } from '@nodeagent/core';
import { parse as parseYaml } from 'yaml';

/** A `--config` file that cannot be used: unreadable, not a KubeletConfiguration, an unknown field, a wrong type or value. */
export class KubeletConfigError extends Error {
  override readonly name = 'KubeletConfigError';
  /**
   * @param file the config file.
   * @param field the field at fault (`maxPods`, `authentication.anonymous.enabled`), when one is.
   * @param detail what is wrong.
   */
  constructor(
    readonly file: string,
    readonly field: string | undefined,
    detail: string,
  ) {
    super(`failed to load kubelet config file, path: ${file}, error: ${detail}`);
  }
}

/** The API groups/versions the kubelet decodes a config file from. */
export const KUBELET_CONFIG_API_VERSIONS: readonly string[] = [
  'kubelet.config.k8s.io/v1beta1',
  'kubelet.config.k8s.io/v1',
];

type Json = unknown;
type Kind =
  | 'string'
  | 'int32'
  | 'int64'
  | 'bool'
  | 'duration'
  | 'stringMap'
  | 'stringList'
  | 'taints'
  | 'headerMap';

/** A supported field: its JSON kind, the flag it sets and how its value is written for that flag. */
interface FieldSpec {
  readonly kind: Kind;
  /** The flag (without `--`), or `undefined` for a config-only field. */
  readonly flag?: string;
  /** Flag values from the (type-checked) field value; one entry per repetition of the flag. */
  readonly toFlag?: (value: Json) => string[];
}

const GO_TYPE: Record<Kind, string> = {
  string: 'string',
  int32: 'int32',
  int64: 'int64',
  bool: 'bool',
  duration: 'v1.Duration',
  stringMap: 'map[string]string',
  stringList: '[]string',
  taints: '[]v1.Taint',
  headerMap: 'map[string][]string',
};

const asText = (v: Json) => [String(v)];
const joinMap =
  (sep: string) =>
  (v: Json): string[] => {
    const entries = Object.entries(v as Record<string, string>);
    return entries.length === 0 ? [] : [entries.map(([k, x]) => `${k}${sep}${x}`).join(',')];
  };
const seconds = (v: Json) => [String(Math.round(parseGoDuration(String(v)) / 1000))];

/**
 * The supported fields (dotted paths for nested ones) of `KubeletConfiguration`, with the
 * kubelet flag each sets. Names, types and flags from `staging/src/k8s.io/kubelet/config/v1beta1/types.go`
 * and `cmd/kubelet/app/options/options.go`.
 */
export const SUPPORTED_KUBELET_CONFIG_FIELDS: Readonly<Record<string, FieldSpec>> = {
  staticPodPath: { kind: 'string', flag: 'pod-manifest-path', toFlag: asText },
  staticPodURL: { kind: 'string', flag: 'manifest-url', toFlag: asText },
  staticPodURLHeader: {
    kind: 'headerMap',
    flag: 'manifest-url-header',
    toFlag: (v) => Object.entries(v as Record<string, string[]>).map(([k, xs]) => `${k}:${xs.join(',')}`),
  },
  syncFrequency: { kind: 'duration', flag: 'sync-frequency', toFlag: asText },
  nodeStatusUpdateFrequency: { kind: 'duration', flag: 'node-status-update-frequency', toFlag: asText },
  nodeStatusReportFrequency: { kind: 'duration' },
  nodeLeaseDurationSeconds: { kind: 'int32' },
  maxPods: { kind: 'int32', flag: 'max-pods', toFlag: asText },
  podCIDR: { kind: 'string', flag: 'pod-cidr', toFlag: asText },
  clusterDNS: { kind: 'stringList', flag: 'cluster-dns', toFlag: (v) => [(v as string[]).join(',')] },
  clusterDomain: { kind: 'string', flag: 'cluster-domain', toFlag: asText },
  resolvConf: { kind: 'string', flag: 'resolv-conf', toFlag: asText },
  volumeStatsAggPeriod: { kind: 'duration', flag: 'volume-stats-agg-period', toFlag: asText },
  kubeReserved: { kind: 'stringMap', flag: 'kube-reserved', toFlag: joinMap('=') },
  systemReserved: { kind: 'stringMap', flag: 'system-reserved', toFlag: joinMap('=') },
  enforceNodeAllocatable: {
    kind: 'stringList',
    flag: 'enforce-node-allocatable',
    toFlag: (v) => [(v as string[]).join(',')],
  },
  evictionHard: { kind: 'stringMap', flag: 'eviction-hard', toFlag: joinMap('<') },
  evictionSoft: { kind: 'stringMap', flag: 'eviction-soft', toFlag: joinMap('<') },
  evictionSoftGracePeriod: { kind: 'stringMap', flag: 'eviction-soft-grace-period', toFlag: joinMap('=') },
  evictionMinimumReclaim: { kind: 'stringMap', flag: 'eviction-minimum-reclaim', toFlag: joinMap('=') },
  evictionPressureTransitionPeriod: {
    kind: 'duration',
    flag: 'eviction-pressure-transition-period',
    toFlag: asText,
  },
  evictionMaxPodGracePeriod: { kind: 'int32', flag: 'eviction-max-pod-grace-period', toFlag: asText },
  imageGCHighThresholdPercent: { kind: 'int32', flag: 'image-gc-high-threshold', toFlag: asText },
  imageGCLowThresholdPercent: { kind: 'int32', flag: 'image-gc-low-threshold', toFlag: asText },
  imageMinimumGCAge: { kind: 'duration', flag: 'minimum-image-ttl-duration', toFlag: asText },
  containerLogMaxSize: { kind: 'string', flag: 'container-log-max-size', toFlag: asText },
  containerLogMaxFiles: { kind: 'int32', flag: 'container-log-max-files', toFlag: asText },
  containerLogMonitorInterval: { kind: 'duration', flag: 'container-log-monitor-interval', toFlag: asText },
  containerLogMaxWorkers: { kind: 'int32', flag: 'container-log-max-workers', toFlag: asText },
  podLogsDir: { kind: 'string', flag: 'pod-logs-root', toFlag: asText },
  address: { kind: 'string', flag: 'address', toFlag: asText },
  port: { kind: 'int32', flag: 'port', toFlag: asText },
  readOnlyPort: { kind: 'int32', flag: 'read-only-port', toFlag: asText },
  healthzPort: { kind: 'int32', flag: 'healthz-port', toFlag: asText },
  healthzBindAddress: { kind: 'string', flag: 'healthz-bind-address', toFlag: asText },
  tlsCertFile: { kind: 'string', flag: 'tls-cert-file', toFlag: asText },
  tlsPrivateKeyFile: { kind: 'string', flag: 'tls-private-key-file', toFlag: asText },
  'authentication.anonymous.enabled': { kind: 'bool', flag: 'anonymous-auth', toFlag: asText },
  'authentication.webhook.enabled': { kind: 'bool', flag: 'authentication-token-webhook', toFlag: asText },
  'authentication.x509.clientCAFile': { kind: 'string', flag: 'client-ca-file', toFlag: asText },
  'authorization.mode': { kind: 'string', flag: 'authorization-mode', toFlag: asText },
  failSwapOn: { kind: 'bool', flag: 'fail-swap-on', toFlag: asText },
  cgroupsPerQOS: { kind: 'bool', flag: 'cgroups-per-qos', toFlag: asText },
  cgroupDriver: { kind: 'string', flag: 'cgroup-driver', toFlag: asText },
  cgroupRoot: { kind: 'string', flag: 'cgroup-root', toFlag: asText },
  containerRuntimeEndpoint: { kind: 'string', flag: 'container-runtime-endpoint', toFlag: asText },
  allowedUnsafeSysctls: {
    kind: 'stringList',
    flag: 'allowed-unsafe-sysctls',
    toFlag: (v) => [(v as string[]).join(',')],
  },
  registerWithTaints: {
    kind: 'taints',
    flag: 'register-with-taints',
    toFlag: (v) => {
      const taints = v as { key: string; value?: string; effect: string }[];
      return taints.length === 0
        ? []
        : [taints.map((t) => `${t.key}${t.value ? `=${t.value}` : ''}:${t.effect}`).join(',')];
    },
  },
  // node-tuning-wiring.ts
  kubeAPIQPS: { kind: 'int32', flag: 'kube-api-qps', toFlag: asText },
  kubeAPIBurst: { kind: 'int32', flag: 'kube-api-burst', toFlag: asText },
  eventRecordQPS: { kind: 'int32', flag: 'event-qps', toFlag: asText },
  eventBurst: { kind: 'int32', flag: 'event-burst', toFlag: asText },
  nodeStatusMaxImages: { kind: 'int32', flag: 'node-status-max-images', toFlag: asText },
  podsPerCore: { kind: 'int32', flag: 'pods-per-core', toFlag: asText },
  registerNode: { kind: 'bool', flag: 'register-node', toFlag: asText },
  podPidsLimit: { kind: 'int64', flag: 'pod-max-pids', toFlag: asText },
  runtimeRequestTimeout: { kind: 'duration', flag: 'runtime-request-timeout', toFlag: asText },
  serializeImagePulls: { kind: 'bool', flag: 'serialize-image-pulls', toFlag: asText },
  maxParallelImagePulls: { kind: 'int32' },
  enableServer: { kind: 'bool', flag: 'enable-server', toFlag: asText },
  'crashLoopBackOff.maxContainerRestartPeriod': {
    kind: 'duration',
    flag: 'max-container-restart-period',
    toFlag: seconds,
  },
};

/**
 * Fields of `KubeletConfiguration` (v1beta1) this agent knows but does not implement: a file
 * that sets one loads with a warning naming it, and the value is ignored. Objects are listed
 * by their top-level name (their subfields are not checked one by one).
 */
export const UNSUPPORTED_KUBELET_CONFIG_FIELDS: readonly string[] = [
  'fileCheckFrequency',
  'httpCheckFrequency',
  'tlsCipherSuites',
  'tlsMinVersion',
  'rotateCertificates',
  'serverTLSBootstrap',
  'authentication.webhook.cacheTTL',
  'authorization.webhook',
  'registryPullQPS',
  'registryBurst',
  'imagePullCredentialsVerificationPolicy',
  'preloadedImagesVerificationAllowlist',
  'enableDebuggingHandlers',
  'enableContentionProfiling',
  'oomScoreAdj',
  'streamingConnectionIdleTimeout',
  'imageMaximumGCAge',
  'kubeletCgroups',
  'systemCgroups',
  'cpuManagerPolicy',
  'cpuManagerPolicyOptions',
  'cpuManagerReconcilePeriod',
  'memoryManagerPolicy',
  'topologyManagerPolicy',
  'topologyManagerScope',
  'topologyManagerPolicyOptions',
  'qosReserved',
  'hairpinMode',
  'cpuCFSQuota',
  'cpuCFSQuotaPeriod',
  'maxOpenFiles',
  'contentType',
  'protectKernelDefaults',
  'makeIPTablesUtilChains',
  'iptablesMasqueradeBit',
  'iptablesDropBit',
  'featureGates',
  'memorySwap',
  'configMapAndSecretChangeDetectionStrategy',
  'systemReservedCgroup',
  'kubeReservedCgroup',
  'reservedSystemCPUs',
  'showHiddenMetricsForVersion',
  'volumePluginDir',
  'providerID',
  'kernelMemcgNotification',
  'logging',
  'enableSystemLogHandler',
  'enableSystemLogQuery',
  'shutdownGracePeriod',
  'shutdownGracePeriodCriticalPods',
  'shutdownGracePeriodByPodPriority',
  'reservedMemory',
  'enableProfilingHandler',
  'enableDebugFlagsHandler',
  'seccompDefault',
  'memoryThrottlingFactor',
  'localStorageCapacityIsolation',
  'imageServiceEndpoint',
  'failCgroupV1',
  'userNamespaces',
  'singleProcessOOMKill',
  'mergeDefaultEvictionSettings',
  'crashLoopBackOff.nodeMaxContainerRestartPeriod',
];

/** Objects whose subfields are checked one by one (the others are leaves or unsupported as a whole). */
const NESTED = new Set([
  'authentication',
  'authentication.anonymous',
  'authentication.webhook',
  'authentication.x509',
  'authorization',
  'crashLoopBackOff',
]);

/** The `v1beta1` defaults a config file brings where they differ from the flags' (legacy) defaults. */
const V1BETA1_DEFAULTS: Readonly<Record<string, string>> = {
  'anonymous-auth': 'false',
  'authentication-token-webhook': 'true',
  'authorization-mode': 'Webhook',
};

/** One flag set by the config file, with the field it came from. */
export interface ConfigFlag {
  /** The flag, without `--`. */
  readonly flag: string;
  /** Its value. */
  readonly value: string;
  /** The field (dotted path) that set it, or `undefined` for a `v1beta1` default. */
  readonly field: string | undefined;
}

/** What a config file contributes. */
export interface KubeletConfigFile {
  /** The flags its fields set (before the command line's, which override them flag by flag). */
  readonly flags: readonly ConfigFlag[];
  /** `nodeLeaseDurationSeconds` (config-only in the kubelet too). */
  readonly nodeLeaseDurationSeconds: number | undefined;
  /** `nodeStatusReportFrequency`, ms (config-only in the kubelet too). */
  readonly nodeStatusReportFrequencyMs: number | undefined;
  /** `maxParallelImagePulls` (config-only in the kubelet too). */
  readonly maxParallelImagePulls: number | undefined;
  /** One line per known-but-unsupported field the file sets. */
  readonly warnings: readonly string[];
}

function jsonType(v: Json): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'array';
  if (typeof v === 'object') return 'object';
  return typeof v;
}

function isObject(v: Json): v is Record<string, Json> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/**
 * Parses a config file's text. `validate(flags)` checks flags (the agent's flag parser): all the
 * file's together, and when they fail each field's alone, so the error names the field at
 * fault (or none, for a rule between fields).
 * @throws KubeletConfigError
 */
export function parseKubeletConfig(
  text: string,
  file: string,
  validate: (flags: readonly ConfigFlag[]) => void = () => {},
): KubeletConfigFile {
  let doc: Json;
  try {
    doc = parseYaml(text);
  } catch (err) {
    throw new KubeletConfigError(file, undefined, `failed to decode: ${(err as Error).message}`);
  }
  if (!isObject(doc)) {
    throw new KubeletConfigError(file, undefined, `failed to decode: expected a KubeletConfiguration object`);
  }
  const apiVersion = doc.apiVersion;
  const kind = doc.kind;
  if (typeof apiVersion !== 'string' || !KUBELET_CONFIG_API_VERSIONS.includes(apiVersion)) {
    throw new KubeletConfigError(
      file,
      'apiVersion',
      `failed to decode: apiVersion ${JSON.stringify(apiVersion ?? '')}: expected one of ${KUBELET_CONFIG_API_VERSIONS.join(', ')}`,
    );
  }
  if (kind !== 'KubeletConfiguration') {
    throw new KubeletConfigError(
      file,
      'kind',
      `failed to decode: no kind ${JSON.stringify(kind ?? '')} is registered for version "${apiVersion}": expected KubeletConfiguration`,
    );
  }
  const flags: ConfigFlag[] = [];
  const warnings: string[] = [];
  let nodeLeaseDurationSeconds: number | undefined;
  let nodeStatusReportFrequencyMs: number | undefined;
  let maxParallelImagePulls: number | undefined;
  const visit = (obj: Record<string, Json>, prefix: string) => {
    for (const [key, value] of Object.entries(obj)) {
      const path = prefix === '' ? key : `${prefix}.${key}`;
      if (prefix === '' && (key === 'apiVersion' || key === 'kind')) continue;
      if (NESTED.has(path)) {
        if (value === null) continue;
        if (!isObject(value)) throw typeError(file, path, value, 'struct');
        visit(value, path);
        continue;
      }
      const spec = SUPPORTED_KUBELET_CONFIG_FIELDS[path];
      if (spec === undefined) {
        if (UNSUPPORTED_KUBELET_CONFIG_FIELDS.includes(path)) {
          warnings.push(`${path} is not supported by this agent; the value in ${file} is ignored`);
          continue;
        }
        throw new KubeletConfigError(file, path, `strict decoding error: unknown field "${path}"`);
      }
      if (value === null) continue; // JSON null: the field's default, as Go's decoder leaves it
      checkType(file, path, spec.kind, value);
      if (path === 'nodeLeaseDurationSeconds') {
        if ((value as number) <= 0) {
          throw new KubeletConfigError(
            file,
            path,
            `invalid configuration: nodeLeaseDurationSeconds must be greater than 0`,
          );
        }
        nodeLeaseDurationSeconds = value as number;
        continue;
      }
      if (path === 'maxParallelImagePulls') {
        // Checked with serializeImagePulls once the command line is merged (node-tuning-wiring.ts).
        if ((value as number) < 1) {
          throw new KubeletConfigError(
            file,
            path,
            `invalid configuration: maxParallelImagePulls ${value} must be a positive number`,
          );
        }
        maxParallelImagePulls = value as number;
        continue;
      }
      if (path === 'nodeStatusReportFrequency') {
        nodeStatusReportFrequencyMs = parseGoDuration(value as string);
        if (nodeStatusReportFrequencyMs <= 0) {
          throw new KubeletConfigError(
            file,
            path,
            `invalid configuration: nodeStatusReportFrequency must be greater than 0`,
          );
        }
        continue;
      }
      if (spec.flag === undefined || spec.toFlag === undefined) continue;
      flags.push(...spec.toFlag(value).map((v) => ({ flag: spec.flag as string, value: v, field: path })));
    }
  };
  visit(doc, '');
  // The file's flags together (cross-field rules such as imageGCLowThresholdPercent <
  // imageGCHighThresholdPercent), then, to name the culprit, each field's alone.
  try {
    validate(flags);
  } catch (err) {
    const fields = [...new Set(flags.map((f) => f.field))];
    for (const field of fields) {
      try {
        validate(flags.filter((f) => f.field === field));
      } catch (fieldErr) {
        throw new KubeletConfigError(
          file,
          field,
          `invalid value for ${field}: ${(fieldErr as Error).message}`,
        );
      }
    }
    throw new KubeletConfigError(file, undefined, `invalid configuration: ${(err as Error).message}`);
  }
  const setFlags = new Set(flags.map((f) => f.flag));
  for (const [flag, value] of Object.entries(V1BETA1_DEFAULTS)) {
    if (!setFlags.has(flag)) flags.push({ flag, value, field: undefined });
  }
  return { flags, warnings, nodeLeaseDurationSeconds, nodeStatusReportFrequencyMs, maxParallelImagePulls };
}

function typeError(file: string, path: string, value: Json, goType: string): KubeletConfigError {
  return new KubeletConfigError(
    file,
    path,
    `failed to decode: json: cannot unmarshal ${jsonType(value)} into Go struct field KubeletConfiguration.${path} of type ${goType}`,
  );
}

function checkType(file: string, path: string, kind: Kind, value: Json): void {
  const bad = () => typeError(file, path, value, GO_TYPE[kind]);
  switch (kind) {
    case 'string':
      if (typeof value !== 'string') throw bad();
      return;
    case 'bool':
      if (typeof value !== 'boolean') throw bad();
      return;
    case 'int64':
      if (typeof value !== 'number') throw bad();
      if (!Number.isSafeInteger(value)) {
        throw new KubeletConfigError(
          file,
          path,
          `failed to decode: json: cannot unmarshal number ${value} into Go struct field KubeletConfiguration.${path} of type int64`,
        );
      }
      return;
    case 'int32':
      if (typeof value !== 'number') throw bad();
      if (!Number.isInteger(value) || value > 2147483647 || value < -2147483648) {
        throw new KubeletConfigError(
          file,
          path,
          `failed to decode: json: cannot unmarshal number ${value} into Go struct field KubeletConfiguration.${path} of type int32`,
        );
      }
      return;
    case 'duration':
      if (typeof value !== 'string') throw bad();
      try {
        parseGoDuration(value);
      } catch {
        throw new KubeletConfigError(
          file,
          path,
          `failed to decode: time: invalid duration ${JSON.stringify(value)}`,
        );
      }
      return;
    case 'stringMap':
      if (!isObject(value)) throw bad();
      for (const [k, v] of Object.entries(value)) {
        if (typeof v !== 'string') throw typeError(file, `${path}.${k}`, v, 'string');
      }
      return;
    case 'stringList':
      if (!Array.isArray(value)) throw bad();
      value.forEach((v, i) => {
        if (typeof v !== 'string') throw typeError(file, `${path}[${i}]`, v, 'string');
      });
      return;
    case 'headerMap':
      if (!isObject(value)) throw bad();
      for (const [k, v] of Object.entries(value)) {
        if (!Array.isArray(v)) throw typeError(file, `${path}.${k}`, v, '[]string');
        v.forEach((x, i) => {
          if (typeof x !== 'string') throw typeError(file, `${path}.${k}[${i}]`, x, 'string');
        });
      }
      return;
    case 'taints':
      if (!Array.isArray(value)) throw bad();
      value.forEach((t, i) => {
        if (!isObject(t)) throw typeError(file, `${path}[${i}]`, t, 'v1.Taint');
        for (const [k, v] of Object.entries(t)) {
          if (!['key', 'value', 'effect', 'timeAdded'].includes(k)) {
            throw new KubeletConfigError(
              file,
              `${path}[${i}].${k}`,
              `strict decoding error: unknown field "${path}[${i}].${k}"`,
            );
          }
          if (k !== 'timeAdded' && typeof v !== 'string')
            throw typeError(file, `${path}[${i}].${k}`, v, 'string');
        }
      });
      return;
  }
}

/**
 * The flags (without `--`) an argv sets, deprecated aliases mapped to their replacements by
 * `canonical`. A bare `--flag` and `--flag=value` and `--flag value` all count.
 */
export function flagsGiven(argv: readonly string[], canonical: (name: string) => string): Set<string> {
  const given = new Set<string>();
  for (const arg of argv) {
    if (arg === '--') break;
    const m = /^--?([^=]+)/.exec(arg);
    if (m?.[1] !== undefined) given.add(canonical(m[1]));
  }
  return given;
}

/**
 * The argv the agent parses: the file's flags first, minus every flag the command line sets
 * (so a repeatable flag given on the command line replaces the file's values instead of adding
 * to them), then the command line.
 */
export function mergeConfigArgv(
  config: KubeletConfigFile,
  argv: readonly string[],
  canonical: (name: string) => string,
): string[] {
  const given = flagsGiven(argv, canonical);
  const fromFile = config.flags.filter((f) => !given.has(f.flag)).map((f) => `--${f.flag}=${f.value}`);
  return [...fromFile, ...argv];
}
