/**
 * Incremental reconciliation: the ordered operations that turn the current IPVS state into the
 * desired one, with kube-proxy's graceful termination of removed real servers.
 *
 * Graceful termination (as kube-proxy): a real server that is no longer wanted is deleted at
 * once if it is UDP/SCTP (the kernel drops its connections on the next packet, with
 * `vs/expire_nodest_conn=1`) or has no active or inactive connections; otherwise its weight is
 * set to 0 so no new connections reach it, and it is deleted by a later diff once its
 * connection count reaches 0, or once it has been draining for `gracefulTimeoutMs`. If the
 * endpoint comes back while draining, its weight is restored and it leaves the queue.
 *
 * @module
 */
import { cidrValueContains, parseCIDRValue, parseIPValue } from '@nodeagent/core';
import {
  type IPSet,
  type IpvsState,
  type RealServer,
  realServerKey,
  sameVirtualServerSpec,
  uniqueRealServerKey,
  type VirtualServer,
  type VirtualServerId,
  virtualServerKey,
  virtualServerSpec,
} from './model.js';
import type { IpvsOperation } from './operations.js';

/** Connection counts of one real server, as `ipvsadm -Ln` shows them. */
export interface ConnectionCounts {
  /** ActiveConn (established TCP connections). */
  readonly active: number;
  /** InActConn (other connection entries, e.g. TIME_WAIT). */
  readonly inactive: number;
}

/** A real server waiting for its connections to drain before it is deleted. */
export interface TerminatingRealServer {
  /** `uniqueRealServerKey(virtualServer, realServer)`. */
  readonly key: string;
  /** Its virtual server. */
  readonly virtualServer: VirtualServerId;
  /** The real server. */
  readonly realServer: RealServer;
  /** When it started draining (clock milliseconds). */
  readonly sinceMs: number;
}

/** Inputs of {@link diffIpvs} beyond the two states. */
export interface DiffIpvsOptions {
  /**
   * Real servers already draining, from the previous diff's `terminating`.
   * @default none
   */
  readonly terminating?: ReadonlyMap<string, TerminatingRealServer>;
  /**
   * Connection counts keyed by `uniqueRealServerKey`; a real server missing here counts as
   * drained, so without a stats source removed real servers are deleted at once.
   * @default none
   */
  readonly connections?: ReadonlyMap<string, ConnectionCounts>;
  /**
   * The current time (clock milliseconds), for drain timeouts.
   * @default 0
   */
  readonly nowMs?: number;
  /**
   * Delete a draining real server after this long even if it still has connections.
   * kube-proxy never gives up; neither does the default.
   * @default Infinity
   */
  readonly gracefulTimeoutMs?: number;
  /**
   * Only manage this family: current virtual servers and bound addresses of the other family
   * are left alone (a dual-stack node runs one plan per family against the same kernel).
   * @default undefined (manage everything in `current`)
   */
  readonly ipFamily?: 4 | 6;
  /**
   * `--ipvs-exclude-cidrs`: current virtual servers whose address lies in one of these CIDRs
   * and that the desired state does not have are left alone, real servers included (they
   * belong to another program). Virtual servers the desired state has are managed as usual.
   * @default none
   */
  readonly excludeCIDRs?: readonly string[];
}

/** The result of {@link diffIpvs}. */
export interface IpvsDiff {
  /** Operations, in the order they must be applied. */
  readonly operations: readonly IpvsOperation[];
  /** Real servers draining after these operations (pass to the next diff). */
  readonly terminating: ReadonlyMap<string, TerminatingRealServer>;
}

// bitmap:port sets have no family; hash sets grow their hashsize by themselves.
function sameHeader(a: IPSet, b: IPSet): boolean {
  if (a.type !== b.type) return false;
  return a.type === 'bitmap:port' ? a.portRange === b.portRange : a.family === b.family;
}

/**
 * A test for "inside one of these CIDRs". The CIDRs are checked by the caller (the reconciler
 * refuses bad ones); one that does not parse here matches nothing.
 */
function excludedBy(cidrs: readonly string[]): (address: string) => boolean {
  const parsed = cidrs.flatMap((c) => {
    const v = parseCIDRValue(c);
    return v ? [v] : [];
  });
  if (parsed.length === 0) return () => false;
  return (address) => {
    const ip = parseIPValue(address);
    return ip !== null && parsed.some((c) => cidrValueContains(c, ip));
  };
}

/** Protocols whose real servers are deleted at once (kube-proxy's `IsRsGracefulTerminationNeeded`). */
function needsGracefulTermination(vs: VirtualServerId): boolean {
  return vs.protocol === 'TCP';
}

/**
 * Computes the operations from `current` to `desired`, in this order: ipset creation and new
 * entries, address binds, virtual-server adds/updates, real-server changes, virtual-server
 * deletions, unbinds, stale ipset entries. Sets that exist but are not in `desired` are left
 * alone (they may belong to someone else).
 */
