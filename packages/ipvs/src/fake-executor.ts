/**
 * An in-memory IPVS table, ipsets and dummy-interface addresses that apply
 * {@link IpvsOperation}s with the kernel tools' semantics: duplicates and missing objects are
 * errors with the tools' messages, entries are validated and stored in canonical form, and a
 * deleted virtual server takes its real servers with it.
 *
 * @module
 */
import { parseCIDR, parseIP } from '@nodeagent/core';
import type { ConnectionCounts } from './diff.js';
import {
  type IpvsExecutor,
  IpvsOperationError,
  type IpvsStatsSource,
  type IpvsTimeouts,
  timeoutSeconds,
} from './executor.js';
import { parseIPSetEntry } from './ipsets.js';
import {
  compareVirtualServers,
  type IPSet,
  type IPSetType,
  type IpvsState,
  type RealServer,
  type RealServerId,
  realServerKey,
  uniqueRealServerKey,
  type VirtualServer,
  type VirtualServerId,
  type VirtualServerSpec,
  virtualServerKey,
  virtualServerSpec,
} from './model.js';
import type { IPSetHeader, IpvsOperation } from './operations.js';

interface FakeVS {
  spec: VirtualServerSpec;
  reals: Map<string, RealServer>;
}

interface FakeSet {
  header: IPSetHeader;
  entries: Set<string>;
}

/** Refuses an operation: thrown inside `apply` and turned into an {@link IpvsOperationError}. */
class Refused extends Error {}

/** ipset's canonical text of an entry of `set`, or a refusal like ipset's. */
function canonicalEntry(set: IPSetHeader, entry: string): string {
  const p = parseIPSetEntry(set.type, entry);
  const fam = set.family === 'inet6' ? 6 : 4;
  const syntax = () =>
    new Refused(`Syntax error: cannot parse ${JSON.stringify(entry)} as a ${set.type} element`);
  if (!p) throw syntax();
  if (set.type === 'bitmap:port') {
    const [lo, hi] = set.portRange.split('-').map(Number);
    if (p.port! < lo! || p.port! > hi!) throw new Refused('Element is out of the range of the set');
    return String(p.port);
  }
  const ip = parseIP(p.ip!);
  if (ip?.family !== fam) throw syntax();
  if (set.type === 'hash:ip') return ip.ip;
  const base = `${ip.ip},${p.protocol}:${p.port}`;
  if (set.type === 'hash:ip,port') return base;
  if (set.type === 'hash:ip,port,ip') {
    const ip2 = parseIP(p.ip2!);
    if (ip2?.family !== fam) throw syntax();
    return `${base},${ip2.ip}`;
  }
  const net = parseCIDR(p.net!);
  if (net?.family !== fam) throw syntax();
  return `${base},${net.cidr}`;
}

function sortEntries(type: IPSetType, entries: Iterable<string>): string[] {
  const list = [...entries];
  return type === 'bitmap:port' ? list.sort((a, b) => Number(a) - Number(b)) : list.sort();
}

/**
 * The fake kernel for IPVS tests. Also an {@link IpvsStatsSource}: set connection counts with
 * {@link FakeIpvsExecutor.setConnections}.
 *
 * @example
 * ```ts
 * const kernel = new FakeIpvsExecutor();
 * const { operations } = diffIpvs(await kernel.read(), plan);
 * await kernel.apply(operations);
 * ```
 */
export class FakeIpvsExecutor implements IpvsExecutor, IpvsStatsSource {
  /** Every `apply` call's operations, in order (including failed calls). */
  readonly applied: IpvsOperation[][] = [];
  readonly #vs = new Map<string, FakeVS>();
  readonly #addresses = new Set<string>();
  readonly #sets = new Map<string, FakeSet>();
  readonly #connections = new Map<string, ConnectionCounts>();
  #failure: ((op: IpvsOperation) => string | undefined) | undefined;
  #timeouts = { tcp: 900, tcpfin: 120, udp: 300 };
  #ipsetVersion = 'ipset v7.17, protocol version: 7';

  /** @param initial a state to start from (applied as operations, so it must be valid). */
  constructor(initial?: IpvsState) {
    if (initial) this.#load(initial);
  }

