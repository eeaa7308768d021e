#!/usr/bin/env node
/**
 * The `nodeagent-crictl` executable: runs {@link runCli} with the process's arguments and
 * exits with its code; Ctrl-C ends `events`.
 *
 * @module
 */
import { runCli } from './cli/run-cli.js';

const controller = new AbortController();
process.once('SIGINT', () => controller.abort());
process.exitCode = await runCli(process.argv.slice(2), {
  executablePath: process.argv[1] ?? process.execPath,
  stdout: process.stdout,
  stderr: process.stderr,
  env: process.env,
  signal: controller.signal,
});
