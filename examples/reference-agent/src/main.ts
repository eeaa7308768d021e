/**
 * The reference node agent's bin: `nodeagent-reference-agent [flags]` (see `--help`).
 *
 * @module
 */
import { runCli } from './cli.js';

process.exitCode = await runCli(process.argv.slice(2), { stdout: process.stdout, stderr: process.stderr });
