/**
 * The command line of the standalone server, as a function: parses arguments, starts the
 * server, prints where it listens and stops on SIGINT/SIGTERM or an abort signal. The
 * `mini-apiserver` bin (`cli.ts`) only calls it with the process's streams.
 *
 * @module
 */

import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { parseArgs } from 'node:util';
import { definedFields, parseGoDuration } from '@nodeagent/core';
import { startMiniApiServer } from './server.js';
import type { MiniApiServer, MiniApiServerOptions } from './server-options.js';

const USAGE = `Usage: mini-apiserver [options]

  --port <n>                   TCP port on the listen address (default: random free port)
  --host <addr>                listen address (default: 127.0.0.1)
  --socket <path>              listen on a unix socket instead of TCP
  --kubeconfig-out <file>      write a kubeconfig for kubectl / client libraries
  --token <token>              require this bearer token (repeatable; the first goes to the kubeconfig)
  --tls self-signed            serve HTTPS with a throwaway CA + certificate (needs openssl)
  --tls-cert <file>            serve HTTPS with this PEM certificate (with --tls-key)
  --tls-key <file>             PEM private key of --tls-cert
  --tls-ca <file>              PEM CA of --tls-cert (written to the kubeconfig)
  --client-cert-auth           accept client certificates signed by the CA (CN = user); with
                               --tls self-signed a client certificate goes into the kubeconfig
  --authorization-mode <mode>  AlwaysAllow (default) or RBAC: decide with the stored Roles and
                               bindings; --token users are in system:masters
  --endpointslice-controller   maintain EndpointSlices for Services with selectors
  --schedule                   bind pods without spec.nodeName to a node that fits
  --node-lifecycle-controller  mark Nodes whose kubelet stopped heartbeating NotReady (Unknown)
                               and taint them node.kubernetes.io/unreachable
  --node-monitor-period <d>    how often Node heartbeats are checked (default: 5s)
  --node-monitor-grace-period <d>  time without a heartbeat before a Node goes Unknown
                               (default: 50s)
  --node-startup-grace-period <d>  the same for a Node that never posted status (default: 1m0s)
  --service-cluster-ip-range   IPv4 CIDR Service cluster IPs come from (default 10.0.0.0/24)
  --bookmark-interval-ms <n>   interval of watch BOOKMARK events (default: 60000)
  --watch-buffer-max-events <n>  close a watch whose client lags by more events (default: 10000, 0 = never)
  --auto-create-namespaces     create missing namespaces instead of answering 404
  --service-account-issuer <url>  iss of service account tokens (default:
                               https://kubernetes.default.svc.cluster.local)
  --api-audiences <a,b>        API audiences (default: the issuer)
  --service-account-signing-key-file <file>  PEM key signing service account tokens
                               (default: an RSA key generated on first use)
  --disable-admission-plugins ServiceAccount  store pods as sent (no default service
                               account, no kube-api-access volume)
  -v, --version                print the version
  -h, --help                   show this help
`;

/** This package's version (its package.json, through the package's own `./package.json` export). */
function packageVersion(): string {
  return (createRequire(import.meta.url)('@nodeagent/mini-apiserver/package.json') as { version: string })
    .version;
}

/** A text sink such as `process.stdout`. */
export interface CliOutput {
  /** Writes `text` as is. */
  write(text: string): unknown;
}

/** Where SIGINT/SIGTERM handlers go (`process`, or an EventEmitter in tests). */
export interface CliSignalSource {
  /** Adds a handler for the signal. */
  on(event: 'SIGINT' | 'SIGTERM', fn: () => void): unknown;
  /** Removes it again. */
  off(event: 'SIGINT' | 'SIGTERM', fn: () => void): unknown;
}

/** Where {@link runMiniApiServerCli} writes and what stops it. */
export interface MiniApiServerCliIo {
  /** Receives the "listening on" lines (e.g. `process.stdout`). */
  readonly stdout: CliOutput;
  /** Receives usage and error messages (e.g. `process.stderr`). */
  readonly stderr: CliOutput;
  /** Stops the server when aborted. */
  readonly signal?: AbortSignal;
  /**
   * Where SIGINT/SIGTERM handlers are installed (removed again on stop); `null` installs
   * none.
   * @default process
   */
  readonly signals?: CliSignalSource | null;
  /** Called with the running server once it listens (tests, embedding). */
  readonly onListening?: (server: MiniApiServer) => void;
}

