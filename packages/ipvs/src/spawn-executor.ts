/**
 * The real executor: `ipvsadm -R` for virtual/real servers (not `ipvsadm-restore`, which
 * clears the whole table first), `ipset restore` for sets, and `ip -batch -` for the dummy
 * interface's addresses, each spawned without a shell with its input on stdin, optionally
 * inside a named network namespace.
 *
 * Note: the kernel this project is developed on has no IPVS (`ipvsadm` says "Protocol not
 * available") and no dummy link type, so only the ipset part is exercised by the tests here;
 * the IPVS and address parts are covered by argv/stdin and parser tests.
 *
 * @module
 */
import { CommandError, parseIP, type RunCommandResult, runCommand } from '@nodeagent/core';
import type { ConnectionCounts } from './diff.js';
import {
  IpvsCommandError,
  type IpvsExecutor,
  type IpvsStatsSource,
  type IpvsTimeouts,
  timeoutSeconds,
} from './executor.js';
import type { IPSet, IPSetType, IpvsState, VirtualServer } from './model.js';
import { type IpvsOperation, operationBackend } from './operations.js';
import { parseIPAddrShow, parseIPSetSave, parseIpvsadmList, parseIpvsadmSave } from './parse-tools.js';
import { renderIpsetOperations } from './render-ipset.js';
import { IpvsRenderError, renderIpvsadmOperations } from './render-ipvsadm.js';

/** Options of {@link SpawnIpvsExecutor}. */
export interface SpawnIpvsExecutorOptions {
  /**
   * Run every command inside this named network namespace (`/run/netns/<name>`, entered with
   * `nsenter --net=`).
   * @default undefined (the caller's namespace)
   */
  readonly netns?: string;
  /**
   * The dummy interface service addresses are bound to.
   * @default 'kube-ipvs0'
   */
  readonly dummyInterface?: string;
  /**
   * Binaries to run.
   * @default { ipvsadm: 'ipvsadm', ipset: 'ipset', ip: 'ip' }
   */
  readonly binaries?: { readonly ipvsadm?: string; readonly ipset?: string; readonly ip?: string };
}

/** Runs `argv` without a shell, `input` on stdin; a command that cannot start is a {@link IpvsCommandError}. */
async function run(argv: readonly string[], input?: string): Promise<RunCommandResult> {
  try {
    return await runCommand(argv, { input });
  } catch (e) {
    if (e instanceof CommandError)
      throw new IpvsCommandError(e.argv, undefined, e.stderr, { cause: e.cause });
    throw e;
  }
}

const NAME_RE = /^[A-Za-z0-9_.-]+$/;

/** Drives `ipvsadm`, `ipset` and `ip`. Also an {@link IpvsStatsSource} (`ipvsadm -L -n`). */
export class SpawnIpvsExecutor implements IpvsExecutor, IpvsStatsSource {
  readonly #prefix: readonly string[];
  readonly #dev: string;
  readonly #ipvsadm: string;
  readonly #ipset: string;
  readonly #ip: string;
  readonly #types = new Map<string, IPSetType>();
  #dummyEnsured = false;

