// The agent's kubelet API on the embedded defaults, end to end with the real kubectl:
// kubectl → embedded mini-apiserver → the node's InternalIP and daemonEndpoints port →
// KubeletServer (client certificate of the embedded API server) → fake runtime. The
// container's `echo` steps are its log; `kubectl exec -- sh -c 'echo hi'` prints hi.
import { execFile, spawnSync } from 'node:child_process';
import { get as httpsGet } from 'node:https';
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
        ...FAST_AGENT_TIMINGS,
        logger: testLogger(),
      });
    });
    afterAll(async () => {
      await agent?.stop();
    });

    it('serves /stats/summary, /metrics/resource and /metrics/cadvisor from the stats provider', async () => {
      const port = agent.kubeletServer?.port ?? 0;
      const get = async (path: string) => {
        const r = await kubectl('get', '--raw', `/api/v1/nodes/${NODE}/proxy${path}`);
        if (r.code === 0) return r.stdout;
        // Without the API server's nodes/proxy, ask the kubelet directly (anonymous, AlwaysAllow).
        const res = await new Promise<string>((resolve, reject) => {
          const req = httpsGet({ host: '127.0.0.1', port, path, rejectUnauthorized: false }, (rs) => {
            let body = '';
            rs.setEncoding('utf8');
            rs.on('data', (d: string) => (body += d));
            rs.on('end', () => resolve(body));
          });
          req.on('error', reject);
        });
        return res;
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
      // cAdvisor's series come from cgroups, which the embedded fake runtime has none of: only
      // the scrape status (on containerd the stats package's real-node test covers the series).
      expect(await get('/metrics/cadvisor')).toMatch(/^container_scrape_error 0$/m);
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
