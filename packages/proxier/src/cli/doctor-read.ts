/**
 * `doctor`: everything it reads from the node, through one injectable command runner, so
 * that unit tests feed saved outputs (iptables-save, nft list, ipvsadm, sysctl) and the real
 * command reads a named network namespace (`ip netns exec NAME ...`) or the caller's.
 *
 * @module
 */
import { CommandError, runCommand } from '@nodeagent/core';
import { parseIpAddrShowJson } from '../ip-addr-json.js';

/** What a command printed and how it ended. */
export interface DoctorCommandResult {
  /** Exit code. */
  readonly code: number;
  /** Standard output. */
  readonly stdout: string;
  /** Standard error. */
  readonly stderr: string;
}

/**
 * Runs one read-only command (`argv[0]` is the program) in the node's namespace and resolves
 * with its result, or with `undefined` when the program is not installed.
 */
export type DoctorRunner = (argv: readonly string[]) => Promise<DoctorCommandResult | undefined>;

/** A {@link DoctorRunner} spawning the programs, inside `ip netns exec NETNS` when `netns` is given. */
export function spawnDoctorRunner(netns?: string): DoctorRunner {
  if (netns !== undefined && !/^[A-Za-z0-9_.-]{1,64}$/.test(netns)) {
    throw new TypeError(`netns name ${JSON.stringify(netns)} is not valid`);
  }
  const prefix = netns === undefined ? [] : ['ip', 'netns', 'exec', netns];
  return async (argv) => {
    try {
      const r = await runCommand([...prefix, ...argv], {});
      // `ip netns exec` reports a program it cannot run with exit code 255 and this message.
      if (netns !== undefined && r.code === 255 && /No such file or directory/.test(r.stderr)) {
        if (r.stderr.includes(`exec of "${argv[0]}" failed`)) return undefined;
      }
      return { code: r.code ?? -1, stdout: r.stdout, stderr: r.stderr };
    } catch (e) {
      if (e instanceof CommandError) return undefined;
      throw e;
    }
  };
}

/** The sysctls doctor reads (`/proc/sys` paths, dotted). */
export const DOCTOR_SYSCTLS = [
  'net.ipv4.ip_forward',
  'net.ipv6.conf.all.forwarding',
  'net.ipv4.conf.all.route_localnet',
  'net.bridge.bridge-nf-call-iptables',
  'net.bridge.bridge-nf-call-ip6tables',
] as const;

/** One iptables backend's saved tables for both families (undefined: the tool is not installed). */
export interface IptablesSaves {
  /** `iptables-*-save` output. */
  readonly v4: string | undefined;
  /** `ip6tables-*-save` output. */
  readonly v6: string | undefined;
}

/** What doctor read from the node. */
export interface NodeReadings {
  /** `iptables-legacy-save` / `ip6tables-legacy-save`. */
  readonly iptablesLegacy: IptablesSaves;
  /** `iptables-nft-save` / `ip6tables-nft-save`. */
  readonly iptablesNft: IptablesSaves;
  /** `nft list table ip kube-proxy` (undefined: no such table or no nft). */
  readonly nftIp: string | undefined;
  /** `nft list table ip6 kube-proxy`. */
  readonly nftIp6: string | undefined;
  /** `ipvsadm -Ln` (undefined: no ipvsadm or no IPVS in the kernel). */
  readonly ipvs: string | undefined;
  /** Sysctl values; a missing key is not present in this kernel/namespace. */
  readonly sysctls: Readonly<Record<string, string>>;
  /** The node's addresses (`ip -j addr show`), loopback excluded. */
  readonly addresses: readonly string[];
  /** Tool versions (undefined: not installed). */
  readonly versions: {
    readonly nft: string | undefined;
    readonly iptables: string | undefined;
    readonly conntrack: string | undefined;
    readonly ipvsadm: string | undefined;
    readonly kernel: string | undefined;
  };
}

async function out(run: DoctorRunner, argv: readonly string[]): Promise<string | undefined> {
  const r = await run(argv);
  return r !== undefined && r.code === 0 ? r.stdout : undefined;
}

function firstVersion(text: string | undefined): string | undefined {
  if (text === undefined) return undefined;
  return /v?(\d+\.\d+(?:\.\d+)?)/.exec(text)?.[1];
}

/** Addresses of `ip -j addr show`, loopback (scope host) and IPv6 link-local excluded; none when unreadable. */
export function parseIpAddrJson(text: string | undefined): string[] {
  if (text === undefined || text.trim() === '') return [];
  try {
    return parseIpAddrShowJson(text)
      .filter((a) => a.scope !== 'host' && !a.address.startsWith('fe80:'))
      .map((a) => a.address);
  } catch {
    return [];
  }
}

/** Reads everything doctor needs, one command at a time (cheap, read-only). */
export async function readNode(run: DoctorRunner): Promise<NodeReadings> {
  const sysctls: Record<string, string> = {};
  for (const key of DOCTOR_SYSCTLS) {
    const v = await out(run, ['cat', `/proc/sys/${key.replaceAll('.', '/')}`]);
    if (v !== undefined) sysctls[key] = v.trim();
  }
  const ipvsText = await out(run, ['ipvsadm', '-Ln']);
  return {
    iptablesLegacy: {
      v4: await out(run, ['iptables-legacy-save']),
      v6: await out(run, ['ip6tables-legacy-save']),
    },
    iptablesNft: {
      v4: await out(run, ['iptables-nft-save']),
      v6: await out(run, ['ip6tables-nft-save']),
    },
    nftIp: await out(run, ['nft', 'list', 'table', 'ip', 'kube-proxy']),
    nftIp6: await out(run, ['nft', 'list', 'table', 'ip6', 'kube-proxy']),
    ipvs: ipvsText,
    sysctls,
    addresses: parseIpAddrJson(await out(run, ['ip', '-j', 'addr', 'show'])),
    versions: {
      nft: firstVersion(await out(run, ['nft', '--version'])),
      iptables: firstVersion(await out(run, ['iptables', '--version'])),
      conntrack: firstVersion(await out(run, ['conntrack', '--version'])),
      ipvsadm: firstVersion(await out(run, ['ipvsadm', '--version'])),
      kernel: firstVersion(await out(run, ['uname', '-r'])),
    },
  };
}
