// An agent without --root-dir keeps its pod directories in a temp dir it removes at stop. Pods
// still running at stop keep running (as with the kubelet), but their volumes in that temp dir
// — the tmpfs of the kube-api-access projected volume every pod created over HTTP gets — must
// not outlive it: after stop no mount is left under any of this agent's temp pod dirs.
import { readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { describeRealNode } from '@nodeagent/test-support/real-node';
import { expect, it } from 'vitest';
import { runAgent } from '../src/agent.js';
import { EMBEDDED_BUSYBOX_IMAGE } from '../src/embedded-runtime.js';
import { FAST_AGENT_TIMINGS, makePod, podNamed, shContainer, testLogger, waitFor } from './helpers.js';

const NODE = 'temp-dir-node';

async function podTmpfsMounts(): Promise<string[]> {
  const text = await readFile('/proc/self/mountinfo', 'utf8');
  return text
    .split('\n')
    .map((l) => l.split(' ')[4] ?? '')
    .filter((p) => p.startsWith(`${tmpdir()}/nodeagent-pods-`));
}

describeRealNode('agent temp pod dir cleanup (tmpfs needs root)', ['root'], () => {
  it('unmounts every volume of its temp pod dir at stop, also of pods still running', async () => {
    const before = new Set(await podTmpfsMounts());
    const agent = await runAgent({ nodeName: NODE, ...FAST_AGENT_TIMINGS, logger: testLogger() });
    try {
      await agent.api.create(
        '/api/v1/namespaces/default/pods',
        makePod('keeps-running', NODE, [shContainer('app', EMBEDDED_BUSYBOX_IMAGE, 'sleep 600')]),
      );
      await waitFor(
        'keeps-running Running',
        () => podNamed(agent, 'keeps-running')?.status?.phase === 'Running',
        20_000,
      );
      const mounted = (await podTmpfsMounts()).filter((m) => !before.has(m));
      expect(mounted.some((m) => /kube-api-access-[a-z0-9]{5}$/.test(m))).toBe(true);
    } finally {
      await agent.stop();
    }
    expect((await podTmpfsMounts()).filter((m) => !before.has(m))).toEqual([]);
  }, 60_000);
});
