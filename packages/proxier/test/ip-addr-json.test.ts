import { createNetns, listLeakedNetns, type Netns } from '@nodeagent/test-support/netns';
import { describeRealNode } from '@nodeagent/test-support/real-node';
import { afterEach, describe, expect, it } from 'vitest';
import { parseIpAddrJson } from '../src/cli/doctor-read.js';
import { parseIpAddrShowJson } from '../src/ip-addr-json.js';
import { listInterfaceAddresses } from '../src/node-manager.js';

// Shaped as iproute2 6.x prints `ip -j addr show` (fields trimmed to those read).
const SHOW = JSON.stringify([
  {
    ifindex: 1,
    ifname: 'lo',
    addr_info: [{ family: 'inet', local: '127.0.0.1', prefixlen: 8, scope: 'host' }],
  },
  {
    ifindex: 2,
    ifname: 'eth0',
    addr_info: [
      { family: 'inet', local: '10.0.0.5', prefixlen: 24, scope: 'global' },
      { family: 'inet6', local: 'fd00::5', prefixlen: 64, scope: 'global' },
      { family: 'inet6', local: 'fe80::1', prefixlen: 64, scope: 'link' },
    ],
  },
  { ifindex: 3, ifname: 'veth0', addr_info: [] },
  { ifindex: 4, ifname: 'dummy0' },
]);

describe('parseIpAddrShowJson', () => {
  it('reads every address with its interface and scope', () => {
    expect(parseIpAddrShowJson(SHOW)).toEqual([
      { ifname: 'lo', address: '127.0.0.1', scope: 'host' },
      { ifname: 'eth0', address: '10.0.0.5', scope: 'global' },
      { ifname: 'eth0', address: 'fd00::5', scope: 'global' },
      { ifname: 'eth0', address: 'fe80::1', scope: 'link' },
    ]);
    expect(parseIpAddrShowJson('[]')).toEqual([]);
  });

  it('skips wrong-typed entries and rejects text that is not a JSON array', () => {
    const odd = JSON.stringify([
      null,
      { ifname: 7, addr_info: [{ local: '10.1.0.1' }, { local: 42 }, { local: '' }, 'x'] },
      { ifname: 'a"b\nc', addr_info: { local: '10.2.0.1' } },
    ]);
    expect(parseIpAddrShowJson(odd)).toEqual([{ ifname: '', address: '10.1.0.1', scope: undefined }]);
    expect(() => parseIpAddrShowJson('{"addr_info":[]}')).toThrow(SyntaxError);
    expect(() => parseIpAddrShowJson('Object "addr" is unknown')).toThrow(SyntaxError);
  });

  it("doctor's reading drops loopback and IPv6 link-local, and reads nothing from bad output", () => {
    expect(parseIpAddrJson(SHOW)).toEqual(['10.0.0.5', 'fd00::5']);
    expect(parseIpAddrJson(undefined)).toEqual([]);
    expect(parseIpAddrJson('not json')).toEqual([]);
    expect(parseIpAddrJson('{}')).toEqual([]);
  });
});

describeRealNode('listInterfaceAddresses in a network namespace', ['root', 'netns'], () => {
  let ns: Netns | undefined;
  afterEach(async () => {
    await ns?.stop();
    ns = undefined;
    expect(await listLeakedNetns('ipjson')).toEqual([]);
  });

  it("reads the namespace's addresses through `ip -j`, and names a namespace that does not exist", async () => {
    ns = await createNetns('ipjson');
    await ns.execChecked(['ip', 'addr', 'add', '10.203.0.7/32', 'dev', 'lo']);
    const addresses = await listInterfaceAddresses({ netns: ns.name });
    expect(addresses).toEqual(expect.arrayContaining(['127.0.0.1', '10.203.0.7']));
    await expect(listInterfaceAddresses({ netns: `${ns.name}-gone` })).rejects.toThrow(
      `listing the addresses of netns ${ns.name}-gone`,
    );
  });
});
