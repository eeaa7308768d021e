// close() must leave nothing that keeps the process alive: a child process makes real calls
// through the client (bundled from src with esbuild) and must then exit on its own.
import { spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { buildSync } from 'esbuild';
import { afterEach, expect, it } from 'vitest';
import { type MinimalServer, startMinimalServer, tempSocketDir } from './minimal-runtime-server.js';

const sock = tempSocketDir();
let server: MinimalServer | undefined;
afterEach(async () => {
  await server?.stop();
  sock.cleanup();
});

function runChild(script: string): Promise<{ code: number | null; stderr: string; timedOut: boolean }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [script], { stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (d: Buffer) => {
      stderr += d.toString();
    });
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      child.kill('SIGKILL');
    }, 15_000);
    child.on('exit', (code) => {
      clearTimeout(timer);
      resolve({ code, stderr, timedOut });
    });
  });
}

it('a process exits by itself after close(), with a watch stream still open', async () => {
  const socketPath = join(sock.dir, 'cri.sock');
  server = await startMinimalServer(socketPath, {
    runtime: {
      version: (_call, cb) =>
        cb(null, { version: '', runtimeName: 'x', runtimeVersion: '', runtimeApiVersion: '' }),
      getContainerEvents: (call) => {
        call.write({ containerId: 'c', containerEventType: 0, createdAt: 0n, containersStatuses: [] });
      },
    },
  });
  const entry = join(sock.dir, 'entry.ts');
  const clientSrc = fileURLToPath(new URL('../src/client.ts', import.meta.url));
  writeFileSync(
    entry,
    `import { createCriClient } from ${JSON.stringify(clientSrc)};
async function main() {
const cri = createCriClient(${JSON.stringify(`unix://${socketPath}`)});
await cri.runtime.version();
const events = cri.runtime.getContainerEvents();
for await (const _ of events) break;
const controller = new AbortController();
const watch = (async () => { for await (const _ of cri.runtime.getContainerEvents({}, { signal: controller.signal })) {} })();
controller.abort();
await watch;
await cri.runtime.listContainers().catch(() => undefined); // UNIMPLEMENTED on this server
// A watch still open when the client closes: close() must end it (CANCELLED), not leave it.
let received = 0;
const open = (async () => { for await (const _ of cri.runtime.getContainerEvents()) received++; })();
while (received === 0) await new Promise((r) => setTimeout(r, 10));
const ended = open.then(() => 'ended', (error) => error.code);
cri.close();
if ((await ended) !== 'CANCELLED') throw new Error('the open watch did not end with CANCELLED');
}
main().catch((error) => { console.error(error); process.exitCode = 1; });
`,
  );
  const bundle = join(sock.dir, 'entry.cjs');
  buildSync({
    entryPoints: [entry],
    bundle: true,
    platform: 'node',
    format: 'cjs',
    target: 'node20',
    outfile: bundle,
    nodePaths: [fileURLToPath(new URL('../../../node_modules', import.meta.url))],
    conditions: ['@nodeagent/source'],
    logLevel: 'silent',
  });
  const result = await runChild(bundle);
  expect(result.stderr).toBe('');
  expect(result.timedOut).toBe(false);
  expect(result.code).toBe(0);
});
