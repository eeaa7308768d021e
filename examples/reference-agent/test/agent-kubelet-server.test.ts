// The agent's kubelet API on the embedded defaults, end to end with the real kubectl:
// kubectl → embedded mini-apiserver → the node's InternalIP and daemonEndpoints port →
// KubeletServer (client certificate of the embedded API server) → fake runtime. The
// container's `echo` steps are its log; `kubectl exec -- sh -c 'echo hi'` prints hi.
import { execFile, spawnSync } from 'node:child_process';
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