  /** @param options namespace, dummy interface and binaries. */
  constructor(options: SpawnIpvsExecutorOptions = {}) {
    const ns = options.netns;
    if (ns !== undefined && !NAME_RE.test(ns))
      throw new TypeError(`netns ${JSON.stringify(ns)} is not a valid name`);
    this.#prefix = ns === undefined ? [] : ['nsenter', `--net=/run/netns/${ns}`, '--'];
    this.#dev = options.dummyInterface ?? 'kube-ipvs0';
    if (!/^[A-Za-z0-9_.-]{1,15}$/.test(this.#dev)) {
      throw new TypeError(`interface ${JSON.stringify(this.#dev)} is not a valid name`);
    }
    this.#ipvsadm = options.binaries?.ipvsadm ?? 'ipvsadm';
    this.#ipset = options.binaries?.ipset ?? 'ipset';
    this.#ip = options.binaries?.ip ?? 'ip';
  }

  async #check(argv: readonly string[], input?: string): Promise<string> {
    const full = [...this.#prefix, ...argv];
    const r = await run(full, input);
    if (r.code !== 0) throw new IpvsCommandError(full, r.code, r.stderr);
    return r.stdout;
  }

  /** Creates the dummy interface if it does not exist (`ip link add <dev> type dummy`). */
  async ensureDummyInterface(): Promise<void> {
    const argv = [...this.#prefix, this.#ip, 'link', 'add', this.#dev, 'type', 'dummy'];
    const r = await run(argv);
    if (r.code !== 0 && !/exists/i.test(r.stderr)) throw new IpvsCommandError(argv, r.code, r.stderr);
    this.#dummyEnsured = true;
  }

  /** Virtual and real servers (`ipvsadm -S -n`). */
  async readVirtualServers(): Promise<VirtualServer[]> {
    return parseIpvsadmSave(await this.#check([this.#ipvsadm, '-S', '-n']));
  }

  /** Every ipset (`ipset save`). */
  async readIpsets(): Promise<IPSet[]> {
    const sets = parseIPSetSave(await this.#check([this.#ipset, 'save']));
    for (const s of sets) this.#types.set(s.name, s.type);
    return sets;
  }

  /** Addresses on the dummy interface; none when it does not exist. */
  async readBoundAddresses(): Promise<string[]> {
    const r = await run([...this.#prefix, this.#ip, '-o', 'addr', 'show', 'dev', this.#dev]);
    return r.code === 0 ? parseIPAddrShow(r.stdout) : [];
  }

  /** @inheritdoc */
  async read(): Promise<IpvsState> {
    const [virtualServers, boundAddresses, ipsets] = await Promise.all([
      this.readVirtualServers(),
      this.readBoundAddresses(),
      this.readIpsets(),
    ]);
    return { virtualServers, boundAddresses, ipsets };
  }

  /** @inheritdoc */
  async configureTimeouts(timeouts: IpvsTimeouts): Promise<void> {
    await this.#check([this.#ipvsadm, '--set', ...timeoutSeconds(timeouts).map(String)]);
  }

  /** @inheritdoc */
  async ipsetVersion(): Promise<string> {
    return this.#check([this.#ipset, '--version']);
  }

  /** @inheritdoc */
  async readConnections(): Promise<ReadonlyMap<string, ConnectionCounts>> {
    return parseIpvsadmList(await this.#check([this.#ipvsadm, '-L', '-n']));
  }

  /** The argv and stdin each group of operations runs with (for logs and tests). */
  async plan(operations: readonly IpvsOperation[]): Promise<{ argv: string[]; input: string }[]> {
    const calls: { argv: string[]; input: string }[] = [];
    let i = 0;
    while (i < operations.length) {
      const backend = operationBackend(operations[i]!);
      let j = i;
      while (j < operations.length && operationBackend(operations[j]!) === backend) j++;
      const group = operations.slice(i, j);
      i = j;
      if (backend === 'ipvs') {
        calls.push({ argv: [...this.#prefix, this.#ipvsadm, '-R'], input: renderIpvsadmOperations(group) });
      } else if (backend === 'ipset') {
        const created = new Set(group.flatMap((o) => (o.kind === 'create-ipset' ? [o.set.name] : [])));
        const unknown = group.some(
          (o) =>
            (o.kind === 'ipset-add' || o.kind === 'ipset-del') &&
            !created.has(o.set) &&
            !this.#types.has(o.set),
        );
        if (unknown) await this.readIpsets();
        calls.push({
          argv: [...this.#prefix, this.#ipset, 'restore'],
          input: renderIpsetOperations(group, this.#types),
        });
      } else {
        const lines = group.map((o) => {
          const text = o.kind === 'bind-address' || o.kind === 'unbind-address' ? o.address : '';
          const a = parseIP(String(text))?.ip;
          if (a === undefined) throw new IpvsRenderError(`${JSON.stringify(text)} is not an IP address`);
          const cidr = a.includes(':') ? `${a}/128` : `${a}/32`;
          return `address ${o.kind === 'bind-address' ? 'add' : 'del'} ${cidr} dev ${this.#dev}`;
        });
        calls.push({ argv: [...this.#prefix, this.#ip, '-batch', '-'], input: `${lines.join('\n')}\n` });
      }
    }
    return calls;
  }

  /** @inheritdoc */
  async apply(operations: readonly IpvsOperation[]): Promise<void> {
    if (!this.#dummyEnsured && operations.some((o) => o.kind === 'bind-address'))
      await this.ensureDummyInterface();
    for (const call of await this.plan(operations)) {
      const r = await run(call.argv, call.input);
      if (r.code !== 0) throw new IpvsCommandError(call.argv, r.code, r.stderr);
    }
    for (const o of operations) {
      if (o.kind === 'create-ipset') this.#types.set(o.set.name, o.set.type);
      if (o.kind === 'destroy-ipset') this.#types.delete(o.name);
    }
  }
}