export function diffIpvs(current: IpvsState, desired: IpvsState, options: DiffIpvsOptions = {}): IpvsDiff {
  const fam = options.ipFamily;
  const mine = (address: string) => fam === undefined || address.includes(':') === (fam === 6);
  const excluded = excludedBy(options.excludeCIDRs ?? []);
  const desiredKeys = new Set(desired.virtualServers.map(virtualServerKey));
  const currentServers = current.virtualServers.filter(
    (v) => mine(v.address) && (desiredKeys.has(virtualServerKey(v)) || !excluded(v.address)),
  );
  const currentBound = current.boundAddresses.filter(mine);
  const setup: IpvsOperation[] = [];
  const binds: IpvsOperation[] = [];
  const servers: IpvsOperation[] = [];
  const reals: IpvsOperation[] = [];
  const draining: IpvsOperation[] = [];
  const deletions: IpvsOperation[] = [];
  const unbinds: IpvsOperation[] = [];
  const stale: IpvsOperation[] = [];
  const now = options.nowMs ?? 0;
  const timeout = options.gracefulTimeoutMs ?? Number.POSITIVE_INFINITY;
  const oldQueue = options.terminating ?? new Map<string, TerminatingRealServer>();
  const queue = new Map<string, TerminatingRealServer>();

  const curSets = new Map(current.ipsets.map((s) => [s.name, s]));
  for (const d of desired.ipsets) {
    const c = curSets.get(d.name);
    if (c && sameHeader(c, d)) {
      if (d.entriesRefused) continue;
      const have = new Set(c.entries);
      const want = new Set(d.entries);
      for (const e of d.entries) if (!have.has(e)) setup.push({ kind: 'ipset-add', set: d.name, entry: e });
      for (const e of c.entries) if (!want.has(e)) stale.push({ kind: 'ipset-del', set: d.name, entry: e });
      continue;
    }
    if (c) setup.push({ kind: 'destroy-ipset', name: c.name });
    const { entries, entriesRefused: _, ...header } = d;
    setup.push({ kind: 'create-ipset', set: header });
    for (const e of entries) setup.push({ kind: 'ipset-add', set: d.name, entry: e });
  }

  const curBound = new Set(currentBound);
  const desBound = new Set(desired.boundAddresses);
  for (const a of desired.boundAddresses)
    if (!curBound.has(a)) binds.push({ kind: 'bind-address', address: a });
  for (const a of currentBound) if (!desBound.has(a)) unbinds.push({ kind: 'unbind-address', address: a });

  const curVS = new Map<string, VirtualServer>(currentServers.map((v) => [virtualServerKey(v), v]));
  const desKeys = new Set<string>();
  for (const d of desired.virtualServers) {
    const key = virtualServerKey(d);
    desKeys.add(key);
    const c = curVS.get(key);
    const id: VirtualServerId = { address: d.address, port: d.port, protocol: d.protocol };
    if (!c) {
      servers.push({ kind: 'add-virtual-server', virtualServer: virtualServerSpec(d) });
      for (const rs of d.realServers)
        reals.push({ kind: 'add-real-server', virtualServer: id, realServer: rs });
      continue;
    }
    if (!sameVirtualServerSpec(c, d))
      servers.push({ kind: 'update-virtual-server', virtualServer: virtualServerSpec(d) });
    const curRS = new Map(c.realServers.map((r) => [realServerKey(r), r]));
    const desRS = new Set<string>();
    for (const rs of d.realServers) {
      const rk = realServerKey(rs);
      desRS.add(rk);
      const have = curRS.get(rk);
      if (!have) reals.push({ kind: 'add-real-server', virtualServer: id, realServer: rs });
      else if (have.weight !== rs.weight)
        reals.push({ kind: 'update-real-server', virtualServer: id, realServer: rs });
    }
    for (const have of c.realServers) {
      if (desRS.has(realServerKey(have))) continue;
      const uk = uniqueRealServerKey(id, have);
      const counts = options.connections?.get(uk);
      const busy = (counts?.active ?? 0) + (counts?.inactive ?? 0) > 0;
      const since = oldQueue.get(uk)?.sinceMs ?? now;
      const rsId = { address: have.address, port: have.port };
      if (!needsGracefulTermination(id) || !busy || now - since >= timeout) {
        draining.push({ kind: 'delete-real-server', virtualServer: id, realServer: rsId });
        continue;
      }
      if (have.weight !== 0) {
        draining.push({ kind: 'update-real-server', virtualServer: id, realServer: { ...rsId, weight: 0 } });
      }
      queue.set(uk, { key: uk, virtualServer: id, realServer: { ...rsId, weight: 0 }, sinceMs: since });
    }
  }
  for (const c of currentServers) {
    if (desKeys.has(virtualServerKey(c))) continue;
    deletions.push({
      kind: 'delete-virtual-server',
      virtualServer: { address: c.address, port: c.port, protocol: c.protocol },
    });
  }
  return {
    operations: [...setup, ...binds, ...servers, ...reals, ...draining, ...deletions, ...unbinds, ...stale],
    terminating: queue,
  };
}
