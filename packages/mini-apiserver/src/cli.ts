/**
 * `mini-apiserver` / `nodeagent-mini-apiserver`: runs the embedded API server standalone.
 *
 * ```sh
 * npx @nodeagent/mini-apiserver --port 6443 --kubeconfig-out ./kubeconfig [--token T] [--endpointslice-controller]
 * ```
 *
 * @module
 */
import { parseArgs } from 'node:util';
import { startMiniApiServer } from './server.js';

const USAGE = `Usage: mini-apiserver [options]

  --port <n>                   TCP port on the listen address (default: random free port)
  --host <addr>                listen address (default: 127.0.0.1)
  --socket <path>              listen on a unix socket instead of TCP
  --kubeconfig-out <file>      write a kubeconfig for kubectl / client libraries
  --token <token>              require this bearer token (also written to the kubeconfig)
  --endpointslice-controller   maintain EndpointSlices for Services with selectors
  --bookmark-interval-ms <n>   interval of watch BOOKMARK events (default: 60000)
  --auto-create-namespaces     create missing namespaces instead of answering 404
  -h, --help                   show this help
`;

/** Parses arguments, starts the server and stops it on SIGINT/SIGTERM. */
export async function main(argv: readonly string[]): Promise<number> {
  let values: Record<string, string | boolean | undefined>;
  try {
    ({ values } = parseArgs({
      args: [...argv],
      options: {
        port: { type: 'string' },
        host: { type: 'string' },
        socket: { type: 'string' },
        'kubeconfig-out': { type: 'string' },
        token: { type: 'string' },
        'endpointslice-controller': { type: 'boolean' },
        'bookmark-interval-ms': { type: 'string' },
        'auto-create-namespaces': { type: 'boolean' },
        help: { type: 'boolean', short: 'h' },
      },
      strict: true,
    }));
  } catch (err) {
    process.stderr.write(`${(err as Error).message}\n\n${USAGE}`);
    return 2;
  }
  if (values.help) {
    process.stdout.write(USAGE);
    return 0;
  }
  const num = (name: string): number | undefined => {
    const v = values[name];
    if (v === undefined) return undefined;
    const n = Number(v);
    if (!Number.isInteger(n) || n < 0)
      throw new Error(`--${name} must be a non-negative integer, got "${String(v)}"`);
    return n;
  };
  const port = num('port');
  const bookmarkIntervalMs = num('bookmark-interval-ms');
  const server = await startMiniApiServer({
    ...(port !== undefined ? { port } : {}),
    ...(typeof values.host === 'string' ? { host: values.host } : {}),
    ...(typeof values.socket === 'string' ? { socketPath: values.socket } : {}),
    ...(typeof values['kubeconfig-out'] === 'string' ? { kubeconfigPath: values['kubeconfig-out'] } : {}),
    ...(typeof values.token === 'string' ? { token: values.token } : {}),
    ...(bookmarkIntervalMs !== undefined ? { bookmarkIntervalMs } : {}),
    endpointSliceController: values['endpointslice-controller'] === true,
    autoCreateNamespaces: values['auto-create-namespaces'] === true,
  });
  const where = server.socketPath !== undefined ? `unix:${server.socketPath}` : server.url;
  process.stdout.write(`mini-apiserver listening on ${where}\n`);
  if (server.kubeconfigPath !== undefined)
    process.stdout.write(`kubeconfig written to ${server.kubeconfigPath}\n`);
  await new Promise<void>((resolve) => {
    const onSignal = (): void => {
      process.off('SIGINT', onSignal);
      process.off('SIGTERM', onSignal);
      resolve();
    };
    process.on('SIGINT', onSignal);
    process.on('SIGTERM', onSignal);
  });
  await server.stop();
  process.stdout.write('mini-apiserver stopped\n');
  return 0;
}

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (err: unknown) => {
    process.stderr.write(`mini-apiserver: ${(err as Error).message}\n`);
    process.exitCode = 1;
  },
);
