import { findBinary } from '@nodeagent/test-support/command';
import {
  bridgeConflist,
  ContainerdConfigError,
  renderContainerdConfig,
  setTomlValue,
} from '@nodeagent/test-support/containerd-config';
import { RealNodePrerequisitesError, realNodeGate, realNodeMissing } from '@nodeagent/test-support/real-node';
import { describe, expect, it } from 'vitest';

describe('realNodeMissing', () => {
  it('reports nothing for no requirements and checks uid 0 for root', () => {
    expect(realNodeMissing([])).toEqual([]);
    expect(realNodeMissing(['root'])).toEqual(
      process.getuid?.() === 0 ? [] : ['root (tests must run as uid 0)'],
    );
  });

  it('names each missing binary', () => {
    const missing = realNodeMissing(['nft', 'conntrack']);
    for (const entry of missing) expect(entry).toMatch(/^(nft|conntrack) \(not on PATH\)$/);
    expect(missing.length).toBe([findBinary('nft'), findBinary('conntrack')].filter((b) => !b).length);
  });
});

describe('realNodeGate', () => {
  it('runs when nothing is missing, even under CI', () => {
    expect(realNodeGate('s', [], { CI: 'true' })).toEqual({ action: 'run' });
  });

  it('fails under CI=true, naming what is missing', () => {
    const gate = realNodeGate('s', ['root (tests must run as uid 0)', 'nft (not on PATH)'], { CI: 'true' });
    expect(gate.action).toBe('fail');
    const error = gate.action === 'fail' ? gate.error : undefined;
    expect(error).toBeInstanceOf(RealNodePrerequisitesError);
    expect(error?.message).toBe(
      'real-node prerequisites missing under CI=true: root (tests must run as uid 0), nft (not on PATH)',
    );
  });

  it('skips loudly elsewhere', () => {
    const gate = realNodeGate('my suite', ['nft (not on PATH)'], {});
    expect(gate.action).toBe('skip');
    expect(gate.action === 'skip' && gate.warning).toMatch(
      /SKIPPING real-node suite "my suite": missing nft/,
    );
    expect(realNodeGate('s', ['x'], { CI: '1' }).action).toBe('skip');
  });
});

describe('containerd config', () => {
  const sample = [
    'root = "/var/lib/containerd"',
    '[grpc]',
    '  address = "/run/containerd/containerd.sock"',
    '  [plugins."io.containerd.grpc.v1.cri".cni]',
    '    bin_dir = "/opt/cni/bin"',
  ].join('\n');

  it('edits one key in one section and fails loudly on drift', () => {
    const out = setTomlValue(sample, 'plugins."io.containerd.grpc.v1.cri".cni', 'bin_dir', '"/usr/lib/cni"');
    expect(out).toContain('    bin_dir = "/usr/lib/cni"');
    expect(setTomlValue(sample, '', 'root', '"/x"')).toContain('root = "/x"');
    expect(() => setTomlValue(sample, 'grpc', 'missing', '1')).toThrow(ContainerdConfigError);
    expect(() => setTomlValue(sample, 'nosection', 'address', '1')).toThrow(ContainerdConfigError);
  });

  it.runIf(findBinary('containerd'))('rewrites the real `containerd config default`', async () => {
    const { runChecked } = await import('@nodeagent/test-support/command');
    const toml = renderContainerdConfig(await runChecked(['containerd', 'config', 'default']), {
      rootDir: '/t/root',
      stateDir: '/t/state',
      tempDir: '/t/tmp',
      socketPath: '/t/c.sock',
      cniConfDir: '/t/cni',
      cniBinDir: '/usr/lib/cni',
      sandboxImage: 'registry.local/busybox:latest',
      snapshotter: 'native',
      runcRoot: '/t/runc',
      optDir: '/t/opt',
      logLevel: 'debug',
    });
    for (const line of [
      'root = "/t/root"',
      'state = "/t/state"',
      '  address = "/t/c.sock"',
      '  address = "/t/c.sock.ttrpc"',
      '    restrict_oom_score_adj = true',
      '    sandbox_image = "registry.local/busybox:latest"',
      '      conf_dir = "/t/cni"',
      '      snapshotter = "native"',
      '            Root = "/t/runc"',
    ]) {
      expect(toml.split('\n')).toContain(line);
    }
    expect(toml).not.toMatch(/\/run\/containerd\/containerd\.sock|\/var\/lib\/containerd|\/opt\/containerd/);
  });

  it('writes a bridge conflist with host-local IPAM in a private data dir', () => {
    const conf = JSON.parse(
      bridgeConflist({
        networkName: 'n1',
        bridgeName: 'cni0',
        podCidr: '10.88.5.0/24',
        ipamDataDir: '/t/ipam',
      }),
    );
    expect(conf.name).toBe('n1');
    expect(conf.plugins[0]).toMatchObject({
      type: 'bridge',
      isGateway: true,
      ipMasq: false,
      ipam: { type: 'host-local', ranges: [[{ subnet: '10.88.5.0/24' }]], dataDir: '/t/ipam' },
    });
  });
});
