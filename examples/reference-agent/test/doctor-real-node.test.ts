// `nodeagent doctor` against a real containerd in a private node sandbox: Version and the
// RuntimeReady/NetworkReady conditions read over CRI, the cgroup driver compared when the
// runtime answers RuntimeConfig (containerd 1.6 does not: "unknown", not an error), the image
// filesystem taken from ImageFsInfo; with containerd stopped the runtime check is an error.
import { type NodeSandbox, startNodeSandbox } from '@nodeagent/test-support/node-sandbox';
import { describeRealNode } from '@nodeagent/test-support/real-node';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { runCli } from '../src/cli.js';

function sink() {
  const chunks: string[] = [];
  return { write: (t: string) => chunks.push(t), text: () => chunks.join('') };
}

interface Finding {
  check: string;
  severity: string;
  message: string;
  subject?: string;
  skipped?: boolean;
}

async function doctor(endpoint: string, rootDir: string): Promise<Finding[]> {
  const out = sink();
  await runCli(
    [
      'doctor',
      '--json',
      `--container-runtime-endpoint=${endpoint}`,
      `--root-dir=${rootDir}`,
      '--healthz-port=0',
      '--timeout=5s',
    ],
    { stdout: out, stderr: sink(), handleSignals: false },
  );
  return (JSON.parse(out.text()) as { findings: Finding[] }).findings;
}

describeRealNode(
  'nodeagent doctor on a real containerd',
  ['root', 'netns', 'containerd', 'runc', 'cni', 'busybox'],
  () => {
    let node: NodeSandbox;
    beforeAll(async () => {
      node = await startNodeSandbox({ name: 'drnode' });
    });
    afterAll(async () => {
      await node?.stop();
    });

    it('reads Version, the conditions, the cgroup driver and the image filesystem over CRI', async () => {
      const f = await doctor(node.criEndpoint, node.rootDir);
      const runtime = f.filter((x) => x.check === 'runtime');
      expect(runtime[0]).toMatchObject({
        severity: 'ok',
        message: expect.stringMatching(/^containerd \S+ answers \(CRI v1\)/),
      });
      expect(runtime.find((x) => x.subject === 'RuntimeReady')?.severity).toBe('ok');
      expect(runtime.find((x) => x.subject === 'NetworkReady')?.severity).toBe('ok');
      const driver = f.find((x) => x.check === 'cgroups' && x.subject === 'cgroup driver');
      // containerd 1.6 has no RuntimeConfig: unknown, never an error; newer ones answer it.
      expect(driver?.severity === 'ok' || driver?.message.includes('but the runtime uses')).toBe(true);
      const imagefs = f.find((x) => x.check === 'disk' && x.subject?.startsWith('imagefs.available '));
      expect(imagefs?.subject?.slice('imagefs.available '.length).startsWith(node.rootDir)).toBe(true);
    });

    it('reports a stopped runtime as an error', async () => {
      await node.stopContainerd();
      try {
        const f = await doctor(node.criEndpoint, node.rootDir);
        expect(f.filter((x) => x.check === 'runtime')).toMatchObject([
          { severity: 'error', message: expect.stringMatching(/^cannot reach the container runtime/) },
        ]);
      } finally {
        await node.startContainerd();
      }
    });
  },
);
