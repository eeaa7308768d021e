// biome-ignore-all lint/suspicious/noExplicitAny: assertions read raw API JSON
// The real kubectl shows what the node lifecycle controller did: `kubectl get nodes` turns
// NotReady once a Node's heartbeats stop for the grace period, `kubectl describe node` shows
// the Unknown conditions and the unreachable taints, and `kubectl get events` the
// node-controller's events. The server runs on a fake clock the test advances.
import { FakeClock } from '@nodeagent/core/testing';
import { describe, expect, test } from 'vitest';
import { kubectlMissing, useKubectlServer } from './kubectl-harness.js';

const T0 = Date.parse('2026-01-01T00:00:00Z');
const iso = (ms: number): string => new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z');

if (kubectlMissing && process.env.CI !== 'true') {
  console.warn(
    '\n*** kubectl not found: skipping the node lifecycle kubectl test (Debian package kubernetes-client) ***\n',
  );
}

describe.skipIf(kubectlMissing && process.env.CI !== 'true')(
  'kubectl and the node lifecycle controller',
  () => {
    const clock = new FakeClock({ startMs: T0 });
    const h = useKubectlServer('mini-apiserver-nodelifecycle-', {
      clock,
      nodeLifecycleController: true,
      nodeMonitorPeriodMs: 1000,
      nodeMonitorGracePeriodMs: 2000,
    });

    test('kubectl get nodes: Ready while the Lease is renewed, NotReady after the grace period', async () => {
      for (const name of ['alive', 'dead']) {
        h.server.store.create('nodes', {
          metadata: { name },
          spec: {},
          status: {
            conditions: [
              {
                type: 'Ready',
                status: 'True',
                lastHeartbeatTime: iso(T0),
                lastTransitionTime: iso(T0),
                reason: 'KubeletReady',
                message: 'kubelet is posting ready status',
              },
            ],
          },
        });
      }
      const renew = (name: string): void => {
        const spec = {
          holderIdentity: name,
          renewTime: new Date(clock.now()).toISOString().replace('Z', '000Z'),
        };
        const cur = h.server.store.tryGet('leases', 'kube-node-lease', name);
        if (cur) h.server.store.update('leases', { ...cur, spec });
        else h.server.store.create('leases', { metadata: { name, namespace: 'kube-node-lease' }, spec });
      };
      const nodes = async (): Promise<string[]> =>
        (await h.kubectl('get', 'nodes', '--no-headers', '-o', 'custom-columns=N:.metadata.name'))
          .trim()
          .split('\n');
      expect(await nodes()).toEqual(['alive', 'dead']);
      const table = async (): Promise<Record<string, string>> =>
        Object.fromEntries(
          (await h.kubectl('get', 'nodes', '--no-headers'))
            .trim()
            .split('\n')
            .map((l) => l.split(/\s+/) as [string, string]),
        );
      for (let i = 0; i < 2; i++) {
        renew('alive');
        renew('dead');
        await clock.advance(1000);
      }
      expect(await table()).toEqual({ alive: 'Ready', dead: 'Ready' });
      for (let i = 0; i < 4; i++) {
        renew('alive');
        await clock.advance(1000);
      }
      await h.server.nodeLifecycle?.idle();
      expect(await table()).toEqual({ alive: 'Ready', dead: 'NotReady' });

      const describeOut = await h.kubectl('describe', 'node', 'dead');
      // Two Nodes, one down: the zone is healthy, so the NoExecute taint follows a pass later.
      expect(describeOut).toMatch(
        /Taints:\s+node\.kubernetes\.io\/unreachable:NoExecute\n\s+node\.kubernetes\.io\/unreachable:NoSchedule\n/,
      );
      expect(describeOut).toMatch(
        /Ready\s+Unknown\s.*NodeStatusUnknown\s+Kubelet stopped posting node status\./,
      );
      const json = JSON.parse(await h.kubectl('get', 'node', 'dead', '-o', 'json'));
      expect(json.spec.taints.map((t: any) => `${t.key}:${t.effect}`).sort()).toEqual([
        'node.kubernetes.io/unreachable:NoExecute',
        'node.kubernetes.io/unreachable:NoSchedule',
      ]);
      const events = await h.kubectl(
        'get',
        'events',
        '--field-selector',
        'involvedObject.name=dead',
        '-o',
        'json',
      );
      expect(
        JSON.parse(events).items.map((e: any) => `${e.reason} ${e.source.component}: ${e.message}`),
      ).toEqual([
        'RegisteredNode node-controller: Node dead event: Registered Node dead in Controller',
        'NodeNotReady node-controller: Node dead status is now: NodeNotReady',
      ]);
    });
  },
);
