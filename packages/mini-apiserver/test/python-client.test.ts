// biome-ignore-all lint/suspicious/noExplicitAny: assertions read raw API JSON
import { execFile, spawnSync } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, test } from 'vitest';
import type { MiniApiServer } from '../src/index.js';
import { isTrueParam } from '../src/query-params.js';
import { call, openWatch, pod, start } from './helpers.js';

let server: MiniApiServer | undefined;
afterEach(async () => {
  await server?.stop();
  server = undefined;
});

describe('boolean query parameters as the parameter codec reads them', () => {
  test('only absent, 0 and any casing of false are false (Convert_Slice_string_To_bool)', () => {
    for (const v of ['true', 'True', 'TRUE', '1', 't', 'yes', '']) expect(isTrueParam(v)).toBe(true);
    for (const v of ['false', 'False', 'FALSE', 'fAlSe', '0']) expect(isTrueParam(v)).toBe(false);
    expect(isTrueParam(null)).toBe(false);
  });

  test('watch=True and allowWatchBookmarks=True start a watch with bookmarks', async () => {
    server = await start({ bookmarkIntervalMs: 50 });
    await call(server, 'POST', '/api/v1/namespaces/default/pods', pod('a'));
    const w = await openWatch(server, '/api/v1/namespaces/default/pods?watch=True&allowWatchBookmarks=True');
    expect(w.status).toBe(200);
    const events = await w.waitFor(2, 5000);
    expect(events[0]).toMatchObject({ type: 'ADDED', object: { metadata: { name: 'a' } } });
    expect(events.some((e) => e.type === 'BOOKMARK')).toBe(true);
    w.close();
    expect(server.requests.at(-1)?.watch).toBe(true);
  });

  test('watch=False and watch=0 list', async () => {
    server = await start();
    for (const v of ['False', '0']) {
      const r = await call(server, 'GET', `/api/v1/namespaces/default/pods?watch=${v}`);
      expect(r.body.kind).toBe('PodList');
    }
  });
});

// Debian's python3-kubernetes lives in the system interpreter, which a pyenv shim may hide.
const python = ['python3', '/usr/bin/python3'].find(
  (p) => spawnSync(p, ['-c', 'import kubernetes'], { encoding: 'utf8' }).status === 0,
);
const pythonMissing = python === undefined;
if (pythonMissing && process.env.CI !== 'true') {
  console.warn('\n*** python3-kubernetes not found: skipping the Python client tests ***\n');
}

describe.skipIf(pythonMissing && process.env.CI !== 'true')('the official Python client', () => {
  test('watch.Watch().stream(list_namespaced_pod) yields the events', async () => {
    if (pythonMissing) throw new Error('python3-kubernetes is required under CI=true');
    const dir = await mkdtemp(join(tmpdir(), 'mini-apiserver-python-'));
    try {
      const s = await start({ kubeconfigPath: join(dir, 'kubeconfig') });
      server = s;
      await call(s, 'POST', '/api/v1/namespaces/default/pods', pod('first'));
      const script = join(dir, 'watch.py');
      await writeFile(
        script,
        [
          'import json, sys',
          'from kubernetes import client, config, watch',
          `config.load_kube_config(config_file=${JSON.stringify(join(dir, 'kubeconfig'))})`,
          'v1 = client.CoreV1Api()',
          'w = watch.Watch()',
          'out = []',
          "for ev in w.stream(v1.list_namespaced_pod, 'default', timeout_seconds=2, allow_watch_bookmarks=True):",
          "    out.append([ev['type'], ev['object'].metadata.name])",
          "    if ev['object'].metadata.name == 'second':",
          '        w.stop()',
          'print(json.dumps(out))',
        ].join('\n'),
      );
      const run = new Promise<string>((resolve, reject) => {
        execFile(python ?? 'python3', [script], { timeout: 20_000 }, (err, stdout, stderr) => {
          if (err) reject(new Error(`python failed: ${stderr || err.message}`));
          else resolve(stdout);
        });
      });
      // Created once the watch is open (the Python client lists first with watch=True).
      for (let i = 0; i < 100 && !s.requests.some((r) => r.watch); i++)
        await new Promise((r) => setTimeout(r, 50));
      await call(s, 'POST', '/api/v1/namespaces/default/pods', pod('second'));
      const events = JSON.parse(await run);
      expect(events).toEqual([
        ['ADDED', 'first'],
        ['ADDED', 'second'],
      ]);
      const watchReq = s.requests.find((r) => r.watch);
      expect(watchReq?.query.watch).toBe('True');
      // Resumption from a list's resource_version: only later events arrive.
      const resume = join(dir, 'resume.py');
      await writeFile(
        resume,
        [
          'import json',
          'from kubernetes import client, config, watch',
          `config.load_kube_config(config_file=${JSON.stringify(join(dir, 'kubeconfig'))})`,
          'v1 = client.CoreV1Api()',
          "rv = v1.list_namespaced_pod('default').metadata.resource_version",
          "v1.delete_namespaced_pod('first', 'default', grace_period_seconds=0)",
          'out = []',
          "for ev in watch.Watch().stream(v1.list_namespaced_pod, 'default', resource_version=rv, timeout_seconds=1):",
          "    out.append([ev['type'], ev['object'].metadata.name])",
          'print(json.dumps(out))',
        ].join('\n'),
      );
      const resumed = await new Promise<string>((resolve, reject) => {
        execFile(python ?? 'python3', [resume], { timeout: 20_000 }, (err, stdout, stderr) => {
          if (err) reject(new Error(`python failed: ${stderr || err.message}`));
          else resolve(stdout);
        });
      });
      expect(JSON.parse(resumed)).toEqual([['DELETED', 'first']]);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
