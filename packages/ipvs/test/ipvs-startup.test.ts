/**
 * What kube-proxy does when it starts in IPVS mode (upstream NewProxier / PrivilegedInit and
 * canUseIPVSProxier), against a fake /proc/sys tree and FakeIpvsExecutor: the sysctls with
 * their values, order and kernel-version conditions, strict ARP, the IPVS timeouts, the
 * ipset-version / kernel / scheduler checks, and the deprecation message.
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { RecordingLogger } from '@nodeagent/core/testing';
import { afterEach, describe, expect, it } from 'vitest';
import {
  checkIpvsSupport,
  ensureIpvsSysctls,
  IPVS_DEPRECATION_MESSAGE,
  IpvsUnavailableError,
  ipvsSchedulerProblem,
  ipvsSysctls,
  ProcSysctl,
  planIpvs,
  prepareIpvsNode,
  SpawnIpvsExecutor,
  type SysctlAccess,
  SysctlError,
} from '../src/index.js';
import { FakeIpvsExecutor } from '../src/testing.js';
import { snapshot } from './helpers.js';

const VS_SYSCTLS = [
  'net/ipv4/vs/conntrack',
  'net/ipv4/vs/conn_reuse_mode',
  'net/ipv4/vs/expire_nodest_conn',
  'net/ipv4/vs/expire_quiescent_template',
];
const OTHER_SYSCTLS = [
  'net/ipv4/ip_forward',
  'net/ipv4/conf/all/arp_ignore',
  'net/ipv4/conf/all/arp_announce',
];

const roots: string[] = [];
afterEach(() => {
  for (const r of roots.splice(0)) rmSync(r, { recursive: true, force: true });
});

/** A fake /proc/sys: every sysctl at 0 (the vs/* ones only when `ipvs`), and kernel/osrelease. */
function fakeProcSys(release: string, ipvs = true): string {
  const root = mkdtempSync(join(tmpdir(), 'ipvs-procsys-'));
  roots.push(root);
  for (const name of [...(ipvs ? VS_SYSCTLS : []), ...OTHER_SYSCTLS, 'kernel/osrelease']) {
    mkdirSync(join(root, name, '..'), { recursive: true });
    writeFileSync(join(root, name), name === 'kernel/osrelease' ? `${release}\n` : '0\n');
  }
  return root;
}

const read = (root: string, name: string) => readFileSync(join(root, name), 'utf8').trim();

/** Counts the writes going through a SysctlAccess. */
function spy(inner: SysctlAccess): SysctlAccess & { writes: string[] } {
  const writes: string[] = [];
  return {
    writes,
    get: (n) => inner.get(n),
    set: async (n, v) => {
      writes.push(`${n}=${v}`);
      await inner.set(n, v);
    },
    kernelRelease: () => inner.kernelRelease(),
  };
}

describe('ipvsSysctls: values, order and conditions', () => {
  const pairs = (release: string, strictARP = false) =>
    ipvsSysctls(release, { strictARP }).map((s) => `${s.name}=${s.value ?? 'as-is'}`);

  it('sets conn_reuse_mode to 0 only on kernels from 4.1 up to, not including, 5.9', () => {
    expect(pairs('4.0.9')).toContain('net/ipv4/vs/conn_reuse_mode=as-is');
    expect(pairs('4.1')).toContain('net/ipv4/vs/conn_reuse_mode=0');
    expect(pairs('5.8.18-100.fc31.x86_64')).toContain('net/ipv4/vs/conn_reuse_mode=0');
    expect(pairs('5.9.0')).toContain('net/ipv4/vs/conn_reuse_mode=as-is');
    expect(pairs('6.18.44-fc-v973')).toContain('net/ipv4/vs/conn_reuse_mode=as-is');
  });

  it('lists upstream’s sysctls in upstream’s order; strict ARP adds arp_ignore=1 and arp_announce=2', () => {
    expect(pairs('5.4.0', true)).toEqual([
      'net/ipv4/vs/conntrack=1',
      'net/ipv4/vs/conn_reuse_mode=0',
      'net/ipv4/vs/expire_nodest_conn=1',
      'net/ipv4/vs/expire_quiescent_template=1',
      'net/ipv4/ip_forward=1',
      'net/ipv4/conf/all/arp_ignore=1',
      'net/ipv4/conf/all/arp_announce=2',
    ]);
    expect(pairs('5.4.0').filter((p) => p.includes('arp'))).toEqual([]);
  });

  it('refuses a kernel release without a version number', () => {
    expect(() => ipvsSysctls('unknown')).toThrow(TypeError);
  });
});