/** A command-line argument that cannot be used. */
export class CliUsageError extends Error {
  override readonly name = 'CliUsageError';
}

type Values = Record<string, string | boolean | string[] | undefined>;

function nonNegative(values: Values, name: string): number | undefined {
  const v = values[name];
  if (v === undefined) return undefined;
  const n = Number(v);
  if (typeof v !== 'string' || !Number.isInteger(n) || n < 0)
    throw new CliUsageError(`--${name} must be a non-negative integer, got "${String(v)}"`);
  return n;
}

function durationMs(values: Values, name: string): number | undefined {
  const v = values[name];
  if (v === undefined) return undefined;
  try {
    if (typeof v !== 'string') throw new Error('not a string');
    return parseGoDuration(v);
  } catch {
    throw new CliUsageError(`--${name} must be a duration such as 5s or 1m0s, got "${String(v)}"`);
  }
}

async function tlsOption(values: Values): Promise<MiniApiServerOptions['tls']> {
  const str = (k: string): string | undefined =>
    typeof values[k] === 'string' ? (values[k] as string) : undefined;
  const mode = str('tls');
  const cert = str('tls-cert');
  const key = str('tls-key');
  const ca = str('tls-ca');
  if (mode !== undefined) {
    if (mode !== 'self-signed') throw new CliUsageError(`--tls accepts only "self-signed", got "${mode}"`);
    if (cert !== undefined || key !== undefined || ca !== undefined)
      throw new CliUsageError('--tls self-signed cannot be combined with --tls-cert/--tls-key/--tls-ca');
    return 'self-signed';
  }
  if (cert === undefined && key === undefined) {
    if (ca !== undefined) throw new CliUsageError('--tls-ca needs --tls-cert and --tls-key');
    return undefined;
  }
  if (cert === undefined || key === undefined)
    throw new CliUsageError('--tls-cert and --tls-key go together');
  return {
    cert: await readFile(cert, 'utf8'),
    key: await readFile(key, 'utf8'),
    ...definedFields({ ca: ca === undefined ? undefined : await readFile(ca, 'utf8') }),
  };
}

async function serverOptions(values: Values): Promise<MiniApiServerOptions> {
  const port = nonNegative(values, 'port');
  const bookmarkIntervalMs = nonNegative(values, 'bookmark-interval-ms');
  const watchBufferMaxEvents = nonNegative(values, 'watch-buffer-max-events');
  const tls = await tlsOption(values);
  const tokens = (values.token as string[] | undefined) ?? [];
  const disabled =
    typeof values['disable-admission-plugins'] === 'string'
      ? values['disable-admission-plugins'].split(',')
      : [];
  for (const plugin of disabled) {
    if (plugin !== 'ServiceAccount') {
      throw new CliUsageError(
        `--disable-admission-plugins: the only plugin is ServiceAccount, got "${plugin}"`,
      );
    }
  }
  const keyFile = values['service-account-signing-key-file'];
  const audiences = values['api-audiences'];
  const mode = values['authorization-mode'];
  if (mode !== undefined && mode !== 'AlwaysAllow' && mode !== 'RBAC')
    throw new CliUsageError(`--authorization-mode accepts AlwaysAllow or RBAC, got "${String(mode)}"`);
  if (values['client-cert-auth'] === true && tls === undefined)
    throw new CliUsageError('--client-cert-auth needs --tls self-signed or --tls-cert/--tls-key/--tls-ca');
  return {
    ...definedFields({
      port,
      host: typeof values.host === 'string' ? values.host : undefined,
      socketPath: typeof values.socket === 'string' ? values.socket : undefined,
      kubeconfigPath: typeof values['kubeconfig-out'] === 'string' ? values['kubeconfig-out'] : undefined,
      tokens: tokens.length > 0 ? tokens : undefined,
      tls,
      requestCert: values['client-cert-auth'] === true ? true : undefined,
      bookmarkIntervalMs,
      watchBufferMaxEvents,
      authorization: mode as MiniApiServerOptions['authorization'],
      serviceAccountIssuer:
        typeof values['service-account-issuer'] === 'string' ? values['service-account-issuer'] : undefined,
      apiAudiences: typeof audiences === 'string' ? audiences.split(',').filter((a) => a !== '') : undefined,
      serviceAccountSigningKey: typeof keyFile === 'string' ? await readFile(keyFile, 'utf8') : undefined,
      serviceAccountAdmission: disabled.includes('ServiceAccount') ? false : undefined,
      nodeMonitorPeriodMs: durationMs(values, 'node-monitor-period'),
      nodeMonitorGracePeriodMs: durationMs(values, 'node-monitor-grace-period'),
      nodeStartupGracePeriodMs: durationMs(values, 'node-startup-grace-period'),
    }),
    nodeLifecycleController: values['node-lifecycle-controller'] === true,
    endpointSliceController: values['endpointslice-controller'] === true,
    schedule: values.schedule === true,
    ...(typeof values['service-cluster-ip-range'] === 'string'
      ? { serviceClusterIpRange: values['service-cluster-ip-range'] }
      : {}),
    autoCreateNamespaces: values['auto-create-namespaces'] === true,
  };
}

