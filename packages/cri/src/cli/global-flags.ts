/**
 * crictl's global flags, with crictl's names, short forms, defaults, environment variables
 * and config file (`cmd/crictl/main.go`, `crictl_config.go` and `pkg/common` of cri-tools),
 * so crictl users' commands and scripts work unchanged with `nodeagent-crictl`.
 *
 * @module
 */
import { readFileSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { InvalidDurationError, parseGoDuration } from '@nodeagent/core';
import { parse as parseYaml } from 'yaml';

/** crictl's default `--config` on Linux. */
export const DEFAULT_CRICTL_CONFIG = '/etc/crictl.yaml';

/** crictl's default `--timeout`, 2 s (also used for `-t 0` or a negative value). */
export const DEFAULT_CRICTL_TIMEOUT_MS = 2_000;

/** The endpoints crictl tries, in order, when none is configured (deprecated in crictl). */
export const DEFAULT_RUNTIME_ENDPOINTS = [
  'unix:///run/containerd/containerd.sock',
  'unix:///run/crio/crio.sock',
  'unix:///var/run/cri-dockerd.sock',
] as const;

/** A usage error: bad flags or arguments (exit code 2). */
export class UsageError extends Error {
  override readonly name = 'UsageError';
}

/** A config file that cannot be used (exit code 1, as crictl's `get server config` error). */
export class ConfigFileError extends Error {
  override readonly name = 'ConfigFileError';
}

/** The resolved global settings of one run. */
export interface GlobalSettings {
  /** `--config`/`-c` (env `CRI_CONFIG_FILE`). */
  readonly config: string;
  /** The runtime endpoint; `undefined` when neither a flag, the environment nor the config file set one. */
  readonly runtimeEndpoint: string | undefined;
  /** The image endpoint; `undefined` means "the runtime endpoint". */
  readonly imageEndpoint: string | undefined;
  /** The per-call deadline, ms. */
  readonly timeoutMs: number;
  /** `--debug`/`-D` (or `debug: true` in the config file). */
  readonly debug: boolean;
  /** `--max-retries` (or the config file's `max-retries`). */
  readonly maxRetries: number;
  /** `--enable-tracing`. */
  readonly enableTracing: boolean;
  /** `--tracing-endpoint`. */
  readonly tracingEndpoint: string;
  /** `--tracing-sampling-rate-per-million`. */
  readonly tracingSamplingRatePerMillion: number;
  /** `--profile-cpu`, `--profile-mem`. */
  readonly profileCpu: string | undefined;
  readonly profileMem: string | undefined;
  /** `--version`/`-v`. */
  readonly version: boolean;
  /** `--help`/`-h`. */
  readonly help: boolean;
}

type Kind = 'string' | 'bool' | 'duration' | 'int';
interface FlagSpec {
  readonly kind: Kind;
  readonly short?: string;
  readonly env?: string;
}

const FLAGS: Readonly<Record<string, FlagSpec>> = {
  config: { kind: 'string', short: 'c', env: 'CRI_CONFIG_FILE' },
  'runtime-endpoint': { kind: 'string', short: 'r', env: 'CONTAINER_RUNTIME_ENDPOINT' },
  'image-endpoint': { kind: 'string', short: 'i', env: 'IMAGE_SERVICE_ENDPOINT' },
  timeout: { kind: 'duration', short: 't' },
  debug: { kind: 'bool', short: 'D' },
  'max-retries': { kind: 'int' },
  'enable-tracing': { kind: 'bool' },
  'tracing-endpoint': { kind: 'string' },
  'tracing-sampling-rate-per-million': { kind: 'int' },
  'profile-cpu': { kind: 'string' },
  'profile-mem': { kind: 'string' },
  version: { kind: 'bool', short: 'v' },
  help: { kind: 'bool', short: 'h' },
};

const BY_SHORT = new Map(
  Object.entries(FLAGS).flatMap(([name, spec]) => (spec.short ? [[spec.short, name] as const] : [])),
);

/** Go's `strconv.ParseBool`. */
function parseGoBool(text: string): boolean | undefined {
  if (['1', 't', 'T', 'TRUE', 'true', 'True'].includes(text)) return true;
  if (['0', 'f', 'F', 'FALSE', 'false', 'False'].includes(text)) return false;
  return undefined;
}

/** Go's `strconv.Atoi` (decimal, optional sign). */
function parseGoInt(text: string): number | undefined {
  return /^[+-]?\d+$/.test(text) ? Number(text) : undefined;
}

/** The crictl config file's options (`pkg/common/file.go`). */
export interface CrictlConfigFile {
  readonly runtimeEndpoint: string;
  readonly imageEndpoint: string;
  /** Seconds. */
  readonly timeout: number;
  readonly debug: boolean;
  readonly pullImageOnCreate: boolean;
  readonly disablePullOnRun: boolean;
  readonly maxRetries: number;
}

/** Parses a crictl config file's text as crictl does (unknown options are errors). */
export function parseCrictlConfig(text: string): CrictlConfigFile {
  const doc: unknown = parseYaml(text);
  const config = {
    runtimeEndpoint: '',
    imageEndpoint: '',
    timeout: 0,
    debug: false,
    pullImageOnCreate: false,
    disablePullOnRun: false,
    maxRetries: 0,
  };
  if (doc === null || doc === undefined) return config;
  if (typeof doc !== 'object' || Array.isArray(doc))
    throw new ConfigFileError('config is not a YAML mapping');
  for (const [name, raw] of Object.entries(doc as Record<string, unknown>)) {
    const value = raw === null || raw === undefined ? '' : String(raw);
    const int = () => {
      const n = parseGoInt(value);
      if (n === undefined) {
        throw new ConfigFileError(
          `parsing config option '${name}': strconv.Atoi: parsing "${value}": invalid syntax`,
        );
      }
      return n;
    };
    const bool = () => {
      const b = parseGoBool(value);
      if (b === undefined) {
        throw new ConfigFileError(
          `parsing config option '${name}': strconv.ParseBool: parsing "${value}": invalid syntax`,
        );
      }
      return b;
    };
    switch (name) {
      case 'runtime-endpoint':
        config.runtimeEndpoint = value;
        break;
      case 'image-endpoint':
        config.imageEndpoint = value;
        break;
      case 'timeout':
        config.timeout = int();
        break;
      case 'debug':
        config.debug = bool();
        break;
      case 'pull-image-on-create':
        config.pullImageOnCreate = bool();
        break;
      case 'disable-pull-on-run':
        config.disablePullOnRun = bool();
        break;
      case 'max-retries':
        config.maxRetries = int();
        break;
      default:
        throw new ConfigFileError(`Config option '${name}' is not valid`);
    }
  }
  return config;
}

/** crictl's `GetServerConfigFromFile`: the file, else `crictl.yaml` next to the executable. */
function readConfigFile(path: string, executablePath: string | undefined): CrictlConfigFile {
  let file = path;
  const exists = (p: string) => {
    try {
      statSync(p);
      return true;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return false;
      throw new ConfigFileError(`load config file: ${(error as Error).message}`);
    }
  };
  if (!exists(file)) {
    const next = executablePath === undefined ? undefined : join(dirname(executablePath), 'crictl.yaml');
    if (next === undefined || !exists(next)) {
      throw new ConfigFileError(`load config file: stat ${next ?? file}: no such file or directory`);
    }
    file = next;
  }
  try {
    return parseCrictlConfig(readFileSync(file, 'utf8'));
  } catch (error) {
    throw new ConfigFileError(`load config file: ${(error as Error).message}`);
  }
}

/** What {@link parseGlobalFlags} needs from the process. */
export interface GlobalFlagsEnv {
  /** Environment (`CONTAINER_RUNTIME_ENDPOINT`, `IMAGE_SERVICE_ENDPOINT`, `CRI_CONFIG_FILE`). */
  readonly env: Readonly<Record<string, string | undefined>>;
  /** The executable, whose directory is searched for `crictl.yaml` as crictl does. */
  readonly executablePath?: string;
}

/**
 * Parses the global flags in front of the command (as crictl, they must come before it)
 * and resolves them with the environment and the config file: a flag (or its environment
 * variable) wins over the config file, which wins over the default. Returns the settings
 * and the remaining arguments (the command and its own flags).
 *
 * @throws {@link UsageError} for an unknown flag, a missing value or a bad duration/number.
 * @throws {@link ConfigFileError} when `--config` (or `CRI_CONFIG_FILE`) was given and the file
 * cannot be read or parsed (a missing or bad default file is ignored, as crictl does).
 */
export function parseGlobalFlags(
  argv: readonly string[],
  process: GlobalFlagsEnv,
): { readonly settings: GlobalSettings; readonly rest: readonly string[] } {
  const values = new Map<string, string | boolean>();
  let i = 0;
  for (; i < argv.length; i++) {
    const arg = argv[i] as string;
    if (arg === '--') {
      i++;
      break;
    }
    if (!arg.startsWith('-') || arg === '-') break;
    const body = arg.replace(/^--?/, '');
    const eq = body.indexOf('=');
    const key = eq < 0 ? body : body.slice(0, eq);
    const name =
      FLAGS[key] !== undefined && (arg.startsWith('--') || key.length > 1) ? key : BY_SHORT.get(key);
    const spec = name === undefined ? undefined : FLAGS[name];
    if (name === undefined || spec === undefined)
      throw new UsageError(`flag provided but not defined: ${arg}`);
    if (spec.kind === 'bool') {
      if (eq < 0) values.set(name, true);
      else {
        const b = parseGoBool(body.slice(eq + 1));
        if (b === undefined)
          throw new UsageError(`invalid boolean value ${JSON.stringify(body.slice(eq + 1))} for -${key}`);
        values.set(name, b);
      }
      continue;
    }
    let value: string | undefined;
    if (eq >= 0) value = body.slice(eq + 1);
    else {
      value = argv[i + 1];
      i++;
    }
    if (value === undefined) throw new UsageError(`flag needs an argument: ${arg}`);
    values.set(name, value);
  }
  const rest = argv.slice(i);
  const str = (name: string): string | undefined => {
    const v = values.get(name);
    if (typeof v === 'string') return v;
    const env = FLAGS[name]?.env;
    const fromEnv = env === undefined ? undefined : process.env[env];
    return fromEnv === undefined || fromEnv === '' ? undefined : fromEnv;
  };
  const isSet = (name: string) => str(name) !== undefined || values.has(name);
  const int = (name: string, fallback: number): number => {
    const text = str(name);
    if (text === undefined) return fallback;
    const n = parseGoInt(text);
    if (n === undefined)
      throw new UsageError(`invalid value ${JSON.stringify(text)} for flag --${name}: parse error`);
    return n;
  };
  let timeoutFlagMs: number | undefined;
  const timeoutText = str('timeout');
  if (timeoutText !== undefined) {
    try {
      timeoutFlagMs = parseGoDuration(timeoutText);
    } catch (error) {
      if (error instanceof InvalidDurationError) {
        throw new UsageError(
          `invalid value ${JSON.stringify(timeoutText)} for flag -t: parse error (want a Go duration such as 2s, 500ms or 1m30s)`,
        );
      }
      throw error;
    }
  }
  const help = values.get('help') === true;
  const version = values.get('version') === true;
  const config = str('config') ?? DEFAULT_CRICTL_CONFIG;
  let file: CrictlConfigFile | undefined;
  if (!help && !version) {
    try {
      file = readConfigFile(config, process.executablePath);
    } catch (error) {
      if (isSet('config')) throw new ConfigFileError(`get server config: ${(error as Error).message}`);
    }
  }
  const positive = (ms: number | undefined) => (ms !== undefined && ms > 0 ? ms : DEFAULT_CRICTL_TIMEOUT_MS);
  const timeoutMs =
    timeoutFlagMs !== undefined
      ? positive(timeoutFlagMs)
      : file !== undefined && file.timeout > 0
        ? file.timeout * 1000
        : DEFAULT_CRICTL_TIMEOUT_MS;
  const debugFlag = values.get('debug');
  const settings: GlobalSettings = {
    config,
    runtimeEndpoint: str('runtime-endpoint') ?? (file?.runtimeEndpoint || undefined),
    imageEndpoint: str('image-endpoint') ?? (file?.imageEndpoint || undefined),
    timeoutMs,
    debug: typeof debugFlag === 'boolean' ? debugFlag : (file?.debug ?? false),
    maxRetries: isSet('max-retries') ? int('max-retries', 3) : file !== undefined ? file.maxRetries : 3,
    enableTracing: values.get('enable-tracing') === true,
    tracingEndpoint: str('tracing-endpoint') ?? '127.0.0.1:4317',
    tracingSamplingRatePerMillion: int('tracing-sampling-rate-per-million', -1),
    profileCpu: str('profile-cpu'),
    profileMem: str('profile-mem'),
    version,
    help,
  };
  return { settings, rest };
}

/** This package's version (its package.json, through the package's own `./package.json` export). */
export function packageVersion(): string {
  return (createRequire(import.meta.url)('@nodeagent/cri/package.json') as { version: string }).version;
}
