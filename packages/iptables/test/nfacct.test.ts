/**
 * kube-proxy's nfacct counters: `nfacct list` parsing, and in a network namespace the test
 * creates, the real thing — detection, kube-proxy's start-up `Ensure` of both counters, a
 * ruleset with `-m nfacct` accepted by iptables-restore only once they exist, and the
 * localhost NodePort counter counting a real connection attempt.
 */
import { ProxyState } from '@nodeagent/proxy-state';
import { createNetns, type Netns } from '@nodeagent/test-support/netns';
import { describeRealNode } from '@nodeagent/test-support/real-node';
import { connectFrom } from '@nodeagent/test-support/tcp-echo';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  detectNfacct,
  ensureNfacctCounters,
  IptablesSyncer,
  NFACCT_CT_STATE_INVALID_DROPPED,
  NFACCT_LOCALHOST_NODEPORTS_ACCEPTED,
  parseNfacctList,
  SpawnIptablesExecutor,
  SpawnNfacctClient,
} from '../src/index.js';
import { slice, svc } from './helpers.js';

describe('parseNfacctList', () => {
  it('reads the objects of `nfacct list`, ignoring other lines', () => {
    expect(
      parseNfacctList(
        '{ pkts = 00000000000000000003, bytes = 00000000000000000180 } = localhost_nps_accepted_pkts;\n' +
          'garbage\n' +
          '{ pkts = 00000000000000000000, bytes = 00000000000000000000 } = ct_state_invalid_dropped_pkts;\n',
      ),
    ).toEqual([
      { name: 'localhost_nps_accepted_pkts', packets: 3n, bytes: 180n },
      { name: 'ct_state_invalid_dropped_pkts', packets: 0n, bytes: 0n },
    ]);
  });

  it('a missing tool is no nfacct: detection says false, nothing is ensured', async () => {
    const client = new SpawnNfacctClient({ binary: '/nonexistent/nfacct' });
    expect(await detectNfacct(client)).toBe(false);
    expect(await ensureNfacctCounters(client)).toEqual({ ctStateInvalid: false, localhostNodePorts: false });
  });
});

describeRealNode(
  'nfacct counters in a real kernel (network namespace)',
  ['root', 'netns', 'iptables', 'nfacct'],
  () => {
    let ns: Netns;
    beforeAll(async () => {
      ns = await createNetns('nfat');
      await ns.execChecked(['ip', 'link', 'set', 'lo', 'up']);
    }, 60_000);
    afterAll(async () => {
      await ns?.stop();
    });

    it('rules with -m nfacct load only once the counters exist; the localhost NodePort counter counts', async () => {
      const state = new ProxyState({ nodeName: 'test-node', nodeIPs: ['192.168.60.1'] });
      state.onServiceAdd(
        svc('ns', 'np', {
          type: 'NodePort',
          clusterIP: '172.30.0.20',
          ports: [{ name: 'http', port: 80, nodePort: 30090 }],
        }),
      );
      state.onEndpointSliceAdd(slice('ns', 'np', [{ name: 'http', port: 8080 }], [{ ip: '10.100.9.9' }]));
      const render = {
        localDetector: { mode: 'None' } as const,
        localhostNodePorts: true,
        nfacct: { ctStateInvalid: true, localhostNodePorts: true },
      };
      const syncer = () =>
        new IptablesSyncer({ executor: new SpawnIptablesExecutor({ netns: ns.name }), render });
      // Without the accounting objects the kernel refuses the ruleset, hence kube-proxy's Ensure.
      await expect(syncer().syncSnapshot(state.checkout().v4)).rejects.toThrow();

      const client = new SpawnNfacctClient({ netns: ns.name });
      expect(await detectNfacct(client)).toBe(true);
      expect(await ensureNfacctCounters(client)).toEqual({ ctStateInvalid: true, localhostNodePorts: true });
      // Ensure is idempotent.
      expect(await ensureNfacctCounters(client)).toEqual({ ctStateInvalid: true, localhostNodePorts: true });
      const names = (await client.list()).map((c) => c.name).sort();
      expect(names).toEqual([NFACCT_CT_STATE_INVALID_DROPPED, NFACCT_LOCALHOST_NODEPORTS_ACCEPTED].sort());

      await syncer().syncSnapshot(state.checkout().v4);
      const save = await ns.execChecked(['iptables-save']);
      expect(save).toContain('--nfacct-name  localhost_nps_accepted_pkts');
      expect(save).toContain('--nfacct-name  ct_state_invalid_dropped_pkts');

      // A local connection to 127.0.0.1:<nodePort> passes the counting rule (its SYN is counted
      // whether or not the DNAT-ed endpoint answers).
      await connectFrom(ns, '127.0.0.1', 30090).catch(() => []);
      const counted = (await client.list()).find((c) => c.name === NFACCT_LOCALHOST_NODEPORTS_ACCEPTED);
      expect(counted?.packets).toBeGreaterThan(0n);
    }, 60_000);
  },
);
