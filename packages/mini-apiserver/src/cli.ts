/**
 * `mini-apiserver` / `nodeagent-mini-apiserver`: runs the embedded API server standalone.
 *
 * ```sh
 * npx @nodeagent/mini-apiserver --port 6443 --kubeconfig-out ./kubeconfig [--token T] [--tls self-signed]
 * ```
 *
 * @module
 */
import { runMiniApiServerCli } from './run-cli.js';

runMiniApiServerCli(process.argv.slice(2), { stdout: process.stdout, stderr: process.stderr }).then(
  (code) => {
    process.exitCode = code;
  },
  (err: unknown) => {
    process.stderr.write(`mini-apiserver: ${(err as Error).message}\n`);
    process.exitCode = 1;
  },
);
