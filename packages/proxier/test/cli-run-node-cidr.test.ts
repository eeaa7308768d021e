/**
 * `nodeagent-proxy run` with `--detect-local-mode NodeCIDR` as kube-proxy's NodeManager
 * (`pkg/proxy/node.go`): no proxier before the Node has `spec.podCIDRs` (polled, 5 minutes at
 * most, then a failure with `node "<name>" does not have any PodCIDR allocated`); a stop during
 * the wait is a clean exit; a later change of the PodCIDRs exits with code 1 after
 * "PodCIDRs changed for the node". And `--nodeport-addresses` selects the local interface
 * addresses inside its CIDRs, per family (`NewNodePortAddresses` + `GetNodeIPs`). The
 * mini-apiserver in-process, fake nft executors.
 */
import type { V1Node } from '@kubernetes/client-node';
import type { Logger } from '@nodeagent/core';
import { startMiniApiServer } from '@nodeagent/mini-apiserver';
import { dumpTable, FakeNftExecutor } from '@nodeagent/nftables/testing';
import { describe, expect, it } from 'vitest';
import { CliFailure } from '../src/cli/errors.js';
import { buildBackend, type LocalNodeInfo } from '../src/cli/run.js';
import { eventually } from './fixtures.js';
import { startProxyRun } from './support/run-harness.js';

const NODE = 'cidr-node';

interface Harness {
  readonly logs: () => string;
  readonly done: Promise<number>;
  readonly stop: () => void;
  readonly setPodCIDRs: (cidrs: string[]) => void;
  readonly locals: LocalNodeInfo[];
  readonly table: () => string;
  readonly close: () => Promise<void>;
}

async function start(
  extraArgs: string[],
  opts: { timeoutMs?: number; addrs?: string[] } = {},
): Promise<Harness> {
  const server = await startMiniApiServer({ autoCreateNamespaces: true, endpointSliceController: false });
  const locals: LocalNodeInfo[] = [];
  let executor: FakeNftExecutor | undefined;
  server.store.create('nodes', {
    apiVersion: 'v1',
    kind: 'Node',
    metadata: { name: NODE },
    status: { addresses: [{ type: 'InternalIP', address: '10.0.0.2' }] },
  } satisfies V1Node as never);
  const run = await startProxyRun(server, {
    nodeName: NODE,
    args: extraArgs,
    io: {
      platform: async () => ({ ipv4: true, ipv6: false }),
      nodePollIntervalMs: 20,
      ...(opts.timeoutMs !== undefined ? { nodeWaitTimeoutMs: opts.timeoutMs } : {}),
      interfaceAddresses: async () => opts.addrs ?? ['10.0.0.2', '127.0.0.1'],
      makeBackend: async (config, family, ips, log: Logger, local) => {
        locals.push(local);
        // The real builder, with @nodeagent/nftables' spawn executor swapped for the fake one.
        const load = async (specifier: string) => {
          const mod = (await import(specifier)) as Record<string, unknown>;
          if (specifier !== '@nodeagent/nftables') return mod;
          return {
            ...mod,
            SpawnNftExecutor: class {
              constructor() {
                executor = new FakeNftExecutor();
                // biome-ignore lint/correctness/noConstructorReturn: hands out the shared fake
                return executor;
              }
            },
          };
        };
        return buildBackend(config, family, ips, log, load, local);
      },
    },
  });
  return {
    logs: run.log,
    done: run.done,
    stop: run.stop,
    setPodCIDRs: (cidrs) => {
      const n = server.store.get('nodes', undefined, NODE) as unknown as V1Node;
      server.store.update('nodes', {
        ...n,
        spec: { ...n.spec, podCIDR: cidrs[0], podCIDRs: cidrs },
      } as never);
    },
    locals,
    table: () => JSON.stringify(dumpTable(executor?.state.table('ip', 'kube-proxy')) ?? null),
    close: async () => {
      run.stop();
      await run.done.catch(() => {});
      await run.close();
      await server.stop();
    },
  };
}

