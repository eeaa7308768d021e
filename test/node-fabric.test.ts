import { runChecked } from '@nodeagent/test-support/command';
import { createNetns, listLeakedNetns, type Netns, NetnsError } from '@nodeagent/test-support/netns';
import { joinNodeSandboxes } from '@nodeagent/test-support/node-fabric';
import { BUSYBOX_PATH, describeRealNode } from '@nodeagent/test-support/real-node';
import { afterEach, describe, expect, it } from 'vitest';

const PREFIX = 'fabrictest';

describe('joinNodeSandboxes argument checks', () => {
  // Checked before any namespace is made: no root needed, nothing to clean up.
  const fake = (podCidr: string) => ({ netns: {} as Netns, podCidr });
  it('needs two nodes or more', async () => {
    await expect(joinNodeSandboxes([fake('10.1.1.0/24')])).rejects.toThrow(/at least two nodes, got 1/);
  });
  it('refuses a pod CIDR given twice, or one that is not an IPv4 CIDR', async () => {
    await expect(joinNodeSandboxes([fake('10.1.1.0/24'), fake('10.1.1.0/24')])).rejects.toThrow(
      /pod CIDR 10\.1\.1\.0\/24 is given to two nodes/,
    );
    await expect(joinNodeSandboxes([fake('10.1.1.0/24'), fake('fd00::/64')])).rejects.toBeInstanceOf(
      NetnsError,
    );
  });
  it('refuses a link prefix that is not three octets', async () => {
    await expect(
      joinNodeSandboxes([fake('10.1.1.0/24'), fake('10.1.2.0/24')], { linkPrefix: '10.1' }),
    ).rejects.toThrow(/linkPrefix "10\.1"/);
  });
});

describeRealNode('joinNodeSandboxes in namespaces', ['root', 'netns', 'busybox'], () => {
  const stops: (() => Promise<void>)[] = [];
  afterEach(async () => {
    for (const s of stops.splice(0).reverse()) await s();
    expect(await listLeakedNetns(PREFIX)).toEqual([]);
  });

  it('joins nodes by a bridge, routes each pod CIDR via its node, and leaves the host alone', async () => {
    const hostLinks = await runChecked(['ip', '-o', 'link', 'show']);
    const hostRoutes = await runChecked(['ip', 'route', 'show']);
    const a = await createNetns(PREFIX);
    stops.push(() => a.stop());
    const b = await createNetns(PREFIX);
    stops.push(() => b.stop());
    const fabric = await joinNodeSandboxes(
      [
        { netns: a, podCidr: '10.77.1.0/24' },
        { netns: b, podCidr: '10.77.2.0/24' },
      ],
      { name: PREFIX, linkPrefix: '10.66.0' },
    );
    stops.push(() => fabric.stop());
    expect(fabric.nodeIps).toEqual(['10.66.0.11', '10.66.0.12']);
    expect(await a.execChecked(['ip', 'route', 'get', '10.77.2.5'])).toMatch(/via 10\.66\.0\.12 dev eth0/);
    expect(await b.execChecked(['ip', 'route', 'get', '10.77.1.5'])).toMatch(/via 10\.66\.0\.11 dev eth0/);
    expect((await a.execChecked(['sysctl', '-n', 'net.ipv4.ip_forward'])).trim()).toBe('1');
    // Across the bridge: a reaches b's address on the link.
    const ping = await a.exec([BUSYBOX_PATH, 'ping', '-c', '1', '-W', '2', '10.66.0.12'], {
      timeoutMs: 10_000,
    });
    expect(ping.code, ping.stdout + ping.stderr).toBe(0);
    // The host's own namespace got no interface and no route.
    expect(await runChecked(['ip', '-o', 'link', 'show'])).toBe(hostLinks);
    expect(await runChecked(['ip', 'route', 'show'])).toBe(hostRoutes);
  });
});
