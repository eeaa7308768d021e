import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import {
  ConfigFileError,
  DEFAULT_CRICTL_CONFIG,
  parseCrictlConfig,
  parseGlobalFlags,
  UsageError,
} from '../src/cli/global-flags.js';
import { runCli } from '../src/cli/run-cli.js';

const dir = mkdtempSync(join(tmpdir(), 'crictl-flags-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const missing = join(dir, 'absent.yaml');
const empty = join(dir, 'empty.yaml');
writeFileSync(empty, '');
/** crictl reads /etc/crictl.yaml by default: the tests of the defaults need a host without one. */
const hostHasConfig = existsSync('/etc/crictl.yaml');
/** No config file anywhere (the default /etc/crictl.yaml may exist on a host). */
const noFile = { CRI_CONFIG_FILE: undefined };
const parse = (argv: string[], env: Record<string, string | undefined> = {}, executablePath?: string) =>
  parseGlobalFlags(argv, { env, ...(executablePath ? { executablePath } : {}) });
function configFile(name: string, text: string): string {
  const path = join(dir, name);
  writeFileSync(path, text);
  return path;
}

describe("crictl's global flags", () => {
  it.skipIf(hostHasConfig)("defaults are crictl's", () => {
    const { settings, rest } = parse(['ps', '-a']);
    expect(rest).toEqual(['ps', '-a']);
    expect(settings).toMatchObject({
      runtimeEndpoint: undefined,
      imageEndpoint: undefined,
      timeoutMs: 2_000,
      debug: false,
      maxRetries: 3,
      enableTracing: false,
      tracingEndpoint: '127.0.0.1:4317',
      tracingSamplingRatePerMillion: -1,
    });
    expect(parse(['version'], noFile).settings.config).toBe(DEFAULT_CRICTL_CONFIG);
  });

  it('long and short names, --flag=value, Go durations', () => {
    const long = parse([
      '--config',
      empty,
      '--runtime-endpoint',
      'unix:///run/a.sock',
      '--image-endpoint=unix:///run/b.sock',
      '--timeout',
      '1m30s',
      '--debug',
      '--max-retries',
      '0',
      '--enable-tracing',
      '--tracing-endpoint',
      'otel:4317',
      '--tracing-sampling-rate-per-million=1000000',
      'version',
    ]).settings;
    expect(long).toMatchObject({
      runtimeEndpoint: 'unix:///run/a.sock',
      imageEndpoint: 'unix:///run/b.sock',
      timeoutMs: 90_000,
      debug: true,
      maxRetries: 0,
      enableTracing: true,
      tracingEndpoint: 'otel:4317',
      tracingSamplingRatePerMillion: 1_000_000,
    });
    const short = parse([
      '-c',
      empty,
      '-r',
      'unix:///a',
      '-i',
      'unix:///b',
      '-t',
      '500ms',
      '-D',
      'ps',
    ]).settings;
    expect(short).toMatchObject({
      runtimeEndpoint: 'unix:///a',
      imageEndpoint: 'unix:///b',
      timeoutMs: 500,
      debug: true,
    });
    expect(parse(['-v']).settings.version).toBe(true);
    expect(parse(['-h']).settings.help).toBe(true);
  });

  it('-t 0 or a negative duration means the default; -t 10 (no unit) is an error, as in Go', () => {
    expect(parse(['-c', empty, '-t', '0', 'ps']).settings.timeoutMs).toBe(2_000);
    expect(parse(['-c', empty, '-t', '-5s', 'ps']).settings.timeoutMs).toBe(2_000);
    expect(() => parse(['-t', '10', 'ps'])).toThrow(UsageError);
    expect(() => parse(['-t', '10', 'ps'])).toThrow(/invalid value "10" for flag -t/);
    expect(() => parse(['-t', '1d', 'ps'])).toThrow(UsageError);
    expect(() => parse(['--timeout'])).toThrow(/flag needs an argument/);
  });

  it('unknown flags before the command are errors; flags after it belong to the command', () => {
    expect(() => parse(['--bogus', 'ps'])).toThrow(/flag provided but not defined: --bogus/);
    expect(parse(['-c', empty, 'ps', '-r', 'x']).settings.runtimeEndpoint).toBeUndefined();
  });

  it('environment variables set the flags; the flag wins', () => {
    const env = {
      CONTAINER_RUNTIME_ENDPOINT: 'unix:///env.sock',
      IMAGE_SERVICE_ENDPOINT: 'unix:///img.sock',
    };
    expect(parse(['-c', empty, 'ps'], env).settings).toMatchObject({
      runtimeEndpoint: 'unix:///env.sock',
      imageEndpoint: 'unix:///img.sock',
    });
    expect(parse(['-c', empty, '-r', 'unix:///flag.sock', 'ps'], env).settings.runtimeEndpoint).toBe(
      'unix:///flag.sock',
    );
  });

  it('config file: flag and env > file > default; timeout in seconds; max-retries from the file', () => {
    const path = configFile(
      'crictl.yaml',
      'runtime-endpoint: unix:///file.sock\nimage-endpoint: unix:///file-img.sock\ntimeout: 10\ndebug: true\n',
    );
    expect(parse(['-c', path, 'ps']).settings).toMatchObject({
      runtimeEndpoint: 'unix:///file.sock',
      imageEndpoint: 'unix:///file-img.sock',
      timeoutMs: 10_000,
      debug: true,
      maxRetries: 0,
    });
    expect(parse(['ps'], { CRI_CONFIG_FILE: path }).settings.runtimeEndpoint).toBe('unix:///file.sock');
    const over = parse(['-c', path, '-r', 'unix:///flag.sock', '-t', '3s', '--debug=false', 'ps'], {
      IMAGE_SERVICE_ENDPOINT: 'unix:///env-img.sock',
    }).settings;
    expect(over).toMatchObject({
      runtimeEndpoint: 'unix:///flag.sock',
      imageEndpoint: 'unix:///env-img.sock',
      timeoutMs: 3_000,
      debug: false,
    });
  });

  it('falls back to crictl.yaml next to the executable', () => {
    configFile('crictl.yaml', 'runtime-endpoint: unix:///next-to-exe.sock\n');
    expect(parse(['-c', missing, 'ps'], {}, join(dir, 'crictl')).settings.runtimeEndpoint).toBe(
      'unix:///next-to-exe.sock',
    );
  });

  it('a missing or bad file given with --config is an error; the default one is ignored', () => {
    const exe = join(dir, 'nowhere', 'crictl');
    expect(() => parse(['-c', missing, 'ps'], {}, exe)).toThrow(
      `get server config: load config file: stat ${join(dir, 'nowhere', 'crictl.yaml')}: no such file or directory`,
    );
    expect(() => parse(['ps'], { CRI_CONFIG_FILE: missing }, exe)).toThrow(ConfigFileError);
    if (!hostHasConfig) expect(() => parse(['ps'], {}, exe)).not.toThrow();
    const bad = configFile('bad.yaml', 'timeout: soon\n');
    expect(() => parse(['-c', bad, 'ps'])).toThrow(ConfigFileError);
    expect(() => parse(['ps'], { CRI_CONFIG_FILE: bad })).toThrow(
      'get server config: load config file: parsing config option \'timeout\': strconv.Atoi: parsing "soon": invalid syntax',
    );
    expect(() => parseCrictlConfig('color: blue\n')).toThrow("Config option 'color' is not valid");
  });
});

describe('nodeagent-crictl global flags end to end', () => {
  const run = async (argv: string[], env: Record<string, string | undefined> = {}) => {
    let stdout = '';
    let stderr = '';
    const code = await runCli(argv, {
      stdout: { write: (s: string) => (stdout += s) },
      stderr: { write: (s: string) => (stderr += s) },
      env,
      socketExists: () => false,
    });
    return { code, stdout, stderr };
  };

  it('--version and -v print the version', async () => {
    const out = await run(['--version']);
    expect(out.code).toBe(0);
    expect(out.stdout).toMatch(/^nodeagent-crictl version \d+\.\d+\.\d+/);
    expect((await run(['-v'])).stdout).toBe(out.stdout);
  });

  it('a bad duration is a usage error (exit 2); --help documents the flags and that tracing is not exported', async () => {
    const bad = await run(['-t', '10', 'version']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('invalid value "10" for flag -t');
    const help = await run(['--help']);
    expect(help.code).toBe(0);
    for (const flag of [
      '--config',
      '--runtime-endpoint',
      '--image-endpoint',
      '--timeout',
      '--debug',
      '--enable-tracing',
    ]) {
      expect(help.stdout).toContain(flag);
    }
    expect(help.stdout).toMatch(/tracing is NOT implemented/);
  });

  it('warns about tracing and about the deprecated default endpoints', async () => {
    const out = await run(['-c', empty, '--enable-tracing', '-t', '200ms', 'version']);
    // (no endpoint configured and no default socket: the call fails after the warnings)
    expect(out.code).toBe(1);
    expect(out.stderr).toContain('level=warning msg="tracing is not implemented by nodeagent-crictl');
    expect(out.stderr).toContain(
      'runtime connect using default endpoints: [unix:///run/containerd/containerd.sock',
    );
  });
});
