// The agent's kubelet API on the embedded defaults, end to end with the real kubectl:
// kubectl → embedded mini-apiserver → the node's InternalIP and daemonEndpoints port →
// KubeletServer (client certificate of the embedded API server) → fake runtime. The
// container's `echo` steps are its log; `kubectl exec -- sh -c 'echo hi'` prints hi.
import { execFile, spawnSync } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import { get as httpsGet } from 'node:https';
import { join } from 'node:path';
import type { V1Node } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RunningAgent, runAgent } from '../src/agent.js';
import { EMBEDDED_BUSYBOX_IMAGE } from '../src/embedded-runtime.js';
import { parseKubeletServerFlags } from '../src/kubelet-server-wiring.js';
import {
  embeddedStore,
  FAST_AGENT_TIMINGS,
  makePod,
  podNamed,
  shContainer,
  testLogger,
  waitFor,
} from './helpers.js';

const NODE = 'kubelet-api-node';
const kubectlMissing = spawnSync('kubectl', ['version', '--client'], { encoding: 'utf8' }).status !== 0;
if (kubectlMissing && process.env.CI !== 'true')
  console.warn('\n*** kubectl not found: skipping the agent kubectl tests ***\n');

describe.skipIf(kubectlMissing && process.env.CI !== 'true')(
  'reference agent kubelet API with kubectl',
  () => {
    let agent: RunningAgent;

    function kubectl(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
      return new Promise((resolve) => {
        execFile(
          'kubectl',
          args,
          { env: { ...process.env, KUBECONFIG: agent.kubeconfigPath }, timeout: 20_000 },
          (err, stdout, stderr) =>
            resolve({ code: err ? Number((err as { code?: number }).code ?? 1) : 0, stdout, stderr }),
        );
      });
    }

    beforeAll(async () => {
      if (kubectlMissing) throw new Error('kubectl is required under CI=true');
      agent = await runAgent({
        nodeName: NODE,
        nodeIp: '127.0.0.1',
        kubeletServer: parseKubeletServerFlags({ address: '127.0.0.1', port: '0', 'healthz-port': '0' }),
        volumeStatsAggPeriodMs: 1000,
        ...FAST_AGENT_TIMINGS,
        logger: testLogger(),
      });
    });
    afterAll(async () => {
      await agent?.stop();
    });

    it('serves /stats/summary, /metrics/resource and /metrics/cadvisor from the stats provider', async () => {
      const get = async (path: string) => {
        // kubectl → the API server's nodes/proxy → the kubelet (mini-apiserver node-proxy.ts).
        const r = await kubectl('get', '--raw', `/api/v1/nodes/${NODE}/proxy${path}`);
        if (r.code !== 0) throw new Error(`kubectl get --raw ${path}: ${r.stderr}`);
        return r.stdout;
      };
      await agent.api.create(
        '/api/v1/namespaces/default/pods',
        makePod('measured', NODE, [shContainer('app', EMBEDDED_BUSYBOX_IMAGE, 'sleep 600')]),
      );
      await waitFor(
        'measured Running',
        () => podNamed(agent, 'measured')?.status?.phase === 'Running',
        20_000,
      );
      const summary = await waitFor('a summary with the pod', async () => {
        const s = JSON.parse(await get('/stats/summary')) as {
          node: { nodeName: string; memory?: { availableBytes?: number } };
          pods: { podRef: { name: string }; containers: { name: string }[] }[];
        };
        return s.pods.some((p) => p.podRef.name === 'measured') ? s : undefined;
      });
      expect(summary.node.nodeName).toBe(NODE);
      expect(summary.node.memory?.availableBytes).toBeGreaterThan(0);
      expect(summary.pods.find((p) => p.podRef.name === 'measured')?.containers.map((c) => c.name)).toEqual([
        'app',
      ]);
      const resource = await get('/metrics/resource');
      expect(resource).toMatch(
        /^pod_memory_working_set_bytes\{namespace="default",pod="measured"\} \S+ \d+$/m,
      );
      expect(resource).toMatch(/^resource_scrape_error 0$/m);
      // only_cpu_and_memory: what metrics-server asks for, nothing but CPU and memory.
      const small = JSON.parse(await get('/stats/summary?only_cpu_and_memory=true')) as {
        node: Record<string, unknown>;
        pods: Record<string, unknown>[];
      };
      expect(
        Object.keys(small.node).filter(
          (k) => !['nodeName', 'startTime', 'cpu', 'memory', 'swap', 'systemContainers'].includes(k),
        ),
      ).toEqual([]);
      expect(small.pods.some((p) => (p.podRef as { name: string }).name === 'measured')).toBe(true);
      // cAdvisor's series come from cgroups, which the embedded fake runtime has none of: only
      // the scrape status (on containerd the stats package's real-node test covers the series).
      expect(await get('/metrics/cadvisor')).toMatch(/^container_scrape_error 0$/m);
    });

    it('serves the kubelet metrics on /metrics and the prober metrics on /metrics/probes', async () => {
      await agent.api.create('/api/v1/namespaces/default/pods', {
        ...makePod('probed', NODE, [
          {
            ...shContainer('app', EMBEDDED_BUSYBOX_IMAGE, 'touch /tmp/ready; sleep 600'),
            readinessProbe: { exec: { command: ['cat', '/tmp/ready'] }, periodSeconds: 1 },
          },
        ]),
      });
      await waitFor('probed Running', () => podNamed(agent, 'probed')?.status?.phase === 'Running', 20_000);
      const metrics = await waitFor('running pods counted', async () => {
        const r = await kubectl('get', '--raw', `/api/v1/nodes/${NODE}/proxy/metrics`);
        return /^kubelet_running_pods [1-9]/m.test(r.stdout) ? r.stdout : undefined;
      });
      expect(metrics).toMatch(new RegExp(`^kubelet_node_name\\{node="${NODE}"\\} 1$`, 'm'));
      expect(metrics).toMatch(/^kubelet_running_containers\{container_state="running"\} [1-9]/m);
      for (const name of [
        'kubelet_pleg_relist_duration_seconds_bucket',
        'kubelet_runtime_operations_total',
        'kubelet_started_pods_total',
        'kubelet_started_containers_total',
        'kubelet_pod_worker_duration_seconds_bucket',
        'kubelet_working_pods',
        'rest_client_requests_total',
        'workqueue_depth',
        'process_start_time_seconds',
      ]) {
        expect(metrics, name).toMatch(new RegExp(`^${name}[{ ]`, 'm'));
      }
      // The ApiClient's writes are counted as client-go counts every request (pod creation
      // POST, status PATCH), and each one's wait for the --kube-api-qps limiter is observed.
      const lines = metrics.split('\n');
      for (const method of ['POST', 'PATCH']) {
        expect(
          lines.some((l) => l.startsWith('rest_client_requests_total{') && l.includes(`method="${method}"`)),
          method,
        ).toBe(true);
        expect(
          lines.some(
            (l) =>
              l.startsWith('rest_client_rate_limiter_duration_seconds_count{') &&
              l.includes(`verb="${method}"`),
          ),
          method,
        ).toBe(true);
      }
      expect(metrics).not.toMatch(/^prober_probe_total/m);
      const probes = await waitFor('a successful readiness probe counted', async () => {
        const r = await kubectl('get', '--raw', `/api/v1/nodes/${NODE}/proxy/metrics/probes`);
        return /^prober_probe_total\{[^}]*result="successful"/m.test(r.stdout) ? r.stdout : undefined;
      });
      const total = probes
        .split('\n')
        .find((l) => l.startsWith('prober_probe_total{') && l.includes('pod="probed"'));
      for (const label of [
        'probe_type="Readiness"',
        'result="successful"',
        'container="app"',
        'namespace="default"',
      ])
        expect(total).toContain(label);
      expect(total).toMatch(/pod_uid="[0-9a-f-]+"/);
      expect(total).toMatch(/\} [1-9]\d*$/);
      expect(probes).toMatch(/^prober_probe_duration_seconds_bucket\{[^}]*probe_type="Readiness"[^}]*\}/m);
      expect(probes).toMatch(/^process_start_time_seconds \d+/m);
      expect(probes).not.toMatch(/^kubelet_/m);
      // The same text straight from the kubelet port over HTTPS (anonymous, AlwaysAllow).
      const direct = await new Promise<{ status: number; type: string; body: string }>((resolve, reject) => {
        const req = httpsGet(
          {
            host: '127.0.0.1',
            port: agent.kubeletServer?.port ?? 0,
            path: '/metrics/probes',
            rejectUnauthorized: false,
          },
          (rs) => {
            let body = '';
            rs.setEncoding('utf8');
            rs.on('data', (d: string) => (body += d));
            rs.on('end', () =>
              resolve({ status: rs.statusCode ?? 0, type: String(rs.headers['content-type']), body }),
            );
          },
        );
        req.on('error', reject);
      });
      expect(direct.status).toBe(200);
      expect(direct.type).toBe('text/plain; version=0.0.4; charset=utf-8');
      expect(direct.body).toMatch(/^prober_probe_total\{[^}]*pod="probed"/m);
    });

    it('reports the pod volumes in the summary: emptyDir usage (du) and configMap, in ephemeral-storage too', async () => {
      await agent.api.create('/api/v1/namespaces/default/configmaps', {
        metadata: { name: 'settings' },
        data: { 'app.conf': 'x'.repeat(3000) },
      });
      await agent.api.create(
        '/api/v1/namespaces/default/pods',
        makePod(
          'stored',
          NODE,
          [
            {
              ...shContainer('app', EMBEDDED_BUSYBOX_IMAGE, 'sleep 600'),
              volumeMounts: [
                { name: 'scratch', mountPath: '/scratch' },
                { name: 'settings', mountPath: '/etc/app' },
                { name: 'host', mountPath: '/host' },
              ],
            },
          ],
          {
            volumes: [
              { name: 'scratch', emptyDir: {} },
              { name: 'settings', configMap: { name: 'settings' } },
              { name: 'host', hostPath: { path: '/tmp' } },
            ],
          },
        ),
      );
      await waitFor('stored Running', () => podNamed(agent, 'stored')?.status?.phase === 'Running', 20_000);
      const uid = podNamed(agent, 'stored')?.metadata?.uid ?? '';
      const scratch = agent.volumes.getMountedVolumesForPod(uid).get('scratch')?.hostPath ?? '';
      await writeFile(join(scratch, 'blob'), Buffer.alloc(256 * 1024, 7));
      type Vol = { name: string; usedBytes: number; capacityBytes: number; inodesUsed: number };
      const pod = await waitFor(
        'volume stats with the blob',
        async () => {
          const r = await kubectl('get', '--raw', `/api/v1/nodes/${NODE}/proxy/stats/summary`);
          const s = JSON.parse(r.stdout) as {
            pods: { podRef: { name: string }; volume?: Vol[]; 'ephemeral-storage'?: { usedBytes: number } }[];
          };
          const p = s.pods.find((x) => x.podRef.name === 'stored');
          return (p?.volume?.find((v) => v.name === 'scratch')?.usedBytes ?? 0) >= 256 * 1024 ? p : undefined;
        },
        20_000,
      );
      // hostPath reports no usage (upstream MetricsNil); the kube-api-access projected volume
      // is there only when the service account admission added it.
      const names = (pod.volume ?? []).map((v) => v.name);
      expect(names).toEqual(expect.arrayContaining(['scratch', 'settings']));
      expect(names).not.toContain('host');
      const settings = pod.volume?.find((v) => v.name === 'settings');
      expect(settings?.usedBytes).toBeGreaterThanOrEqual(3000);
      expect(settings?.capacityBytes).toBeGreaterThan(0);
      const volumesUsed = (pod.volume ?? []).reduce((n, v) => n + v.usedBytes, 0);
      expect(pod['ephemeral-storage']?.usedBytes).toBeGreaterThanOrEqual(volumesUsed);
    });

    it('reports the kubelet port in daemonEndpoints', async () => {
      const node = await waitFor(
        'node',
        () => embeddedStore(agent).tryGet('nodes', '', NODE) as V1Node | undefined,
      );
      expect(node.status?.daemonEndpoints?.kubeletEndpoint?.Port).toBe(agent.kubeletServer?.port);
      expect(agent.kubeletServer?.port).toBeGreaterThan(0);
    });

    it('kubectl logs shows the echo output; kubectl exec runs echo', async () => {
      await agent.api.create(
        '/api/v1/namespaces/default/pods',
        makePod('talker', NODE, [
          shContainer('app', EMBEDDED_BUSYBOX_IMAGE, "echo 'hello from talker'; echo second line; sleep 600"),
        ]),
      );
      await waitFor('talker Running', () => podNamed(agent, 'talker')?.status?.phase === 'Running', 20_000);
      const logs = await waitFor('log lines', async () => {
        const r = await kubectl('logs', 'talker');
        return r.stdout.includes('second line') ? r : undefined;
      });
      expect(logs.stdout).toBe('hello from talker\nsecond line\n');
      expect((await kubectl('logs', 'talker', '--tail=1')).stdout).toBe('second line\n');
      expect(await kubectl('exec', 'talker', '--', 'sh', '-c', 'echo hi')).toMatchObject({
        code: 0,
        stdout: 'hi\n',
      });
    });
  },
);
