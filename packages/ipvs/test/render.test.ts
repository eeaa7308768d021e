/** Renderer text forms, validation of hand-built data, and parsers of the tools' output. */
import { quoteIptablesComment as quoteComment } from '@nodeagent/proxy-state';
import { describe, expect, it } from 'vitest';
import {
  IPSetRenderError,
  IptablesRenderError,
  IpvsRenderError,
  ipsetName,
  ipvsJumpRules,
  parseIPAddrShow,
  parseIPSetSave,
  parseIpvsadmList,
  parseIpvsadmSave,
  renderIpsetOperations,
  renderIpsetRestore,
  renderIpvsadmOperations,
  renderIpvsadmRestore,
  renderResidualIptables,
  SpawnIpvsExecutor,
  type VirtualServer,
} from '../src/index.js';

const vs: VirtualServer = {
  address: '172.30.0.41',
  port: 80,
  protocol: 'TCP',
  scheduler: 'rr',
  flags: ['persistent'],
  timeoutSeconds: 10800,
  realServers: [
    { address: '10.180.0.1', port: 8080, weight: 1 },
    { address: '10.180.0.2', port: 8080, weight: 0 },
  ],
};

describe('ipvsadm text', () => {
  it('renders the restore format and incremental operations', () => {
    expect(renderIpvsadmRestore({ virtualServers: [vs] })).toBe(
      '-A -t 172.30.0.41:80 -s rr -p 10800\n' +
        '-a -t 172.30.0.41:80 -r 10.180.0.1:8080 -m -w 1\n' +
        '-a -t 172.30.0.41:80 -r 10.180.0.2:8080 -m -w 0\n',
    );
    const v6 = { address: 'fd00::41', port: 53, protocol: 'UDP' as const };
    const sctp = { address: '10.0.0.1', port: 9, protocol: 'SCTP' as const };
    expect(
      renderIpvsadmOperations([
        {
          kind: 'update-virtual-server',
          virtualServer: { ...v6, scheduler: 'mh', flags: ['source-hash'], timeoutSeconds: 0 },
        },
        {
          kind: 'update-real-server',
          virtualServer: v6,
          realServer: { address: 'fd00::1', port: 53, weight: 0 },
        },
        { kind: 'delete-real-server', virtualServer: v6, realServer: { address: 'fd00::1', port: 53 } },
        { kind: 'delete-virtual-server', virtualServer: sctp },
        { kind: 'bind-address', address: '10.0.0.1' },
      ]),
    ).toBe(
      '-E -u [fd00::41]:53 -s mh -b mh-port\n' +
        '-e -u [fd00::41]:53 -r [fd00::1]:53 -m -w 0\n' +
        '-d -u [fd00::41]:53 -r [fd00::1]:53\n' +
        '-D --sctp-service 10.0.0.1:9\n',
    );
  });

  it('refuses data that could break the line format', () => {
    expect(() => renderIpvsadmRestore({ virtualServers: [{ ...vs, scheduler: 'rr\n-C' }] })).toThrow(
      IpvsRenderError,
    );
    expect(() => renderIpvsadmRestore({ virtualServers: [{ ...vs, address: '1.2.3.4 -C' }] })).toThrow(
      IpvsRenderError,
    );
    expect(() => renderIpvsadmRestore({ virtualServers: [{ ...vs, port: 70000 }] })).toThrow(IpvsRenderError);
    expect(() => renderIpvsadmRestore({ virtualServers: [{ ...vs, timeoutSeconds: 0 }] })).toThrow(
      IpvsRenderError,
    );
  });

  it('round-trips through the ipvsadm -S parser', () => {
    expect(parseIpvsadmSave(renderIpvsadmRestore({ virtualServers: [vs] }))).toEqual([vs]);
  });
});

