import { FakeClock } from '@nodeagent/core/testing';
import { describe, expect, it } from 'vitest';
import { CanaryMonitor, kubeProxyJumpRules, SpawnIptablesExecutor } from '../src/index.js';
import { FakeIptablesExecutor } from '../src/testing.js';

describe('SpawnIptablesExecutor', () => {
  it('runs iptables-restore --noflush --counters -w, directly or inside a named netns', () => {
    expect(new SpawnIptablesExecutor().restoreArgv()).toEqual([
      'iptables-restore',
      '--noflush',
      '--counters',
      '-w',
    ]);
    expect(new SpawnIptablesExecutor({ family: 'IPv6', lockWaitSeconds: 5 }).restoreArgv()).toEqual([
      'ip6tables-restore',
      '--noflush',
      '--counters',
      '-w',
      '5',
    ]);
    expect(
      new SpawnIptablesExecutor({ netns: 'n1', netnsVia: 'ip-netns-exec' }).restoreArgv({ noflush: false }),
    ).toEqual(['ip', 'netns', 'exec', 'n1', 'iptables-restore', '--counters', '-w']);
    expect(new SpawnIptablesExecutor({ netns: 'n1' }).restoreArgv()[0]).toBe('nsenter');
    expect(() => new SpawnIptablesExecutor({ netns: '../x y' })).toThrow(TypeError);
  });
});

describe('FakeIptablesExecutor restore semantics', () => {
  it('noflush keeps unmentioned chains, flushes declared ones, commits each table atomically', async () => {
    const ipt = new FakeIptablesExecutor();
    await ipt.restore('*nat\n:A - [0:0]\n:B - [0:0]\n-A A -j B\n-A B -j RETURN\nCOMMIT\n');
    await ipt.restore('*nat\n:B - [0:0]\n-A B -j ACCEPT\nCOMMIT\n');
    expect(ipt.snapshot().nat!.A).toEqual(['-A A -j B']);
    expect(ipt.snapshot().nat!.B).toEqual(['-A B -j ACCEPT']);
    // A dangling jump fails the commit and changes nothing.
    const before = ipt.snapshot();
    await expect(ipt.restore('*nat\n:A - [0:0]\n-A A -j MISSING\nCOMMIT\n')).rejects.toThrow(
      /missing chain MISSING/,
    );
    // -X of a chain still referenced fails too.
    await expect(ipt.restore('*nat\n:B - [0:0]\n-X B\nCOMMIT\n')).rejects.toThrow(/jumps to missing chain B/);
    expect(ipt.snapshot()).toEqual(before);
    await expect(ipt.restore('*nat\n-A NOPE -j RETURN\nCOMMIT\n')).rejects.toThrow(/missing chain NOPE/);
    await expect(ipt.restore('*nat\n:A - [0:0]\n')).rejects.toThrow(/no COMMIT/);
    // Without noflush the table is rebuilt from the payload.
    await ipt.restore('*nat\n:C - [0:0]\nCOMMIT\n', { noflush: false });
    expect(ipt.chains('nat')).toEqual(['PREROUTING', 'INPUT', 'OUTPUT', 'POSTROUTING', 'C']);
  });

  it('ensureJumps prepends each jump once and creates the target chains', async () => {
    const ipt = new FakeIptablesExecutor();
    const jumps = kubeProxyJumpRules();
    await ipt.ensureJumps(jumps);
    await ipt.ensureJumps(jumps);
    const filter = ipt.snapshot().filter!;
    expect(filter.INPUT).toEqual([
      '-A INPUT -j KUBE-FIREWALL',
      '-A INPUT -m conntrack --ctstate NEW -m comment --comment "kubernetes load balancer firewall" -j KUBE-PROXY-FIREWALL',
      '-A INPUT -m comment --comment "kubernetes health check service ports" -j KUBE-NODEPORTS',
      '-A INPUT -m conntrack --ctstate NEW -m comment --comment "kubernetes externally-visible service portals" -j KUBE-EXTERNAL-SERVICES',
    ]);
    expect(ipt.snapshot().nat!.PREROUTING).toEqual([
      '-A PREROUTING -m comment --comment "kubernetes service portals" -j KUBE-SERVICES',
    ]);
    expect(kubeProxyJumpRules(false).some((j) => j.targetChain === 'KUBE-FIREWALL')).toBe(false);
  });
});

describe('CanaryMonitor', () => {
  it('creates canaries, and on a flush recreates them and reports once', async () => {
    const clock = new FakeClock();
    const ipt = new FakeIptablesExecutor();
    let flushes = 0;
    const mon = new CanaryMonitor({ executor: ipt, clock, intervalMs: 30_000, onFlush: () => flushes++ });
    await mon.start();
    for (const t of ['mangle', 'nat', 'filter'])
      expect(await ipt.chainExists(t, 'KUBE-PROXY-CANARY')).toBe(true);
    await clock.advance(60_000);
    expect(flushes).toBe(0);
    ipt.flushTable('mangle');
    await clock.advance(30_000);
    expect(flushes).toBe(1);
    expect(await ipt.chainExists('mangle', 'KUBE-PROXY-CANARY')).toBe(true);
    await clock.advance(30_000);
    expect(flushes).toBe(1);
    mon.stop();
    ipt.flushTable('nat');
    await clock.advance(60_000);
    expect(flushes).toBe(1);
    expect(clock.pendingTimers()).toBe(0);
  });
});
