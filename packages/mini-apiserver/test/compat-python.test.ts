// biome-ignore-all lint/suspicious/noExplicitAny: assertions read raw API JSON
// Compatibility suite: the official Python client (Debian's python3-kubernetes, run with the
// system interpreter /usr/bin/python3) for list/create/patch/delete and paging. Fails under
// CI=true when the client is missing, skips loudly otherwise.
import { spawnSync } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import type { MiniApiServer } from '../src/index.js';
import { start } from './helpers.js';

const PYTHON = '/usr/bin/python3';
const clientMissing = spawnSync(PYTHON, ['-c', 'import kubernetes'], { encoding: 'utf8' }).status !== 0;
if (clientMissing && process.env.CI !== 'true') {
  console.warn('\n*** python3-kubernetes not found: skipping the Python client compatibility suite ***\n');
}

const PRELUDE = `
import json, sys
from kubernetes import client, config
config.load_kube_config(config_file=sys.argv[1])
v1 = client.CoreV1Api()
out = {}
`;

describe.skipIf(clientMissing && process.env.CI !== 'true')('Python client compatibility', () => {
  let server: MiniApiServer;
  let dir: string;
  let kubeconfig: string;

  beforeAll(async () => {
    if (clientMissing)
      throw new Error('python3-kubernetes is required under CI=true (scripts/install-node-deps.sh)');
    dir = await mkdtemp(join(tmpdir(), 'mini-apiserver-python-'));
    kubeconfig = join(dir, 'kubeconfig');
    server = await start({ kubeconfigPath: kubeconfig });
  });
  afterAll(async () => {
    await server?.stop();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  async function python(body: string): Promise<any> {
    // Async spawn: the server runs on this event loop.
    const { spawn } = await import('node:child_process');
    return new Promise((resolve, reject) => {
      const child = spawn(PYTHON, ['-c', `${PRELUDE}${body}\nprint(json.dumps(out))`, kubeconfig]);
      let stdout = '';
      let stderr = '';
      child.stdout.on('data', (d: Buffer) => {
        stdout += d.toString();
      });
      child.stderr.on('data', (d: Buffer) => {
        stderr += d.toString();
      });
      const timer = setTimeout(() => child.kill(), 30_000);
      child.on('close', (code) => {
        clearTimeout(timer);
        if (code !== 0) reject(new Error(`python failed (${code}): ${stderr}`));
        else resolve(JSON.parse(stdout.trim().split('\n').pop() as string));
      });
    });
  }

  test('create, list with paging, patch, delete; 409 and 422 as ApiException', async () => {
    const out = await python(`
for i in range(3):
    cm = v1.create_namespaced_config_map('default', {'metadata': {'name': 'cm%d' % i}, 'data': {'k': str(i)}})
out['created_rv'] = cm.metadata.resource_version
page = v1.list_namespaced_config_map('default', limit=2, label_selector='')
out['page1'] = [c.metadata.name for c in page.items if c.metadata.name.startswith('cm')]
out['continue'] = bool(page.metadata._continue)
page2 = v1.list_namespaced_config_map('default', limit=2, _continue=page.metadata._continue)
out['page2'] = [c.metadata.name for c in page2.items if c.metadata.name.startswith('cm')]
p = v1.patch_namespaced_config_map('cm0', 'default', {'data': {'k': 'patched'}})
out['patched'] = p.data
try:
    v1.create_namespaced_config_map('default', {'metadata': {'name': 'cm0'}})
except client.exceptions.ApiException as e:
    out['conflict'] = [e.status, json.loads(e.body)['reason']]
svc = v1.create_namespaced_service('default', {'metadata': {'name': 'py'}, 'spec': {'ports': [{'port': 80}]}})
out['svc'] = [svc.spec.type, svc.spec.cluster_ip, svc.spec.ports[0].target_port, svc.spec.session_affinity]
try:
    v1.create_namespaced_service('default', {'metadata': {'name': 'py2'}, 'spec': {'clusterIP': svc.spec.cluster_ip, 'ports': [{'port': 80}]}})
except client.exceptions.ApiException as e:
    out['taken'] = [e.status, json.loads(e.body)['details']['causes'][0]['message']]
st = v1.delete_namespaced_config_map('cm1', 'default')
out['deleted'] = st.status
out['after'] = sorted(c.metadata.name for c in v1.list_namespaced_config_map('default').items if c.metadata.name.startswith('cm'))
`);
    // kube-root-ca.crt (if published) sorts before cm*: only the cm* names are compared.
    expect([...out.page1, ...out.page2].sort()).toEqual(['cm0', 'cm1', 'cm2']);
    expect(out.continue).toBe(true);
    expect(out.patched).toEqual({ k: 'patched' });
    expect(out.conflict).toEqual([409, 'AlreadyExists']);
    expect(out.svc[0]).toBe('ClusterIP');
    expect(out.svc[1]).toMatch(/^10\.0\.0\.\d+$/);
    expect(out.svc.slice(2)).toEqual([80, 'None']);
    expect(out.taken).toEqual([
      422,
      `Invalid value: []string{"${out.svc[1]}"}: failed to allocate IP ${out.svc[1]}: provided IP is already allocated`,
    ]);
    expect(out.deleted).toBe('Success');
    expect(out.after).toEqual(['cm0', 'cm2']);
  }, 60_000);
});
