/**
 * The IPVS start-up on this kernel, for real, inside a network namespace the test creates:
 * kube-proxy's check fails with a typed error when the kernel has no IPVS (this one has none:
 * `ipvsadm` answers "Protocol not available"), the per-namespace sysctls kube-proxy writes
 * (`ip_forward`, `conf/all/arp_ignore`, `conf/all/arp_announce`) are written in the namespace
 * only, and the `vs/*` sysctls, which do not exist without IPVS, fail with SysctlError naming
 * the first of them before anything else is written.
 */
import { existsSync } from 'node:fs';
import { createNetns, listLeakedNetns, type Netns } from '@nodeagent/test-support/netns';
import { describeRealNode } from '@nodeagent/test-support/real-node';
import { afterAll, beforeAll, expect, it } from 'vitest';
import {
  checkIpvsSupport,
  ensureIpvsSysctls,
  ensureSysctls,
  IpvsUnavailableError,
  ipvsSysctls,
  ProcSysctl,
  SpawnIpvsExecutor,
  SysctlError,
} from '../src/index.js';

const PREFIX = 'ipvsup';
const NS_SYSCTLS = ['net/ipv4/ip_forward', 'net/ipv4/conf/all/arp_ignore', 'net/ipv4/conf/all/arp_announce'];

describeRealNode(
  'IPVS start-up against the real kernel (network namespace)',
  ['root', 'netns', 'ipset'],
  () => {
    let ns: Netns;
    const host = new ProcSysctl();
    let hostBefore: number[];

    beforeAll(async () => {
      ns = await createNetns(PREFIX);
      hostBefore = await Promise.all(NS_SYSCTLS.map((n) => host.get(n)));
    });
    afterAll(async () => {
      await ns?.stop();
      expect(await listLeakedNetns(PREFIX)).toEqual([]);
    });

    const inNs = async (name: string) => Number((await ns.execChecked(['cat', `/proc/sys/${name}`])).trim());

    it('checkIpvsSupport: ipset passes the version check; a kernel without IPVS gives IpvsUnavailableError(kernel)', async () => {
      const hasIpvs = existsSync('/proc/net/ip_vs');
      const result = await checkIpvsSupport({ executor: new SpawnIpvsExecutor({ netns: ns.name }) }).then(
        () => 'ok',
        (e: unknown) => e,
      );
      if (hasIpvs) {
        expect(result).toBe('ok');
        return;
      }
      expect(result).toBeInstanceOf(IpvsUnavailableError);
      expect((result as IpvsUnavailableError).reason).toBe('kernel');
      expect((result as Error).message).toMatch(/^can't use the IPVS proxier: IPVS is not available: /);
      expect((result as Error).message).toContain('/proc/net/ip_vs does not exist');
    });

    it('the vs/* sysctls: present with IPVS, else SysctlError on net/ipv4/vs/conntrack and nothing written', async () => {
      const sysctl = new ProcSysctl({ netns: ns.name });
      const before = await Promise.all(NS_SYSCTLS.map(inNs));
      const hasVs = (await ns.exec(['cat', '/proc/sys/net/ipv4/vs/conntrack'])).code === 0;
      const result = await ensureIpvsSysctls(sysctl, { strictARP: true }).then(
        () => 'ok',
        (e: unknown) => e,
      );
      if (hasVs) {
        expect(result).toBe('ok');
        return;
      }
      expect(result).toBeInstanceOf(SysctlError);
      expect((result as SysctlError).sysctl).toBe('net/ipv4/vs/conntrack');
      expect(await Promise.all(NS_SYSCTLS.map(inNs))).toEqual(before);
    });

    it('ip_forward=1 and strict ARP (arp_ignore=1, arp_announce=2) are written in the namespace, not on the host', async () => {
      const sysctl = new ProcSysctl({ netns: ns.name });
      const list = ipvsSysctls(await sysctl.kernelRelease(), { strictARP: true }).filter(
        (s) => !s.name.startsWith('net/ipv4/vs/'),
      );
      expect(list.map((s) => s.name)).toEqual(NS_SYSCTLS);
      const report = await ensureSysctls(sysctl, list);
      expect(await Promise.all(NS_SYSCTLS.map(inNs))).toEqual([1, 1, 2]);
      expect(report.ensured.map((c) => c.after)).toEqual([1, 1, 2]);
      // A second run finds them set and writes nothing.
      expect((await ensureSysctls(sysctl, list)).ensured.every((c) => !c.changed)).toBe(true);
      expect(await Promise.all(NS_SYSCTLS.map((n) => host.get(n)))).toEqual(hostBefore);
    });
  },
);
