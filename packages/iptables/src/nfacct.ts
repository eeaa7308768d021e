/**
 * kube-proxy's nfacct counters (`pkg/util/nfacct`): the iptables rules count dropped
 * conntrack-INVALID packets and accepted localhost NodePort packets in named extended
 * accounting objects, and the `kubeproxy_iptables_*_packets_total` metrics read them.
 * kube-proxy speaks nfnetlink_acct directly; here the objects are managed with the `nfacct`
 * tool of libnetfilter_acct (Debian package `nfacct`), optionally inside a network namespace.
 *
 * @module
 */
import { CommandError, type RunCommandResult, runCommand } from '@nodeagent/core';

/** The counter of conntrack-INVALID packets dropped by `KUBE-FORWARD` (kube-proxy's name). */
export const NFACCT_CT_STATE_INVALID_DROPPED = 'ct_state_invalid_dropped_pkts';
/** The counter of packets accepted on a localhost NodePort (kube-proxy's name). */
export const NFACCT_LOCALHOST_NODEPORTS_ACCEPTED = 'localhost_nps_accepted_pkts';
/** Both counters kube-proxy's iptables mode ensures at start-up. */
export const KUBE_PROXY_NFACCT_COUNTERS: readonly string[] = [
  NFACCT_CT_STATE_INVALID_DROPPED,
  NFACCT_LOCALHOST_NODEPORTS_ACCEPTED,
];

/** One accounting object. */
export interface NfacctCounter {
  /** Its name. */
  readonly name: string;
  /** Packets counted. */
  readonly packets: bigint;
  /** Bytes counted. */
  readonly bytes: bigint;
}

/** What the renderer and the metrics need from the kernel's accounting objects. */
export interface NfacctClient {
  /** Creates `name` unless it exists (kube-proxy's `Ensure`). */
  ensure(name: string): Promise<void>;
  /** Every object with its counts. */
  list(): Promise<NfacctCounter[]>;
}

/** An `nfacct` command that failed (no such binary, no kernel support, ...). */
export class NfacctError extends Error {
  /**
   * @param argv - The command.
   * @param detail - Its stderr or why it did not start.
   */
  constructor(
    readonly argv: readonly string[],
    readonly detail: string,
  ) {
    super(`${argv.join(' ')}: ${detail}`);
    this.name = 'NfacctError';
  }
}

const LINE = /^\{\s*pkts\s*=\s*([0-9]+),\s*bytes\s*=\s*([0-9]+)\s*\}\s*=\s*(.+);$/;

/**
 * Parses `nfacct list` output (`{ pkts = 00000000000000000003, bytes = ... } = name;` per line).
 * Lines of another shape are ignored.
 */
export function parseNfacctList(text: string): NfacctCounter[] {
  const out: NfacctCounter[] = [];
  for (const line of text.split('\n')) {
    const m = LINE.exec(line.trim());
    if (m) out.push({ name: m[3]!, packets: BigInt(m[1]!), bytes: BigInt(m[2]!) });
  }
  return out;
}

/** Options of {@link SpawnNfacctClient}. */
export interface SpawnNfacctClientOptions {
  /** Run inside this named network namespace (`/run/netns/<name>`); accounting objects are per namespace. */
  readonly netns?: string;
  /** The binary. @default 'nfacct' */
  readonly binary?: string;
}

/** Drives the `nfacct` tool. */
export class SpawnNfacctClient implements NfacctClient {
  readonly #bin: string;
  readonly #netns: string | undefined;

  /** @param options namespace and binary. */
  constructor(options: SpawnNfacctClientOptions = {}) {
    this.#bin = options.binary ?? 'nfacct';
    this.#netns = options.netns;
  }

  async #run(args: readonly string[]): Promise<RunCommandResult> {
    const argv = [this.#bin, ...args];
    try {
      return await runCommand(argv, { netns: this.#netns });
    } catch (e) {
      if (e instanceof CommandError) throw new NfacctError(argv, e.stderr || e.message);
      throw e;
    }
  }

  /** @inheritdoc */
  async ensure(name: string): Promise<void> {
    if (!/^[A-Za-z0-9_.-]{1,31}$/.test(name))
      throw new TypeError(`nfacct name ${JSON.stringify(name)} is invalid`);
    const get = await this.#run(['get', name]);
    if (get.code === 0) return;
    const add = await this.#run(['add', name]);
    // A racing creator is fine.
    if (add.code !== 0 && !/exist/i.test(add.stderr))
      throw new NfacctError([this.#bin, 'add', name], add.stderr.trim() || `exit ${add.code}`);
  }

  /** @inheritdoc */
  async list(): Promise<NfacctCounter[]> {
    const r = await this.#run(['list']);
    if (r.code !== 0) throw new NfacctError([this.#bin, 'list'], r.stderr.trim() || `exit ${r.code}`);
    return parseNfacctList(r.stdout);
  }
}

/** Which counters the rules may use (the `nfacct` render option). */
export interface NfacctAvailability {
  /** `ct_state_invalid_dropped_pkts` exists. */
  readonly ctStateInvalid: boolean;
  /** `localhost_nps_accepted_pkts` exists. */
  readonly localhostNodePorts: boolean;
}

/**
 * kube-proxy's start-up step: ensure each counter, and use in the rules those that could be
 * ensured (a kernel without nfnetlink_acct, or no `nfacct` tool, gives none).
 */
export async function ensureNfacctCounters(client: NfacctClient): Promise<NfacctAvailability> {
  const ok = async (name: string) => {
    try {
      await client.ensure(name);
      return true;
    } catch {
      return false;
    }
  };
  return {
    ctStateInvalid: await ok(NFACCT_CT_STATE_INVALID_DROPPED),
    localhostNodePorts: await ok(NFACCT_LOCALHOST_NODEPORTS_ACCEPTED),
  };
}

/**
 * Whether this node (or namespace) can count with nfacct, without creating anything: the
 * kernel answers an `nfacct list`. What `nodeagent-proxy render --nfacct auto` asks.
 */
export async function detectNfacct(client: NfacctClient): Promise<boolean> {
  try {
    await client.list();
    return true;
  } catch {
    return false;
  }
}