/**
 * Runs the `mini-apiserver` command: resolves with the exit code (0 after a clean stop,
 * 2 for bad arguments, 1 when the server cannot start) once the server stopped.
 *
 * @example
 * ```ts
 * const ac = new AbortController();
 * const done = runMiniApiServerCli(['--tls', 'self-signed', '--kubeconfig-out', './kubeconfig'], {
 *   stdout: process.stdout, stderr: process.stderr, signal: ac.signal, signals: null,
 * });
 * // … use ./kubeconfig …
 * ac.abort();
 * console.log('exit code', await done);
 * ```
 */
export async function runMiniApiServerCli(argv: readonly string[], io: MiniApiServerCliIo): Promise<number> {
  let options: MiniApiServerOptions;
  try {
    const { values } = parseArgs({
      args: [...argv],
      options: {
        port: { type: 'string' },
        host: { type: 'string' },
        socket: { type: 'string' },
        'kubeconfig-out': { type: 'string' },
        token: { type: 'string', multiple: true },
        tls: { type: 'string' },
        'tls-cert': { type: 'string' },
        'tls-key': { type: 'string' },
        'tls-ca': { type: 'string' },
        'client-cert-auth': { type: 'boolean' },
        'authorization-mode': { type: 'string' },
        'endpointslice-controller': { type: 'boolean' },
        schedule: { type: 'boolean' },
        'node-lifecycle-controller': { type: 'boolean' },
        'node-monitor-period': { type: 'string' },
        'node-monitor-grace-period': { type: 'string' },
        'node-startup-grace-period': { type: 'string' },
        'service-cluster-ip-range': { type: 'string' },
        'bookmark-interval-ms': { type: 'string' },
        'watch-buffer-max-events': { type: 'string' },
        'auto-create-namespaces': { type: 'boolean' },
        'service-account-issuer': { type: 'string' },
        'api-audiences': { type: 'string' },
        'service-account-signing-key-file': { type: 'string' },
        'disable-admission-plugins': { type: 'string' },
        help: { type: 'boolean', short: 'h' },
        version: { type: 'boolean', short: 'v' },
      },
      strict: true,
      allowPositionals: false,
    });
    if (values.help) {
      io.stdout.write(USAGE);
      return 0;
    }
    if (values.version) {
      io.stdout.write(`nodeagent-mini-apiserver version ${packageVersion()}\n`);
      return 0;
    }
    options = await serverOptions(values);
  } catch (err) {
    io.stderr.write(`${(err as Error).message}\n\n${USAGE}`);
    return 2;
  }
  if (io.signal?.aborted) return 0;
  let server: MiniApiServer;
  try {
    server = await startMiniApiServer(options);
  } catch (err) {
    io.stderr.write(`mini-apiserver: ${(err as Error).message}\n`);
    return 1;
  }
  const where = server.socketPath !== undefined ? `unix:${server.socketPath}` : server.url;
  io.stdout.write(`mini-apiserver listening on ${where}\n`);
  if (server.kubeconfigPath !== undefined)
    io.stdout.write(`kubeconfig written to ${server.kubeconfigPath}\n`);
  io.onListening?.(server);
  const signals = io.signals === undefined ? process : io.signals;
  await new Promise<void>((resolve) => {
    const onStop = (): void => {
      signals?.off('SIGINT', onStop);
      signals?.off('SIGTERM', onStop);
      io.signal?.removeEventListener('abort', onStop);
      resolve();
    };
    signals?.on('SIGINT', onStop);
    signals?.on('SIGTERM', onStop);
    io.signal?.addEventListener('abort', onStop, { once: true });
    if (io.signal?.aborted) onStop();
  });
  await server.stop();
  io.stdout.write('mini-apiserver stopped\n');
  return 0;
}