  #load(s: IpvsState): void {
    for (const set of s.ipsets) {
      const { entries, ...header } = set;
      this.#apply({ kind: 'create-ipset', set: header });
      for (const entry of entries) this.#apply({ kind: 'ipset-add', set: set.name, entry });
    }
    for (const address of s.boundAddresses) this.#apply({ kind: 'bind-address', address });
    for (const vs of s.virtualServers) {
      this.#apply({ kind: 'add-virtual-server', virtualServer: virtualServerSpec(vs) });
      for (const rs of vs.realServers)
        this.#apply({ kind: 'add-real-server', virtualServer: vs, realServer: rs });
    }
  }

  /**
   * Makes operations fail: `check` returns an error message for an operation that should be
   * refused, or undefined. Pass undefined to stop injecting failures.
   */
  failWhen(check: ((op: IpvsOperation) => string | undefined) | undefined): void {
    this.#failure = check;
  }

  /** The IPVS timeouts in seconds (the kernel's defaults until {@link FakeIpvsExecutor.configureTimeouts}). */
  timeouts(): { readonly tcp: number; readonly tcpfin: number; readonly udp: number } {
    return { ...this.#timeouts };
  }

  /** @inheritdoc */
  async configureTimeouts(timeouts: IpvsTimeouts): Promise<void> {
    const [tcp, tcpfin, udp] = timeoutSeconds(timeouts);
    this.#timeouts = {
      tcp: tcp || this.#timeouts.tcp,
      tcpfin: tcpfin || this.#timeouts.tcpfin,
      udp: udp || this.#timeouts.udp,
    };
  }

  /** Sets what {@link FakeIpvsExecutor.ipsetVersion} answers. */
  setIpsetVersion(text: string): void {
    this.#ipsetVersion = text;
  }

  /** @inheritdoc */
  async ipsetVersion(): Promise<string> {
    return this.#ipsetVersion;
  }

  /** Sets the connection counts {@link FakeIpvsExecutor.readConnections} reports for a real server. */
  setConnections(vs: VirtualServerId, rs: RealServerId, counts: ConnectionCounts): void {
    this.#connections.set(uniqueRealServerKey(vs, rs), counts);
  }

  /** @inheritdoc */
  async readConnections(): Promise<ReadonlyMap<string, ConnectionCounts>> {
    const out = new Map<string, ConnectionCounts>();
    for (const [vk, vs] of this.#vs) {
      for (const rk of vs.reals.keys()) {
        out.set(`${vk}/${rk}`, this.#connections.get(`${vk}/${rk}`) ?? { active: 0, inactive: 0 });
      }
    }
    return out;
  }

  /** The state right now (synchronous, for assertions). */
  state(): IpvsState {
    const virtualServers: VirtualServer[] = [...this.#vs.values()]
      .map((v) => ({
        ...virtualServerSpec(v.spec),
        realServers: [...v.reals.values()].sort((a, b) =>
          realServerKey(a) < realServerKey(b) ? -1 : realServerKey(a) > realServerKey(b) ? 1 : 0,
        ),
      }))
      .sort(compareVirtualServers);
    const ipsets: IPSet[] = [...this.#sets.values()]
      .map((s) => ({ ...s.header, entries: sortEntries(s.header.type, s.entries) }))
      .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    return { virtualServers, boundAddresses: [...this.#addresses].sort(), ipsets };
  }

  /** @inheritdoc */
  async read(): Promise<IpvsState> {
    return this.state();
  }

  /** @inheritdoc */
  async apply(operations: readonly IpvsOperation[]): Promise<void> {
    this.applied.push([...operations]);
    operations.forEach((op, i) => {
      try {
        const injected = this.#failure?.(op);
        if (injected !== undefined) throw new Refused(injected);
        this.#apply(op);
      } catch (e) {
        if (e instanceof Refused) throw new IpvsOperationError(op, i, e.message);
        throw e;
      }
    });
  }

  #set(name: string): FakeSet {
    const s = this.#sets.get(name);
    if (!s) throw new Refused('The set with the given name does not exist');
    return s;
  }

  #server(id: VirtualServerId): FakeVS {
    const v = this.#vs.get(virtualServerKey(id));
    if (!v) throw new Refused('No such service');
    return v;
  }

  #address(a: string, what: string): string {
    const ip = parseIP(String(a))?.ip;
    if (ip === undefined) throw new Refused(`Invalid ${what} address ${JSON.stringify(a)}`);
    return ip;
  }

  #apply(op: IpvsOperation): void {
    switch (op.kind) {
      case 'create-ipset': {
        if (this.#sets.has(op.set.name)) {
          throw new Refused('Set cannot be created: set with the same name already exists');
        }
        if (!/^[^\s]{1,31}$/.test(op.set.name))
          throw new Refused('Syntax error: setname is too long or invalid');
        this.#sets.set(op.set.name, { header: { ...op.set }, entries: new Set() });
        return;
      }
      case 'destroy-ipset':
        this.#set(op.name);
        this.#sets.delete(op.name);
        return;
      case 'ipset-add': {
        const s = this.#set(op.set);
        const e = canonicalEntry(s.header, op.entry);
        if (s.entries.has(e)) throw new Refused("Element cannot be added to the set: it's already added");
        if (s.header.type !== 'bitmap:port' && s.entries.size >= s.header.maxElem) {
          throw new Refused('Hash is full, cannot add more elements');
        }
        s.entries.add(e);
        return;
      }
      case 'ipset-del': {
        const s = this.#set(op.set);
        const e = canonicalEntry(s.header, op.entry);
        if (!s.entries.delete(e)) throw new Refused("Element cannot be deleted from the set: it's not added");
        return;
      }
      case 'bind-address': {
        const a = this.#address(op.address, 'local');
        if (this.#addresses.has(a)) throw new Refused('RTNETLINK answers: File exists');
        this.#addresses.add(a);
        return;
      }
      case 'unbind-address': {
        const a = this.#address(op.address, 'local');
        if (!this.#addresses.delete(a))
          throw new Refused('RTNETLINK answers: Cannot assign requested address');
        return;
      }
      case 'add-virtual-server': {
        const spec = {
          ...virtualServerSpec(op.virtualServer),
          address: this.#address(op.virtualServer.address, 'service'),
        };
        const key = virtualServerKey(spec);
        if (this.#vs.has(key)) throw new Refused('Service already exists');
        this.#vs.set(key, { spec, reals: new Map() });
        return;
      }
      case 'update-virtual-server': {
        const v = this.#server(op.virtualServer);
        v.spec = { ...virtualServerSpec(op.virtualServer), address: v.spec.address };
        return;
      }
      case 'delete-virtual-server': {
        const v = this.#server(op.virtualServer);
        const vk = virtualServerKey(v.spec);
        for (const rk of v.reals.keys()) this.#connections.delete(`${vk}/${rk}`);
        this.#vs.delete(vk);
        return;
      }
      case 'add-real-server': {
        const v = this.#server(op.virtualServer);
        const address = this.#address(op.realServer.address, 'server');
        if (address.includes(':') !== v.spec.address.includes(':')) {
          throw new Refused('Address family of the destination does not match the service');
        }
        const rs = { address, port: op.realServer.port, weight: op.realServer.weight };
        const rk = realServerKey(rs);
        if (v.reals.has(rk)) throw new Refused('Destination already exists');
        v.reals.set(rk, rs);
        return;
      }
      case 'update-real-server': {
        const v = this.#server(op.virtualServer);
        const rk = realServerKey({
          address: this.#address(op.realServer.address, 'server'),
          port: op.realServer.port,
        });
        const rs = v.reals.get(rk);
        if (!rs) throw new Refused('No such destination');
        v.reals.set(rk, { ...rs, weight: op.realServer.weight });
        return;
      }
      case 'delete-real-server': {
        const v = this.#server(op.virtualServer);
        const rk = realServerKey({
          address: this.#address(op.realServer.address, 'server'),
          port: op.realServer.port,
        });
        if (!v.reals.delete(rk)) throw new Refused('No such destination');
        this.#connections.delete(`${virtualServerKey(v.spec)}/${rk}`);
        return;
      }
    }
  }
}