describe('ipset text', () => {
  const set = {
    name: 'KUBE-CLUSTER-IP',
    type: 'hash:ip,port' as const,
    family: 'inet' as const,
    hashSize: 1024,
    maxElem: 65536,
    portRange: '0-65535',
    entries: ['172.30.0.41,tcp:80'],
  };
  it('renders create/add with -exist, bitmap ranges, optional flush', () => {
    const bitmap = { ...set, name: 'KUBE-NODE-PORT-TCP', type: 'bitmap:port' as const, entries: ['3001'] };
    expect(renderIpsetRestore([set, bitmap], { flush: true })).toBe(
      'create KUBE-CLUSTER-IP hash:ip,port family inet hashsize 1024 maxelem 65536 -exist\n' +
        'flush KUBE-CLUSTER-IP\n' +
        'add KUBE-CLUSTER-IP 172.30.0.41,tcp:80 -exist\n' +
        'create KUBE-NODE-PORT-TCP bitmap:port range 0-65535 -exist\n' +
        'flush KUBE-NODE-PORT-TCP\n' +
        'add KUBE-NODE-PORT-TCP 3001 -exist\n',
    );
  });

  it('renders strict operation lines and refuses injected text', () => {
    const types = new Map([['KUBE-CLUSTER-IP', 'hash:ip,port' as const]]);
    expect(
      renderIpsetOperations(
        [
          { kind: 'ipset-add', set: 'KUBE-CLUSTER-IP', entry: '1.2.3.4,udp:53' },
          { kind: 'ipset-del', set: 'KUBE-CLUSTER-IP', entry: '1.2.3.5,sctp:9' },
          { kind: 'destroy-ipset', name: 'OLD' },
        ],
        types,
      ),
    ).toBe('add KUBE-CLUSTER-IP 1.2.3.4,udp:53\ndel KUBE-CLUSTER-IP 1.2.3.5,sctp:9\ndestroy OLD\n');
    for (const entry of ['1.2.3.4,tcp:80\nflush X', '1.2.3.4,tcp:80 -exist', 'x,tcp:80', '1.2.3.4,icmp:1']) {
      expect(() =>
        renderIpsetOperations([{ kind: 'ipset-add', set: 'KUBE-CLUSTER-IP', entry }], types),
      ).toThrow(IPSetRenderError);
    }
    expect(() => renderIpsetRestore([{ ...set, name: 'A B' }])).toThrow(IPSetRenderError);
    expect(() => renderIpsetOperations([{ kind: 'ipset-add', set: 'UNKNOWN', entry: '1' }], types)).toThrow(
      /no known type/,
    );
  });

  it('names IPv6 sets KUBE-6-*, cut to 31 characters', () => {
    expect(ipsetName('KUBE-LOAD-BALANCER-SOURCE-CIDR', 6)).toBe('KUBE-6-LOAD-BALANCER-SOURCE-CID');
    expect(ipsetName('KUBE-NODE-PORT-LOCAL-SCTP-HASH', 6)).toBe('KUBE-6-NODE-PORT-LOCAL-SCTP-HAS');
    expect(ipsetName('KUBE-CLUSTER-IP', 4)).toBe('KUBE-CLUSTER-IP');
  });

  it('parses ipset save (kernel output format)', () => {
    const text =
      'create KUBE-CLUSTER-IP hash:ip,port family inet hashsize 1024 maxelem 65536 bucketsize 12 initval 0xbeb07d4f\n' +
      'add KUBE-CLUSTER-IP 172.30.0.43,tcp:80\nadd KUBE-CLUSTER-IP 172.30.0.41,tcp:80\n' +
      'create KUBE-NODE-PORT-TCP bitmap:port range 0-65535\nadd KUBE-NODE-PORT-TCP 30080\nadd KUBE-NODE-PORT-TCP 3001\n' +
      'create OTHER list:set size 8\n';
    expect(parseIPSetSave(text)).toEqual([
      { ...set, entries: ['172.30.0.41,tcp:80', '172.30.0.43,tcp:80'] },
      { ...set, name: 'KUBE-NODE-PORT-TCP', type: 'bitmap:port', entries: ['3001', '30080'] },
    ]);
  });
});

describe('iptables text', () => {
  it('escapes comments so nothing breaks the restore syntax', () => {
    expect(quoteComment('a "b" \\ c\nCOMMIT')).toBe('"a \\"b\\" \\\\ c COMMIT"');
    expect(Buffer.byteLength(quoteComment('é'.repeat(300)))).toBeLessThanOrEqual(257);
  });

  it('refuses rules that cannot be written', () => {
    const bad = (rule: object) => () =>
      renderResidualIptables({ filterChains: [], natChains: [], rules: [rule as never] });
    expect(
      bad({ table: 'nat', chain: 'X\nCOMMIT', matches: [], target: { kind: 'verdict', verdict: 'ACCEPT' } }),
    ).toThrow(IptablesRenderError);
    expect(
      bad({
        table: 'nat',
        chain: 'X',
        matches: [{ kind: 'source', cidr: '1.2.3.4 -j X', negated: false }],
        target: { kind: 'verdict', verdict: 'ACCEPT' },
      }),
    ).toThrow(IptablesRenderError);
    expect(
      bad({
        table: 'nat',
        chain: 'X',
        matches: [{ kind: 'set', set: 'S', flags: ['dst', 'x'] }],
        target: { kind: 'verdict', verdict: 'ACCEPT' },
      }),
    ).toThrow(IptablesRenderError);
  });

  it('lists kube-proxy IPVS jump rules', () => {
    expect(ipvsJumpRules().map((j) => `${j.table}/${j.sourceChain}->${j.targetChain}`)).toEqual([
      'nat/OUTPUT->KUBE-SERVICES',
      'nat/PREROUTING->KUBE-SERVICES',
      'nat/POSTROUTING->KUBE-POSTROUTING',
      'filter/FORWARD->KUBE-FORWARD',
      'filter/INPUT->KUBE-NODE-PORT',
      'filter/INPUT->KUBE-PROXY-FIREWALL',
      'filter/FORWARD->KUBE-PROXY-FIREWALL',
      'filter/INPUT->KUBE-IPVS-FILTER',
      'filter/OUTPUT->KUBE-IPVS-OUT-FILTER',
    ]);
  });
});

