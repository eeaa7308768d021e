/**
 * @nodeagent/informer vs @kubernetes/client-node 1.4 `makeInformer`, fed by the same
 * in-process mini-apiserver. Each client runs in its own child process (plain JS; ours
 * imports the built `dist/`, so this file runs `npx tsup` first) so that RSS, heap and
 * CPU are per client. Prints a side-by-side table; asserts nothing about speed.
 *
 * Sizes can be overridden: INFORMER_BENCH_SIZES=10000,50000 INFORMER_BENCH_UPDATES=100000.
 */
import { execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { describe, it } from 'vitest';
import { startMiniApiServer } from '../../mini-apiserver/src/index.js';
import { benchPod } from './pods.js';

const here = dirname(fileURLToPath(import.meta.url));
const pkgDir = join(here, '..');
const SIZES = (process.env.INFORMER_BENCH_SIZES ?? '10000,50000').split(',').map(Number);
const UPDATES = Number(process.env.INFORMER_BENCH_UPDATES ?? 100_000);

interface Synced {
  syncMs: number;
  size: number;
  peakRssMb: number;
  heapPerObject: number;
}
interface Updates {
  eventsPerSecond: number;
  cpuUsPerEvent: number;
}

type Client = 'ours' | 'client-node';

async function runChild(
  client: Client,
  kubeconfig: string,
  expected: number,
  updates: number,
  onSynced: () => Promise<void>,
): Promise<{ synced: Synced; updates?: Updates }> {
  const script = join(here, client === 'ours' ? 'child-ours.mjs' : 'child-client-node.mjs');
  const child = spawn(
    process.execPath,
    ['--expose-gc', script, JSON.stringify({ kubeconfig, expected, updates })],
    {
      cwd: pkgDir,
      stdio: ['ignore', 'pipe', 'inherit'],
    },
  );
  const result: { synced?: Synced; updates?: Updates } = {};
  const exited = new Promise<number | null>((resolve) => child.on('exit', resolve));
  for await (const line of createInterface({ input: child.stdout })) {
    if (!line.startsWith('BENCH ')) continue;
    const msg = JSON.parse(line.slice(6)) as { phase: string } & Synced & Updates;
    if (msg.phase === 'synced') {
      result.synced = msg;
      if (updates > 0) await onSynced();
    } else if (msg.phase === 'updates') result.updates = msg;
  }
  const code = await exited;
  if (code !== 0 || !result.synced) throw new Error(`${client} child exited with ${code}`);
  return result as { synced: Synced; updates?: Updates };
}

const fmt = (n: number | undefined, digits = 0) => (n === undefined ? '—' : n.toFixed(digits));

describe('informer benchmark: @nodeagent/informer vs @kubernetes/client-node makeInformer', () => {
  it('initial sync, peak RSS, heap per pod, watch CPU per event', async () => {
    execFileSync('npx', ['tsup'], { cwd: pkgDir, stdio: 'ignore' });
    const rows: string[][] = [];
    const tmp = mkdtempSync(join(tmpdir(), 'informer-bench-'));
    try {
      for (const size of SIZES) {
        // The update phase floods the watch faster than either client reads it; the server's
        // slow-consumer cut-off would turn the throughput figure into a relist test, so it is off.
        const server = await startMiniApiServer({
          autoCreateNamespaces: true,
          historySize: 1000,
          watchBufferMaxEvents: 0,
          watchBufferMaxBytes: 0,
        });
        try {
          for (let i = 0; i < size; i++) server.store.create('pods', benchPod(i) as never);
          const withUpdates = size === SIZES[0] ? UPDATES : 0;
          for (const client of ['client-node', 'ours'] as const) {
            const res = await runChild(client, server.kubeconfig, size, withUpdates, async () => {
              // Updates spread over the pods, in batches so the server can stream them.
              for (let u = 0; u < withUpdates; u++) {
                const i = u % size;
                const name = `pod-${i.toString().padStart(6, '0')}`;
                const cur = server.store.get('pods', `ns-${i % 20}`, name);
                server.store.update('pods', {
                  ...cur,
                  metadata: { ...cur.metadata, labels: { ...cur.metadata?.labels, gen: String(u) } },
                } as never);
                if (u % 500 === 499) await new Promise((r) => setImmediate(r));
              }
            });
            rows.push([
              client,
              String(size),
              fmt(res.synced.syncMs),
              fmt(res.synced.peakRssMb),
              fmt(res.synced.heapPerObject),
              fmt(res.updates?.eventsPerSecond),
              fmt(res.updates?.cpuUsPerEvent, 1),
            ]);
          }
        } finally {
          await server.stop();
        }
      }
    } finally {
      rmSync(tmp, { recursive: true, force: true });
    }
    const header = ['client', 'pods', 'sync ms', 'peak RSS MB', 'heap B/pod', 'updates/s', 'CPU µs/update'];
    const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
    const line = (r: string[]) => r.map((c, i) => c.padStart(widths[i] ?? 0)).join(' | ');
    console.log(
      `\n${line(header)}\n${widths.map((w) => '-'.repeat(w)).join('-|-')}\n${rows.map(line).join('\n')}\n`,
    );
  });
});
