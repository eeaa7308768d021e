// FileSource against real temp directories: snapshots, dotfiles, bad manifests, fixes, rescans.
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import { join } from 'node:path';
import { FakeClock } from '@nodeagent/core/testing';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { FileSource, PodConfig, type PodSourceError } from '../src/index.js';
import { drain, podYaml } from './helpers.js';

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(os.tmpdir(), 'pod-sources-file-'));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

async function drainWhenAny(config: PodConfig) {
  const deadline = Date.now() + 5_000;
  while (config.updates.length === 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
  await new Promise((r) => setTimeout(r, 20));
  return drain(config);
}

function setup(path = dir) {
  const clock = new FakeClock();
  const config = new PodConfig({ clock });
  const errors: PodSourceError[] = [];
  const source = new FileSource({
    path,
    nodeName: 'node-1',
    sink: config.channel('file'),
    clock,
    watch: false,
    onError: (e) => errors.push(e),
  });
  return { clock, config, errors, source };
}

describe('FileSource', () => {
  it('reads every non-hidden file, sorted, one pod per file, and marks the source seen', async () => {
    await writeFile(join(dir, 'b.yaml'), podYaml('b'));
    await writeFile(
      join(dir, 'a.json'),
      JSON.stringify({
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: { name: 'a' },
        spec: { containers: [{ name: 'c', image: 'x' }] },
      }),
    );
    await writeFile(join(dir, '.hidden.yaml'), podYaml('hidden'));
    const { config, source, errors } = setup();
    await source.start();
    expect(config.seenAllSources()).toBe(true);
    expect(drain(config)).toEqual([{ op: 'ADD', source: 'file', names: ['a-node-1', 'b-node-1'] }]);
    expect(errors).toEqual([]);
    await source.stop();
  });

  it('a missing directory is an empty snapshot (seen), then pods appear at the next rescan', async () => {
    const missing = join(dir, 'later');
    const { config, source, clock } = setup(missing);
    await source.start();
    expect(drain(config)).toEqual([{ op: 'ADD', source: 'file', names: [] }]);
    const { mkdir } = await import('node:fs/promises');
    await mkdir(missing);
    await writeFile(join(missing, 'p.yaml'), podYaml('p'));
    await clock.advance(20_000);
    expect(await drainWhenAny(config)).toEqual([{ op: 'ADD', source: 'file', names: ['p-node-1'] }]);
    await source.stop();
  });

  it('rescans every 20 s of fake time: an edited manifest is a new pod (REMOVE + ADD), a deleted one a REMOVE', async () => {
    await writeFile(join(dir, 'p.yaml'), podYaml('p', 'nginx:1'));
    const { config, source, clock } = setup();
    await source.start();
    const firstUid = config.pods()[0]?.metadata?.uid;
    drain(config);
    await writeFile(join(dir, 'p.yaml'), podYaml('p', 'nginx:2'));
    await clock.advance(19_000);
    expect(drain(config)).toEqual([]);
    await clock.advance(1_000);
    // The timer's re-read runs on its own (real file I/O): wait for its snapshot.
    expect(await drainWhenAny(config)).toEqual([
      { op: 'REMOVE', source: 'file', names: ['p-node-1'] },
      { op: 'ADD', source: 'file', names: ['p-node-1'] },
    ]);
    expect(config.pods()[0]?.metadata?.uid).not.toBe(firstUid);
    await rm(join(dir, 'p.yaml'));
    await clock.advance(20_000);
    expect(await drainWhenAny(config)).toEqual([{ op: 'REMOVE', source: 'file', names: ['p-node-1'] }]);
    await source.stop();
  });

  it('bad manifests are reported with file and reason; the good pods keep going; a fixed file is picked up', async () => {
    await writeFile(join(dir, 'good.yaml'), podYaml('good'));
    await writeFile(join(dir, 'bad-yaml.yaml'), 'apiVersion: v1\nkind: Pod\nmetadata: [\n');
    await writeFile(
      join(dir, 'deploy.yaml'),
      'apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: d\n',
    );
    await writeFile(
      join(dir, 'noname.yaml'),
      'apiVersion: v1\nkind: Pod\nspec:\n  containers:\n  - name: c\n    image: x\n',
    );
    await writeFile(join(dir, 'huge.yaml'), Buffer.alloc(10 * 1024 * 1024 + 1, 0x20));
    const { config, source, errors } = setup();
    await source.start();
    expect(drain(config)).toEqual([{ op: 'ADD', source: 'file', names: ['good-node-1'] }]);
    expect(errors.map((e) => [e.code, e.location.slice(dir.length + 1)]).sort()).toEqual([
      ['Invalid', 'noname.yaml'],
      ['NotAPod', 'deploy.yaml'],
      ['TooLarge', 'huge.yaml'],
      ['Undecodable', 'bad-yaml.yaml'],
    ]);
    expect(errors.find((e) => e.code === 'TooLarge')?.message).toContain(
      '10485761 bytes, the limit is 10485760',
    );
    await writeFile(join(dir, 'deploy.yaml'), podYaml('fixed'));
    await source.resync();
    expect(drain(config)).toEqual([{ op: 'ADD', source: 'file', names: ['fixed-node-1'] }]);
    await source.stop();
  });

  it('watches the directory: a new manifest is seen without waiting for the rescan', async () => {
    const clock = new FakeClock();
    const config = new PodConfig({ clock });
    const source = new FileSource({ path: dir, nodeName: 'node-1', sink: config.channel('file'), clock });
    await source.start();
    drain(config);
    await writeFile(join(dir, 'w.yaml'), podYaml('w'));
    const deadline = Date.now() + 5_000;
    while (config.pods().length === 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    expect(config.pods().map((p) => p.metadata?.name)).toEqual(['w-node-1']);
    await source.stop();
  });
});
