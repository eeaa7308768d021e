/**
 * A slow synchronous handler (5 ms of CPU per event, returns nothing) while the server
 * writes 1,000 updates of one pod at ~400/s. Each client runs in its own child process
 * (ours imports the built `dist/`, so this file runs `npx tsup` first) and samples, every
 * 20 ms, the generation its store holds. Printed: how far the store fell behind the server
 * (in updates), the longest gap between two samples (how long the event loop was held), and
 * when the handler finished. client-node 1.4 `makeInformer` with the same handler is the
 * reference. Asserts nothing about speed.
 */
import { execFileSync, spawn } from 'node:child_process';
import { dirname, join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { describe, it } from 'vitest';
import { startMiniApiServer } from '../../mini-apiserver/src/index.js';

const here = dirname(fileURLToPath(import.meta.url));
const pkgDir = join(here, '..');
const UPDATES = 1000;

interface Sample {
  readonly t: number;
  readonly stored: number;
  readonly handled: number;
}

async function run(client: 'ours' | 'client-node') {
  const server = await startMiniApiServer({
    autoCreateNamespaces: true,
    historySize: 5000,
    watchBufferMaxEvents: 0,
    watchBufferMaxBytes: 0,
  });
  const pod = {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: 'a', namespace: 'default', labels: { gen: '0' } },
    spec: { containers: [{ name: 'c', image: 'busybox' }] },
  };
  server.store.create('pods', pod as never);
  const writtenAt: number[] = [];
  const samples: Sample[] = [];
  let doneAt = 0;
  try {
    const child = spawn(
      process.execPath,
      [
        join(here, 'child-slow-handler.mjs'),
        JSON.stringify({ client, kubeconfig: server.kubeconfig, updates: UPDATES }),
      ],
      { cwd: pkgDir, stdio: ['ignore', 'pipe', 'inherit'] },
    );
    const exited = new Promise<number | null>((resolve) => child.on('exit', resolve));
    const write = async () => {
      for (let gen = 1; gen <= UPDATES; gen++) {
        const cur = server.store.get('pods', 'default', 'a');
        server.store.update('pods', {
          ...cur,
          metadata: { ...cur.metadata, labels: { gen: String(gen) } },
        } as never);
        writtenAt.push(Date.now());
        if (gen % 2 === 0) await new Promise((r) => setTimeout(r, 5));
      }
    };
    let writing: Promise<void> | undefined;
    for await (const line of createInterface({ input: child.stdout })) {
      if (!line.startsWith('BENCH ')) continue;
      const msg = JSON.parse(line.slice(6)) as { phase: string } & Sample;
      if (msg.phase === 'synced') writing = write();
      else if (msg.phase === 'sample') samples.push(msg);
      else if (msg.phase === 'done') doneAt = msg.t;
    }
    await writing;
    if ((await exited) !== 0) throw new Error(`${client} child failed`);
  } finally {
    await server.stop();
  }
  const firstWrite = writtenAt[0] ?? 0;
  const lastWrite = writtenAt.at(-1) ?? 0;
  let maxLag = 0;
  let maxGap = 0;
  for (let i = 0; i < samples.length; i++) {
    const s = samples[i] as Sample;
    const written = writtenAt.filter((t) => t <= s.t).length;
    if (s.t >= firstWrite && s.t <= lastWrite + 5000) maxLag = Math.max(maxLag, written - s.stored);
    if (i > 0) maxGap = Math.max(maxGap, s.t - (samples[i - 1] as Sample).t);
  }
  const storeCaughtUp = samples.find((s) => s.t >= lastWrite && s.stored === UPDATES)?.t ?? Number.NaN;
  return {
    maxLag,
    maxGap,
    storeAfterLastWrite: storeCaughtUp - lastWrite,
    handlerAfterLastWrite: doneAt - lastWrite,
    writeSeconds: (lastWrite - firstWrite) / 1000,
  };
}

describe('slow synchronous handler', () => {
  it('store lag and event-loop gaps with a 5 ms-per-event handler', async () => {
    execFileSync('npx', ['tsup'], { cwd: pkgDir, stdio: 'ignore' });
    const rows: string[] = [];
    for (const client of ['client-node', 'ours'] as const) {
      const r = await run(client);
      rows.push(
        `| ${client} | ${r.writeSeconds.toFixed(1)} s | ${r.maxLag} | ${r.maxGap} ms | ${r.storeAfterLastWrite} ms | ${r.handlerAfterLastWrite} ms |`,
      );
    }
    console.log(
      [
        '| client | 1,000 updates written in | store behind the server, at most (updates) | longest event-loop gap | store current after the last write | handler done after the last write |',
        '|---|---|---|---|---|---|',
        ...rows,
      ].join('\n'),
    );
  });
});
