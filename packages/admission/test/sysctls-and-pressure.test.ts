// The sysctl allow-list (SysctlForbidden) and admission under node pressure (Evicted).
import { InvalidOptionsError } from '@nodeagent/core';
import { describe, expect, it } from 'vitest';
import { NodePressureAdmitHandler, type NodePressureCondition, SysctlAllowlist } from '../src/index.js';
import { pod } from './helpers.js';

describe('SysctlAllowlist', () => {
  const withSysctls = (names: string[], spec: { hostNetwork?: boolean; hostIPC?: boolean } = {}) =>
    pod({ ...spec, securityContext: { sysctls: names.map((name) => ({ name, value: '1' })) } });
  it.each([
    {
      name: 'safe sysctl',
      p: withSysctls(['net.ipv4.ip_local_port_range']),
      allowed: [],
      message: undefined,
    },
    {
      name: 'safe sysctl, slash form',
      p: withSysctls(['net/ipv4/tcp_syncookies']),
      allowed: [],
      message: undefined,
    },
    {
      name: 'unsafe sysctl',
      p: withSysctls(['net.core.somaxconn']),
      allowed: [],
      message: 'forbidden sysctl: "net.core.somaxconn" not allowlisted',
    },
    {
      name: 'unsafe but allowed by name',
      p: withSysctls(['net.core.somaxconn']),
      allowed: ['net.core.somaxconn'],
      message: undefined,
    },
    {
      name: 'unsafe but allowed by pattern',
      p: withSysctls(['kernel.msgmax']),
      allowed: ['kernel.msg*'],
      message: undefined,
    },
    {
      name: 'safe net sysctl with hostNetwork',
      p: withSysctls(['net.ipv4.tcp_syncookies'], { hostNetwork: true }),
      allowed: [],
      message: 'forbidden sysctl: "net.ipv4.tcp_syncookies" not allowed with host Net enabled',
    },
    {
      name: 'safe ipc sysctl with hostIPC',
      p: withSysctls(['kernel.shm_rmid_forced'], { hostIPC: true }),
      allowed: [],
      message: 'forbidden sysctl: "kernel.shm_rmid_forced" not allowed with host IPC enabled',
    },
  ])('$name', ({ p, allowed, message }) => {
    const result = new SysctlAllowlist(allowed).admit({ pod: p, otherPods: [] });
    expect(result).toEqual(
      message === undefined ? { admit: true } : { admit: false, reason: 'SysctlForbidden', message },
    );
  });

  it('refuses to allow a sysctl that is not namespaced', () => {
    expect(() => new SysctlAllowlist(['kernel.panic'])).toThrow(InvalidOptionsError);
    expect(() => new SysctlAllowlist(['kernel.panic'])).toThrow(
      /"kernel.panic" are not known to be namespaced/,
    );
  });
});

describe('NodePressureAdmitHandler (eviction manager Admit)', () => {
  const besteffort = pod();
  const burstable = pod({ containers: [{ name: 'c', resources: { requests: { cpu: '100m' } } }] });
  const tolerating = pod({
    tolerations: [{ key: 'node.kubernetes.io/memory-pressure', operator: 'Exists', effect: 'NoSchedule' }],
  });
  const staticPod = pod({}, { annotations: { 'kubernetes.io/config.source': 'file' } });
  const critical = pod({ priority: 2_000_001_000 });
  it.each([
    { name: 'no pressure', conditions: [], p: besteffort, ok: true },
    { name: 'memory pressure, BestEffort', conditions: ['MemoryPressure'], p: besteffort, ok: false },
    { name: 'memory pressure, Burstable', conditions: ['MemoryPressure'], p: burstable, ok: true },
    {
      name: 'memory pressure, BestEffort tolerating the taint',
      conditions: ['MemoryPressure'],
      p: tolerating,
      ok: true,
    },
    { name: 'disk pressure, Burstable', conditions: ['DiskPressure'], p: burstable, ok: false },
    {
      name: 'memory and PID pressure, Burstable',
      conditions: ['MemoryPressure', 'PIDPressure'],
      p: burstable,
      ok: false,
    },
    { name: 'disk pressure, static pod', conditions: ['DiskPressure'], p: staticPod, ok: true },
    { name: 'disk pressure, system-critical priority', conditions: ['DiskPressure'], p: critical, ok: true },
  ] as { name: string; conditions: NodePressureCondition[]; p: ReturnType<typeof pod>; ok: boolean }[])(
    '$name',
    ({ conditions, p, ok }) => {
      const result = new NodePressureAdmitHandler({ nodeConditions: () => conditions }).admit({
        pod: p,
        otherPods: [],
      });
      expect(result).toEqual(
        ok
          ? { admit: true }
          : {
              admit: false,
              reason: 'Evicted',
              message: `The node had condition: [${conditions.join(' ')}]. `,
            },
      );
    },
  );
});
