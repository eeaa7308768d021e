/**
 * The set limits against the real ipset inside a network namespace the test creates: the
 * `ipset restore` text of a 10,000 services × 10 remote endpoints plan is accepted whole; a
 * plan whose KUBE-LOOP-BACK would exceed maxelem (7,000 × 10 local endpoints) is accepted with
 * that set refused; and the unrefused set really is too big for the kernel ("Hash is full").
 */
import { createNetns, listLeakedNetns, type Netns } from '@nodeagent/test-support/netns';
import { describeRealNode } from '@nodeagent/test-support/real-node';
import { afterAll, beforeAll, expect, it } from 'vitest';
import {
  type IPSet,
  ipPortIpEntry,
  KUBE_CLUSTER_IP,
  KUBE_LOOP_BACK,
  parseIPSetSave,
  planIpvs,
  renderIpsetRestore,
} from '../src/index.js';
import { TEST_OPTIONS } from './helpers.js';
import { scaleSnapshot } from './scale-cluster.js';

const PREFIX = 'ipvssc';

describeRealNode(
  'ipset limits at scale in a real kernel (network namespace)',
  ['root', 'netns', 'ipset'],
  () => {
    let ns: Netns;
    beforeAll(async () => {
      ns = await createNetns(PREFIX);
    });
    afterAll(async () => {
      await ns?.stop();
      expect(await listLeakedNetns(PREFIX)).toEqual([]);
    });

    async function restore(text: string) {
      await ns.execChecked(['ipset', 'destroy']);
      return ns.exec(['ipset', 'restore'], { input: text, timeoutMs: 120_000 });
    }
    const saved = async () => parseIPSetSave(await ns.execChecked(['ipset', 'save'], { timeoutMs: 120_000 }));
    const count = (sets: IPSet[], name: string) => sets.find((s) => s.name === name)?.entries.length;

    it('10,000 services × 10 remote endpoints: the whole ipset text is restored and read back', async () => {
      const p = planIpvs(scaleSnapshot(10_000, { endpoints: 10, local: false }), TEST_OPTIONS);
      expect(p.errors).toEqual([]);
      const r = await restore(renderIpsetRestore(p.ipsets));
      expect({ code: r.code, stderr: r.stderr }).toEqual({ code: 0, stderr: '' });
      const sets = await saved();
      for (const s of p.ipsets) expect([s.name, count(sets, s.name)]).toEqual([s.name, s.entries.length]);
      expect(count(sets, KUBE_CLUSTER_IP)).toBe(10_000);
    }, 180_000);

    it('7,000 × 10 local endpoints: KUBE-LOOP-BACK refused, every other set restored; unrefused it is "Hash is full"', async () => {
      const snap = scaleSnapshot(7000, { endpoints: 10, local: true });
      const p = planIpvs(snap, TEST_OPTIONS);
      expect(p.errors.map((e) => e.name)).toEqual(['IPSetOverflowError']);
      const r = await restore(renderIpsetRestore(p.ipsets));
      expect({ code: r.code, stderr: r.stderr }).toEqual({ code: 0, stderr: '' });
      const sets = await saved();
      expect(count(sets, KUBE_LOOP_BACK)).toBe(0);
      expect(count(sets, KUBE_CLUSTER_IP)).toBe(7000);

      // What the planner refused: all 70,000 local endpoints in the set.
      const all = [...snap.endpoints.values()].flat().map((e) => ipPortIpEntry(e.ip, 'tcp', e.port, e.ip));
      expect(all).toHaveLength(70_000);
      const loopBack = p.ipsets.find((s) => s.name === KUBE_LOOP_BACK)!;
      const forced = renderIpsetRestore([{ ...loopBack, entries: all, entriesRefused: false }]);
      const bad = await restore(forced);
      expect(bad.code).not.toBe(0);
      expect(bad.stderr).toMatch(/Hash is full/);
    }, 180_000);
  },
);
