// `kubectl logs` of a large CRI log through readContainerLog (what /containerLogs streams),
// next to references measured in the same run on the same file: a raw copy of the file
// (the I/O floor) and a bare line-by-line parse (readline + parseCriLogEntry + writing the
// content: the least work the format requires). Also --tail=10 of the same file, which
// seeks from the end. Prints the median CPU ms and wall ms of KUBELET_LOG_BENCH_ROUNDS
// alternating rounds. Asserts nothing about speed.
import { createReadStream } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { parseCriLogEntry } from '@nodeagent/cri';
import { afterAll, beforeAll, it } from 'vitest';
import { readContainerLog } from '../src/index.js';

const ROUNDS = Number(process.env.KUBELET_LOG_BENCH_ROUNDS ?? 5);
const LINES = Number(process.env.KUBELET_LOG_BENCH_LINES ?? 400_000); // ~50 MB at ~130 bytes a line
let dir: string;
let path: string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'kubelet-log-bench-'));
  path = join(dir, '0.log');
  const parts: string[] = [];
  for (let i = 0; i < LINES; i++) {
    parts.push(
      `2024-05-01T10:00:00.${String(i % 1e9).padStart(9, '0')}Z ${i % 7 === 0 ? 'stderr' : 'stdout'} F line ${i} ${'x'.repeat(60 + (i % 40))}\n`,
    );
  }
  await writeFile(path, parts.join(''));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

function sink(): Writable & { bytes: number } {
  const w = new Writable({
    write(chunk: Buffer, _enc, cb) {
      w.bytes += chunk.length;
      cb();
    },
  }) as Writable & { bytes: number };
  w.bytes = 0;
  return w;
}

async function measure(fn: () => Promise<void>): Promise<{ cpuMs: number; wallMs: number }> {
  const cpu = process.cpuUsage();
  const t0 = performance.now();
  await fn();
  const used = process.cpuUsage(cpu);
  return { cpuMs: (used.user + used.system) / 1000, wallMs: performance.now() - t0 };
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? 0;

it('prints readContainerLog next to a raw copy and a bare parse of the same log', async () => {
  const cases: Record<string, () => Promise<void>> = {
    'raw copy (I/O floor)': () => pipeline(createReadStream(path), sink()),
    'bare parse (readline + parseCriLogEntry)': async () => {
      const out = sink();
      for await (const line of createInterface({
        input: createReadStream(path),
        crlfDelay: Number.POSITIVE_INFINITY,
      })) {
        if (line === '') continue;
        const e = parseCriLogEntry(line);
        out.write(e.partial ? e.content : `${e.content}\n`);
      }
    },
    'readContainerLog (ours)': () => readContainerLog(path, {}, sink(), { isRunning: async () => false }),
    'readContainerLog --timestamps': () =>
      readContainerLog(path, { timestamps: true }, sink(), { isRunning: async () => false }),
    'readContainerLog --tail=10': () =>
      readContainerLog(path, { tailLines: 10 }, sink(), { isRunning: async () => false }),
  };
  const results: Record<string, { cpu: number[]; wall: number[] }> = {};
  for (let r = 0; r < ROUNDS; r++) {
    for (const [name, fn] of Object.entries(cases)) {
      const m = await measure(fn);
      results[name] ??= { cpu: [], wall: [] };
      results[name].cpu.push(m.cpuMs);
      results[name].wall.push(m.wallMs);
    }
  }
  const mb = (LINES * 130) / 1e6;
  console.log(`\ncontainer log of ${LINES} lines (~${mb.toFixed(0)} MB), median of ${ROUNDS} rounds:`);
  for (const [name, r] of Object.entries(results)) {
    console.log(
      `  ${name.padEnd(42)} cpu ${median(r.cpu).toFixed(0).padStart(6)} ms   wall ${median(r.wall).toFixed(0).padStart(6)} ms`,
    );
  }
}, 600_000);
