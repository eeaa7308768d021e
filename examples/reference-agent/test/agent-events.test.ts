// Events end to end: the agent (embedded API server + runtime) records the kubelet's events
// through one EventRecorder, and the real `kubectl describe` lists them: Pulling / Pulled /
// Created / Started for a pod, BackOff (counted) for a crash loop, Unhealthy for a failing
// readiness probe, Starting and NodeNotReady/NodeReady (on a Ready flip) for the node.
import { execFile, spawnSync } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import type { V1Pod } from '@kubernetes/client-node';
import type { CoreEvent } from '@nodeagent/events';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RunningAgent, runAgent } from '../src/agent.js';
import { EMBEDDED_BUSYBOX_IMAGE } from '../src/embedded-runtime.js';
import { FAST_AGENT_TIMINGS, makePod, shContainer, testLogger, waitFor } from './helpers.js';

const NODE = 'events-node';
const IMAGE = EMBEDDED_BUSYBOX_IMAGE;
const run = promisify(execFile);
const kubectlMissing = spawnSync('kubectl', ['version', '--client'], { encoding: 'utf8' }).status !== 0;
if (kubectlMissing && process.env.CI !== 'true') {
  console.warn(
    '\n*** kubectl not found: skipping the kubectl describe tests (Debian package kubernetes-client) ***\n',
  );
}

describe.skipIf(kubectlMissing && process.env.CI !== 'true')(
  'kubectl describe shows the agent’s events',
  () => {
    let agent: RunningAgent;
    let home: string;
    const kubectl = async (...args: string[]) =>
      (await run('kubectl', args, { env: { ...process.env, KUBECONFIG: agent.kubeconfigPath, HOME: home } }))
        .stdout;
    const events = (name: string) =>
      (agent.apiServer?.store.list('events', 'default') ?? []).filter(
        (e) => (e as unknown as CoreEvent).involvedObject.name === name,
      ) as unknown as CoreEvent[];
    const createPod = (pod: V1Pod) => agent.api.create('/api/v1/namespaces/default/pods', pod);

    beforeAll(async () => {
      if (kubectlMissing)
        throw new Error('kubectl is required under CI=true (Debian package kubernetes-client)');
      home = await mkdtemp(join(tmpdir(), 'agent-events-kubectl-'));
      agent = await runAgent({
        nodeName: NODE,
        podCidr: '10.79.0.0/24',
        nodeIp: '192.0.2.12',
        ...FAST_AGENT_TIMINGS,
        logger: testLogger(),
      });
    });
    afterAll(async () => {
      await agent?.stop();
      if (home) await rm(home, { recursive: true, force: true });
    });

    it('a pod: Pulling, Pulled, Created, Started from the kubelet in kubectl describe pod', async () => {
      await createPod(
        makePod('web', NODE, [{ ...shContainer('app', IMAGE, 'sleep 3600'), imagePullPolicy: 'Always' }]),
      );
      await waitFor('Started event', () => events('web').some((e) => e.reason === 'Started'), 20_000);
      const out = await kubectl('describe', 'pod', 'web');
      const section = out.slice(out.indexOf('Events:'));
      expect(section).toMatch(
        /Normal\s+Pulling\s+.*kubelet\s+Pulling image "registry\.local\/busybox:latest"/,
      );
      expect(section).toMatch(
        /Normal\s+Pulled\s+.*kubelet\s+Successfully pulled image "registry\.local\/busybox:latest" in /,
      );
      expect(section).toMatch(/Normal\s+Created\s+.*kubelet\s+Created container: app/);
      expect(section).toMatch(/Normal\s+Started\s+.*kubelet\s+Started container app/);
      expect(
        events('web').every(
          (e) => e.source?.host === NODE && e.involvedObject.fieldPath === 'spec.containers{app}',
        ),
      ).toBe(true);
    }, 30_000);

    it('a crash loop: one BackOff Event whose count grows (patched, not re-created)', async () => {
      await createPod(
        makePod('crash', NODE, [shContainer('app', IMAGE, 'exit 1')], { restartPolicy: 'Always' }),
      );
      const backOff = await waitFor(
        'BackOff counted twice',
        () => events('crash').find((e) => e.reason === 'BackOff' && (e.count ?? 0) >= 2),
        30_000,
      );
      expect(backOff.type).toBe('Warning');
      expect(backOff.message).toMatch(/^Back-off restarting failed container app in pod crash_default\(/);
      expect(events('crash').filter((e) => e.reason === 'BackOff')).toHaveLength(1);
      const out = await kubectl('describe', 'pod', 'crash');
      expect(out).toMatch(
        /Warning\s+BackOff\s+.*\(x\d+ over .*\)\s+kubelet\s+Back-off restarting failed container app/,
      );
    }, 40_000);

    it('a failing readiness probe: Warning Unhealthy from the prober', async () => {
      await createPod(
        makePod('unready', NODE, [
          {
            ...shContainer('app', IMAGE, 'sleep 3600'),
            readinessProbe: { exec: { command: ['cat', '/tmp/ready'] }, periodSeconds: 1 },
          },
        ]),
      );
      await waitFor('Unhealthy event', () => events('unready').some((e) => e.reason === 'Unhealthy'), 20_000);
      const out = await kubectl('describe', 'pod', 'unready');
      expect(out).toMatch(/Warning\s+Unhealthy\s+.*kubelet\s+Readiness probe failed: /);
    }, 30_000);

    it('the node: Starting and the pressure conditions, then NodeNotReady and NodeReady when Ready flips, in kubectl describe node', async () => {
      await waitFor('Starting event', () => events(NODE).some((e) => e.reason === 'Starting'), 10_000);
      // As upstream: the pressure conditions' first values are events, the first Ready condition
      // is not; flips of Ready are.
      await waitFor('pressure condition events', () => events(NODE).length >= 4, 10_000);
      expect(
        events(NODE)
          .map((e) => e.reason)
          .sort(),
      ).toEqual(['NodeHasNoDiskPressure', 'NodeHasSufficientMemory', 'NodeHasSufficientPID', 'Starting']);
      agent.fakeRuntime?.setCondition(
        'NetworkReady',
        false,
        'NetworkPluginNotReady',
        'cni config uninitialized',
      );
      await waitFor(
        'NodeNotReady event',
        () => events(NODE).some((e) => e.reason === 'NodeNotReady'),
        10_000,
      );
      agent.fakeRuntime?.setCondition('NetworkReady', true);
      await waitFor('NodeReady event', () => events(NODE).some((e) => e.reason === 'NodeReady'), 10_000);
      const out = await kubectl('describe', 'node', NODE);
      const section = out.slice(out.indexOf('Events:'));
      expect(section).toMatch(/Normal\s+Starting\s+.*kubelet\s+Starting kubelet\./);
      expect(section).toMatch(
        /Normal\s+NodeNotReady\s+.*kubelet\s+Node events-node status is now: NodeNotReady/,
      );
      expect(section).toMatch(/Normal\s+NodeReady\s+.*kubelet\s+Node events-node status is now: NodeReady/);
    }, 30_000);
  },
);