describe('nodeagent-proxy run --detect-local-mode NodeCIDR (kube-proxy NodeManager)', () => {
  it('waits for the PodCIDRs, then builds the proxier with NodeCIDR detection', async () => {
    const h = await start(['--detect-local-mode', 'NodeCIDR']);
    try {
      await eventually(() => expect(h.logs()).toContain('does not have any PodCIDR allocated'), 10_000);
      await new Promise((r) => setTimeout(r, 150));
      expect(h.locals).toHaveLength(0);
      expect(h.logs()).not.toContain('running; rules follow');
      h.setPodCIDRs(['10.244.7.0/24']);
      await eventually(() => expect(h.logs()).toContain('running; rules follow'), 10_000);
      expect(h.locals[0]?.podCIDRs).toEqual(['10.244.7.0/24']);
      expect(h.logs()).toContain('Successfully retrieved the PodCIDRs of the node');
      h.stop();
      expect(await h.done).toBe(0);
    } finally {
      await h.close();
    }
  });

  it('a stop during the wait exits 0 without building anything', async () => {
    const h = await start(['--detect-local-mode', 'NodeCIDR']);
    try {
      await eventually(() => expect(h.logs()).toContain('does not have any PodCIDR allocated'), 10_000);
      h.stop();
      expect(await h.done).toBe(0);
      expect(h.locals).toHaveLength(0);
      expect(h.logs()).toContain('stopping while waiting for the PodCIDRs of the node');
    } finally {
      await h.close();
    }
  });

  it("fails after the timeout with kube-proxy's last reason", async () => {
    const h = await start(['--detect-local-mode', 'NodeCIDR'], { timeoutMs: 200 });
    try {
      await expect(h.done).rejects.toThrow(
        new CliFailure(`node "${NODE}" does not have any PodCIDR allocated`),
      );
      expect(h.locals).toHaveLength(0);
    } finally {
      await h.close();
    }
  });

  it('exits 1 when the PodCIDRs change later ("PodCIDRs changed for the node")', async () => {
    const h = await start(['--detect-local-mode', 'NodeCIDR']);
    try {
      h.setPodCIDRs(['10.244.7.0/24']);
      await eventually(() => expect(h.logs()).toContain('running; rules follow'), 10_000);
      h.setPodCIDRs(['10.244.9.0/24']);
      expect(await h.done).toBe(1);
      expect(h.logs()).toContain('PodCIDRs changed for the node');
    } finally {
      await h.close();
    }
  });

  it('ClusterCIDR mode does not wait for PodCIDRs', async () => {
    const h = await start(['--cluster-cidr', '10.244.0.0/16']);
    try {
      await eventually(() => expect(h.logs()).toContain('running; rules follow'), 10_000);
      expect(h.logs()).not.toContain('PodCIDR');
    } finally {
      await h.close();
    }
  });
});

describe('nodeagent-proxy run --nodeport-addresses (NewNodePortAddresses + GetNodeIPs)', () => {
  it('a CIDR selects the local interface addresses inside it, not only the node IP', async () => {
    const h = await start(['--nodeport-addresses', '192.168.50.0/24,fd00:50::/64'], {
      addrs: ['10.0.0.2', '192.168.50.7', '192.168.50.8', '192.168.51.1', '127.0.0.1', 'fd00:50::7'],
    });
    try {
      await eventually(() => expect(h.logs()).toContain('running; rules follow'), 10_000);
      await eventually(() => expect(h.table()).toContain('nodeport-ips'), 10_000);
      const t = h.table();
      expect(t).toContain('192.168.50.7');
      expect(t).toContain('192.168.50.8');
      expect(t).not.toContain('192.168.51.1');
      expect(t).not.toContain('10.0.0.2');
    } finally {
      await h.close();
    }
  });

  it('nftables defaults to primary: the node IP only', async () => {
    const h = await start([], { addrs: ['10.0.0.2', '10.0.0.3', '127.0.0.1'] });
    try {
      await eventually(() => expect(h.table()).toContain('nodeport-ips'), 10_000);
      expect(h.table()).toContain('10.0.0.2');
      expect(h.table()).not.toContain('10.0.0.3');
    } finally {
      await h.close();
    }
  });

  it('a family with no CIDR of its own accepts NodePorts on every local address (fib daddr type local)', async () => {
    const h = await start(['--nodeport-addresses', 'fd00:50::/64'], { addrs: ['10.0.0.2', '192.168.50.7'] });
    try {
      await eventually(() => expect(h.logs()).toContain('running; rules follow'), 10_000);
      await eventually(() => expect(h.table()).toContain('fib'), 10_000);
      expect(h.table()).not.toContain('nodeport-ips');
    } finally {
      await h.close();
    }
  });
});
