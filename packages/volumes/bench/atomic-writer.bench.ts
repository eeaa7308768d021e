// The atomic writer on a kube-api-access-sized payload (token, ca.crt, namespace): a changed
// payload (new timestamped directory, symlink swap, old directory removed) and an unchanged
// one (compare only), next to the floor of writing the same three files in place with
// writeFile. Prints µs per write; asserts nothing about speed.
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AtomicWriter, type FileProjection } from '@nodeagent/volumes';
import { it } from 'vitest';

const N = 200;

function payload(version: number): Map<string, FileProjection> {
  return new Map([
    [
      'token',
      { data: Buffer.from(`eyJhbGciOiJSUzI1NiJ9.${String(version).padStart(900, 'x')}`), mode: 0o644 },
    ],
    ['ca.crt', { data: Buffer.from('-----BEGIN CERTIFICATE-----\n'.padEnd(1500, 'A')), mode: 0o644 }],
    ['namespace', { data: Buffer.from('default'), mode: 0o644 }],
  ]);
}

async function best(run: () => Promise<void>, rounds = 3): Promise<number> {
  let fastest = Number.POSITIVE_INFINITY;
  for (let i = 0; i < rounds; i++) {
    const t0 = performance.now();
    await run();
    fastest = Math.min(fastest, performance.now() - t0);
  }
  return fastest;
}

it('atomic writer: changed and unchanged payloads vs plain writeFile', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'nodeagent-volumes-bench-'));
  try {
    const writer = new AtomicWriter(dir);
    let v = 0;
    const changed = await best(async () => {
      for (let i = 0; i < N; i++) await writer.write(payload(++v));
    });
    const unchanged = await best(async () => {
      for (let i = 0; i < N; i++) await writer.write(payload(v));
    });
    const plainDir = join(dir, 'plain');
    await mkdir(plainDir);
    const plain = await best(async () => {
      for (let i = 0; i < N; i++)
        for (const [k, f] of payload(i)) await writeFile(join(plainDir, k), f.data, { mode: f.mode });
    });
    const us = (ms: number) => ((ms * 1000) / N).toFixed(0);
    console.log(`atomic writer, ${N} writes of 3 files (best of 3):`);
    console.log(`  changed payload   ${us(changed)} µs/write`);
    console.log(`  unchanged payload ${us(unchanged)} µs/write (compare only)`);
    console.log(`  plain writeFile   ${us(plain)} µs/write (reference floor, not atomic)`);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}, 120_000);