describe('ensureIpvsSysctls against a fake /proc/sys', () => {
  it('writes every value that differs and nothing else (upstream EnsureSysctl)', async () => {
    const root = fakeProcSys('5.4.0-42-generic');
    writeFileSync(join(root, 'net/ipv4/ip_forward'), '1\n');
    writeFileSync(join(root, 'net/ipv4/vs/conn_reuse_mode'), '1\n');
    const access = spy(new ProcSysctl({ root }));
    const report = await ensureIpvsSysctls(access, { strictARP: true });
    expect(access.writes).toEqual([
      'net/ipv4/vs/conntrack=1',
      'net/ipv4/vs/conn_reuse_mode=0',
      'net/ipv4/vs/expire_nodest_conn=1',
      'net/ipv4/vs/expire_quiescent_template=1',
      'net/ipv4/conf/all/arp_ignore=1',
      'net/ipv4/conf/all/arp_announce=2',
    ]);
    expect(report.ensured.find((c) => c.name === 'net/ipv4/ip_forward')).toEqual({
      name: 'net/ipv4/ip_forward',
      before: 1,
      after: 1,
      changed: false,
    });
    expect(read(root, 'net/ipv4/vs/conntrack')).toBe('1');
    expect(read(root, 'net/ipv4/conf/all/arp_announce')).toBe('2');
  });

  it('leaves conn_reuse_mode alone on a fixed kernel and says why', async () => {
    const root = fakeProcSys('6.1.0-18-amd64');
    writeFileSync(join(root, 'net/ipv4/vs/conn_reuse_mode'), '1\n');
    const log = new RecordingLogger();
    const report = await ensureIpvsSysctls(new ProcSysctl({ root }), { logger: log });
    expect(read(root, 'net/ipv4/vs/conn_reuse_mode')).toBe('1');
    expect(report.left.map((s) => s.name)).toEqual(['net/ipv4/vs/conn_reuse_mode']);
    expect(log.find('Left as-is')[0]?.fields).toMatchObject({ sysctl: 'net/ipv4/vs/conn_reuse_mode' });
    expect(read(root, 'net/ipv4/conf/all/arp_ignore')).toBe('0');
  });

  it('a kernel without IPVS: SysctlError naming net/ipv4/vs/conntrack, and nothing after it is written', async () => {
    const root = fakeProcSys('6.18.44', false);
    const err = await ensureIpvsSysctls(new ProcSysctl({ root }), { strictARP: true }).catch(
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(SysctlError);
    expect((err as SysctlError).sysctl).toBe('net/ipv4/vs/conntrack');
    expect((err as SysctlError).message).toMatch(/^can't set sysctl net\/ipv4\/vs\/conntrack to 1: .*ENOENT/);
    // ProcSysctl never creates a sysctl file that the kernel does not have.
    expect(() => read(root, 'net/ipv4/vs/conntrack')).toThrow(/ENOENT/);
    expect(read(root, 'net/ipv4/ip_forward')).toBe('0');
  });

  it('refuses names that would leave the sysctl tree', async () => {
    await expect(new ProcSysctl({ root: '/nonexistent' }).get('net/../../etc/passwd')).rejects.toThrow(
      TypeError,
    );
  });
});

describe('checkIpvsSupport (canUseIPVSProxier)', () => {
  it('passes with ipset >= 6.0 and a kernel that takes the probe virtual server, which is removed again', async () => {
    const kernel = new FakeIpvsExecutor();
    await checkIpvsSupport({ executor: kernel, scheduler: 'wlc' });
    expect(kernel.applied.map((ops) => ops.map((o) => o.kind))).toEqual([
      ['add-virtual-server'],
      ['delete-virtual-server'],
    ]);
    expect(kernel.applied[0]![0]).toMatchObject({
      virtualServer: { address: '198.51.100.0', port: 20000, protocol: 'TCP', scheduler: 'wlc' },
    });
    expect(kernel.state().virtualServers).toEqual([]);
  });

  it('skips the probe when a virtual server already uses the scheduler (a restart)', async () => {
    const kernel = new FakeIpvsExecutor(planIpvs(snapshot({ services: [], slices: [] })));
    await kernel.apply([
      {
        kind: 'add-virtual-server',
        virtualServer: {
          address: '172.30.0.1',
          port: 80,
          protocol: 'TCP',
          scheduler: 'rr',
          flags: [],
          timeoutSeconds: 0,
        },
      },
    ]);
    const before = kernel.applied.length;
    await checkIpvsSupport({ executor: kernel });
    expect(kernel.applied.length).toBe(before);
  });

  it('ipset older than 6.0: reason ipset, upstream’s message', async () => {
    const kernel = new FakeIpvsExecutor();
    kernel.setIpsetVersion('ipset v5.4, protocol version: 6');
    const err = await checkIpvsSupport({ executor: kernel }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(IpvsUnavailableError);
    expect((err as IpvsUnavailableError).reason).toBe('ipset');
    expect((err as Error).message).toBe(
      "can't use the IPVS proxier: ipset version: v5.4 is less than min required version: 6.0",
    );
    expect(kernel.applied).toEqual([]);
  });

  it('a scheduler the kernel does not have: reason scheduler', async () => {
    const kernel = new FakeIpvsExecutor();
    kernel.failWhen((op) => (op.kind === 'add-virtual-server' ? 'Scheduler not found' : undefined));
    await expect(checkIpvsSupport({ executor: kernel, scheduler: 'mh' })).rejects.toMatchObject({
      reason: 'scheduler',
      message: expect.stringMatching(/scheduler "mh".*Scheduler not found/),
    });
  });

  it('a kernel that cannot answer: reason kernel, with the missing proc file named', async () => {
    const kernel = new FakeIpvsExecutor();
    kernel.read = async () => {
      throw new Error("Can't initialize ipvs: Protocol not available");
    };
    const procRoot = mkdtempSync(join(tmpdir(), 'ipvs-proc-'));
    roots.push(procRoot);
    await expect(checkIpvsSupport({ executor: kernel, procRoot })).rejects.toMatchObject({
      reason: 'kernel',
      message: `can't use the IPVS proxier: IPVS is not available: Can't initialize ipvs: Protocol not available (${procRoot}/net/ip_vs does not exist: IPVS is not built into this kernel or the ip_vs module is not loaded)`,
    });
  });
});

describe('prepareIpvsNode', () => {
  it('logs the deprecation first, checks, sets the sysctls, then the timeouts (0 = keep, cut to seconds)', async () => {
    const root = fakeProcSys('6.1.0');
    const kernel = new FakeIpvsExecutor();
    const log = new RecordingLogger();
    const report = await prepareIpvsNode({
      executor: kernel,
      sysctl: new ProcSysctl({ root }),
      strictARP: true,
      timeouts: { tcpMs: 5_000, tcpFinMs: 0, udpMs: 1_500 },
      logger: log,
    });
    expect(log.records[0]).toMatchObject({ level: 'error', msg: IPVS_DEPRECATION_MESSAGE });
    expect(IPVS_DEPRECATION_MESSAGE).toBe(
      "The ipvs proxier is now deprecated and may be removed in a future release. Please use 'nftables' instead.",
    );
    expect(report.timeouts).toBe('configured');
    expect(kernel.timeouts()).toEqual({ tcp: 5, tcpfin: 120, udp: 1 });
    expect(read(root, 'net/ipv4/conf/all/arp_ignore')).toBe('1');
  });

  it('sets no timeout when all are 0, and only logs a timeout failure (as upstream)', async () => {
    const kernel = new FakeIpvsExecutor();
    let calls = 0;
    kernel.configureTimeouts = async () => {
      calls++;
      throw new Error('Invalid argument');
    };
    const sysctl = new ProcSysctl({ root: fakeProcSys('6.1.0') });
    expect((await prepareIpvsNode({ executor: kernel, sysctl, timeouts: { tcpMs: 0 } })).timeouts).toBe(
      'unchanged',
    );
    expect(calls).toBe(0);
    const log = new RecordingLogger();
    const r = await prepareIpvsNode({ executor: kernel, sysctl, timeouts: { udpMs: 30_000 }, logger: log });
    expect(r.timeouts).toEqual({ error: expect.any(Error) });
    expect(log.find('Failed to configure IPVS timeouts', 'error')).toHaveLength(1);
  });

  it('stops before touching any sysctl when IPVS cannot run', async () => {
    const root = fakeProcSys('6.1.0');
    const kernel = new FakeIpvsExecutor();
    kernel.setIpsetVersion('no version here');
    await expect(prepareIpvsNode({ executor: kernel, sysctl: new ProcSysctl({ root }) })).rejects.toThrow(
      IpvsUnavailableError,
    );
    expect(read(root, 'net/ipv4/vs/conntrack')).toBe('0');
  });
});

describe('the real executor’s commands', () => {
  it('ipvsadm --set <tcp> <tcpfin> <udp> in whole seconds, 0 meaning unchanged', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'ipvs-bin-'));
    roots.push(dir);
    const script = join(dir, 'ipvsadm');
    writeFileSync(script, `#!/bin/sh\necho "$@" > ${join(dir, 'args')}\n`, { mode: 0o755 });
    await new SpawnIpvsExecutor({ binaries: { ipvsadm: script } }).configureTimeouts({
      tcpMs: 900_000,
      udpMs: 999,
    });
    expect(readFileSync(join(dir, 'args'), 'utf8')).toBe('--set 900 0 0\n');
  });
});

describe('schedulers', () => {
  it('accepts kube-proxy’s names and refuses others with its validation message', () => {
    for (const s of ['rr', 'wrr', 'lc', 'wlc', 'lblc', 'lblcr', 'sh', 'dh', 'sed', 'nq', 'mh', ''])
      expect(ipvsSchedulerProblem(s)).toBeUndefined();
    expect(ipvsSchedulerProblem('fifo')).toBe(
      'must be in [rr wrr lc wlc lblc lblcr sh dh sed nq mh], blank means the default algorithm method (currently rr)',
    );
    expect(() => planIpvs(snapshot({ services: [], slices: [] }), { scheduler: 'fifo' })).toThrow(
      /scheduler "fifo": must be in \[rr/,
    );
    expect(planIpvs(snapshot({ services: [], slices: [] }), { scheduler: '' }).virtualServers).toEqual([]);
  });
});
