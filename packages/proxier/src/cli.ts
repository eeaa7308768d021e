/**
 * The `nodeagent-proxy` executable: runs {@link runProxyCli} with the process's arguments,
 * streams and environment, and exits with its code.
 *
 * @module
 */
import { runProxyCli } from './cli/run-proxy-cli.js';

process.exitCode = await runProxyCli(process.argv.slice(2), {
  stdout: process.stdout,
  stderr: process.stderr,
  env: process.env,
});