describe('tool output parsers and the real executor’s calls', () => {
  it('parses ipvsadm -L -n connection counts and ip addr output', () => {
    const list =
      'IP Virtual Server version 1.2.1 (size=4096)\nProt LocalAddress:Port Scheduler Flags\n' +
      '  -> RemoteAddress:Port           Forward Weight ActiveConn InActConn\n' +
      'TCP  172.30.0.41:80 rr persistent 10800\n  -> 10.180.0.1:80                Masq    1      3          7\n' +
      'UDP  [fd00::41]:53 rr\n  -> [fd00::1]:53                 Masq    0      0          1\n' +
      'FWM  5 rr\n  -> 10.9.9.9:80                  Masq    1      9          9\n';
    expect(parseIpvsadmList(list)).toEqual(
      new Map([
        ['172.30.0.41:80/TCP/10.180.0.1:80', { active: 3, inactive: 7 }],
        ['[fd00::41]:53/UDP/[fd00::1]:53', { active: 0, inactive: 1 }],
      ]),
    );
    expect(
      parseIPAddrShow(
        '7: kube-ipvs0    inet 172.30.0.41/32 scope global kube-ipvs0\\       valid_lft forever preferred_lft forever\n' +
          '7: kube-ipvs0    inet6 fd00::41/128 scope global \\       valid_lft forever preferred_lft forever\n',
      ),
    ).toEqual(['172.30.0.41', 'fd00::41']);
  });

  it('groups operations into ipset restore, ipvsadm -R and ip -batch calls inside the netns', async () => {
    const ex = new SpawnIpvsExecutor({ netns: 'test-ns' });
    const calls = await ex.plan([
      {
        kind: 'create-ipset',
        set: { name: 'S', type: 'hash:ip', family: 'inet', hashSize: 64, maxElem: 8, portRange: '0-65535' },
      },
      { kind: 'ipset-add', set: 'S', entry: '10.0.0.1' },
      { kind: 'bind-address', address: '10.0.0.1' },
      { kind: 'bind-address', address: 'fd00::1' },
      {
        kind: 'add-virtual-server',
        virtualServer: {
          address: '10.0.0.1',
          port: 80,
          protocol: 'TCP',
          scheduler: 'rr',
          flags: [],
          timeoutSeconds: 0,
        },
      },
      { kind: 'unbind-address', address: '10.0.0.2' },
    ]);
    const ns = ['nsenter', '--net=/run/netns/test-ns', '--'];
    expect(calls).toEqual([
      {
        argv: [...ns, 'ipset', 'restore'],
        input: 'create S hash:ip family inet hashsize 64 maxelem 8\nadd S 10.0.0.1\n',
      },
      {
        argv: [...ns, 'ip', '-batch', '-'],
        input: 'address add 10.0.0.1/32 dev kube-ipvs0\naddress add fd00::1/128 dev kube-ipvs0\n',
      },
      { argv: [...ns, 'ipvsadm', '-R'], input: '-A -t 10.0.0.1:80 -s rr\n' },
      { argv: [...ns, 'ip', '-batch', '-'], input: 'address del 10.0.0.2/32 dev kube-ipvs0\n' },
    ]);
    await expect(ex.plan([{ kind: 'bind-address', address: '1.2.3.4/0 dev eth0' }])).rejects.toThrow(
      IpvsRenderError,
    );
    expect(() => new SpawnIpvsExecutor({ netns: '../x' })).toThrow(TypeError);
  });
});
