import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { runChecked } from '@nodeagent/test-support/command';
import {
  createNetns,
  createVethPair,
  listLeakedNetns,
  type Netns,
  NetnsError,
} from '@nodeagent/test-support/netns';
import { cleanupStaleNetns, creatorPid } from '@nodeagent/test-support/netns-stale';
import { isAlive } from '@nodeagent/test-support/procfs';
import { describeRealNode } from '@nodeagent/test-support/real-node';
import { afterEach, describe, expect, it } from 'vitest';

const PREFIX = 'nstest';

describe('createNetns argument checks', () => {
  it('rejects a prefix with characters unsafe for names', async () => {
    await expect(createNetns('bad prefix')).rejects.toBeInstanceOf(NetnsError);
    await expect(createNetns('a-b')).rejects.toBeInstanceOf(NetnsError);
    await expect(createNetns('')).rejects.toBeInstanceOf(NetnsError);
  });
});

describe('creatorPid', () => {
  it('decodes the PID from names made by createNetns, and only those', () => {
    expect(creatorPid('nstest', `nstest-${(4242).toString(36)}-a`)).toBe(4242);
    expect(creatorPid('nstest', 'nstest-x')).toBeUndefined();
    expect(creatorPid('nstest', 'other-3a-1')).toBeUndefined();
    expect(creatorPid('ns.t', 'nsxt-3a-1')).toBeUndefined();
  });
});

describeRealNode('network namespaces', ['root', 'netns', 'busybox'], () => {
  const created: Netns[] = [];
  const make = async () => {
    const ns = await createNetns(PREFIX);
    created.push(ns);
    return ns;
  };
  afterEach(async () => {
    await Promise.all(created.splice(0).map((ns) => ns.stop()));
    expect(await listLeakedNetns(PREFIX)).toEqual([]);
  });

  it('creates a uniquely named namespace with lo up and runs commands inside', async () => {
    const [a, b] = [await make(), await make()];
    expect(a.name).not.toBe(b.name);
    expect(a.name.startsWith(`${PREFIX}-${process.pid.toString(36)}-`)).toBe(true);
    expect(a.path).toBe(`/run/netns/${a.name}`);
    expect(await listLeakedNetns(PREFIX)).toEqual(expect.arrayContaining([a.name, b.name]));
    const links = await a.execChecked(['ip', '-o', 'link', 'show']);
    expect(links.split('\n').filter(Boolean)).toHaveLength(1); // only lo: no route anywhere
    expect(links).toMatch(/lo: <LOOPBACK,UP,LOWER_UP>/);
    const echoed = await a.exec(['busybox', 'cat'], { input: 'through stdin' });
    expect(echoed).toMatchObject({ code: 0, stdout: 'through stdin' });
    expect((await a.exec(['busybox', 'false'])).code).toBe(1);
  });

  it('joins two namespaces with a veth pair that carries traffic and never touches the host', async () => {
    const hostLinksBefore = await runChecked(['ip', '-o', 'link', 'show']);
    const [a, b] = [await make(), await make()];
    const pair = await createVethPair(a, b, { addressA: '10.201.0.1/24', addressB: '10.201.0.2/24' });
    expect(pair.a.name).toBe('veth0');
    expect(pair.b.name).toBe('veth0');
    const ping = await a.exec(['busybox', 'ping', '-c', '1', '-W', '2', '10.201.0.2'], { timeoutMs: 10_000 });
    expect(ping.code).toBe(0);
    // A TCP round trip through the pair: nc listens in b, a connects. busybox nc serves one
    // connection and exits, so a client cut short under load (its timeout) consumes the
    // listener: start a new one whenever the last has exited, and connect only once it listens.
    let received = '';
    let listening: ChildProcess | undefined;
    for (let i = 0; i < 50 && !received; i++) {
      if (!listening || listening.exitCode !== null || listening.signalCode !== null) {
        listening = b.spawn(['busybox', 'nc', '-l', '-p', '7001']);
        listening.stdout?.on('data', (d: Buffer) => {
          received += d.toString();
        });
        for (let j = 0; j < 100 && !(await b.execChecked(['ss', '-Hltn', 'sport = :7001'])).trim(); j++) {
          await new Promise((r) => setTimeout(r, 20));
        }
      }
      await a.exec(['busybox', 'nc', '10.201.0.2', '7001'], { input: 'ping over veth\n', timeoutMs: 5_000 });
      for (let j = 0; j < 20 && !received; j++) await new Promise((r) => setTimeout(r, 25));
    }
    expect(received).toBe('ping over veth\n');
    expect(await runChecked(['ip', '-o', 'link', 'show'])).toBe(hostLinksBefore);
  });

  it('stop() kills spawned processes, deletes veths and the namespace, and is idempotent', async () => {
    const [a, b] = [await make(), await make()];
    await createVethPair(a, b, { nameA: 'left', nameB: 'right' });
    const sleeper = a.spawn(['busybox', 'sleep', '600']);
    const pid = sleeper.pid as number;
    expect(isAlive(pid)).toBe(true);
    await a.stop();
    await a.stop();
    expect(isAlive(pid)).toBe(false);
    expect(await listLeakedNetns(PREFIX)).toEqual([b.name]);
    // The peer end vanished with its partner.
    expect(await b.execChecked(['ip', '-o', 'link', 'show'])).not.toMatch(/right/);
    expect(() => a.spawn(['true'])).toThrow(NetnsError);
  });

  it('rejects veths to anything not made by createNetns, and bad interface names', async () => {
    const a = await make();
    const fakeHost = { ...a, name: 'host' } as Netns;
    await expect(createVethPair(a, fakeHost)).rejects.toBeInstanceOf(NetnsError);
    await expect(createVethPair(a, a)).rejects.toBeInstanceOf(NetnsError);
    const b = await make();
    await expect(createVethPair(a, b, { nameA: 'x'.repeat(16) })).rejects.toBeInstanceOf(NetnsError);
  });

  it('cleanupStaleNetns removes namespaces (and their processes) whose creator died, and only those', async () => {
    const mine = await make();
    const deadPid = spawnSync('true').pid as number;
    const stale = `${PREFIX}-${deadPid.toString(36)}-1`;
    await runChecked(['ip', 'netns', 'add', stale]);
    const inside = spawn('nsenter', [`--net=/run/netns/${stale}`, '--', 'busybox', 'sleep', '600'], {
      stdio: 'ignore',
    });
    await new Promise((r) => setTimeout(r, 100));
    expect(isAlive(inside.pid as number)).toBe(true);
    expect(await cleanupStaleNetns(PREFIX)).toEqual([stale]);
    expect(isAlive(inside.pid as number)).toBe(false);
    const remaining = await listLeakedNetns(PREFIX, { anyProcess: true });
    expect(remaining).toContain(mine.name); // a live creator's namespace stays
    expect(remaining).not.toContain(stale);
  });
});
