/**
 * Parsers for what the real tools print: `ipvsadm -S -n` (rules), `ipvsadm -L -n` (connection
 * counts), `ipset save` and `ip -o addr show`. Lines they do not understand (fwmark services,
 * other set types) are skipped, never guessed.
 *
 * @module
 */
import { parseIP } from '@nodeagent/core';
import type { ConnectionCounts } from './diff.js';
import {
  type IPSet,
  type IPSetType,
  type IpvsProtocol,
  type RealServer,
  realServerKey,
  type VirtualServer,
  type VirtualServerFlag,
  virtualServerKey,
} from './model.js';

/** Splits `1.2.3.4:80` / `[fd00::1]:80` into canonical address and port; undefined if malformed. */
export function splitHostPort(text: string): { address: string; port: number } | undefined {
  const m = /^\[([^\]]+)\]:([0-9]{1,5})$/.exec(text) ?? /^([^:[\]]+):([0-9]{1,5})$/.exec(text);
  if (!m) return undefined;
  const address = parseIP(m[1]!)?.ip;
  const port = Number(m[2]);
  return address === undefined || port > 65535 ? undefined : { address, port };
}

const SERVICE_FLAGS: Record<string, IpvsProtocol> = { '-t': 'TCP', '-u': 'UDP', '--sctp-service': 'SCTP' };
const SOURCE_HASH_FLAGS = new Set(['mh-port', 'sh-port', 'flag-2']);

/** Parses `ipvsadm -S -n` output into virtual servers with their real servers. */
export function parseIpvsadmSave(text: string): VirtualServer[] {
  interface Building {
    address: string;
    port: number;
    protocol: IpvsProtocol;
    scheduler: string;
    flags: VirtualServerFlag[];
    timeoutSeconds: number;
    realServers: RealServer[];
  }
  const servers = new Map<string, Building>();
  for (const line of text.split('\n')) {
    const t = line.trim().split(/\s+/);
    const cmd = t[0];
    if (cmd !== '-A' && cmd !== '-a') continue;
    let proto: IpvsProtocol | undefined;
    let vaddr: { address: string; port: number } | undefined;
    let raddr: { address: string; port: number } | undefined;
    let scheduler = 'wlc';
    let timeout = 0;
    let weight = 1;
    const flags: VirtualServerFlag[] = [];
    for (let i = 1; i < t.length; i++) {
      const a = t[i]!;
      const next = t[i + 1];
      if (a in SERVICE_FLAGS && next !== undefined) {
        proto = SERVICE_FLAGS[a];
        vaddr = splitHostPort(next);
        i++;
      } else if (a === '-s' && next !== undefined) {
        scheduler = next;
        i++;
      } else if (a === '-p') {
        flags.push('persistent');
        timeout = 300;
        if (next !== undefined && /^[0-9]+$/.test(next)) {
          timeout = Number(next);
          i++;
        }
      } else if (a === '-b' && next !== undefined) {
        if (next.split(',').some((f) => SOURCE_HASH_FLAGS.has(f))) flags.push('source-hash');
        i++;
      } else if (a === '-r' && next !== undefined) {
        raddr = splitHostPort(next);
        i++;
      } else if (a === '-w' && next !== undefined) {
        weight = Number(next);
        i++;
      } else if ((a === '-M' || a === '--pe' || a === '-x' || a === '-y') && next !== undefined) {
        i++;
      }
    }
    if (!proto || !vaddr) continue;
    const key = virtualServerKey({ ...vaddr, protocol: proto });
    if (cmd === '-A') {
      servers.set(key, {
        ...vaddr,
        protocol: proto,
        scheduler,
        flags: flags.sort(),
        timeoutSeconds: timeout,
        realServers: [],
      });
    } else if (raddr && Number.isInteger(weight)) {
      servers.get(key)?.realServers.push({ ...raddr, weight });
    }
  }
  return [...servers.values()].map((s) => ({
    ...s,
    realServers: s.realServers.sort((a, b) => (realServerKey(a) < realServerKey(b) ? -1 : 1)),
  }));
}

/** Parses `ipvsadm -L -n` output into connection counts keyed by `uniqueRealServerKey`. */
export function parseIpvsadmList(text: string): Map<string, ConnectionCounts> {
  const out = new Map<string, ConnectionCounts>();
  let vsKey: string | undefined;
  for (const line of text.split('\n')) {
    const vs = /^(TCP|UDP|SCTP)\s+(\S+)/.exec(line);
    if (vs) {
      const hp = splitHostPort(vs[2]!);
      vsKey = hp ? virtualServerKey({ ...hp, protocol: vs[1] as IpvsProtocol }) : undefined;
      continue;
    }
    if (/^FWM\s/.test(line)) {
      vsKey = undefined;
      continue;
    }
    const rs = /^\s+->\s+(\S+)\s+\S+\s+([0-9]+)\s+([0-9]+)\s+([0-9]+)\s*$/.exec(line);
    if (!rs || vsKey === undefined) continue;
    const hp = splitHostPort(rs[1]!);
    if (hp) out.set(`${vsKey}/${realServerKey(hp)}`, { active: Number(rs[3]), inactive: Number(rs[4]) });
  }
  return out;
}

const SET_TYPES = new Set<string>([
  'hash:ip',
  'hash:ip,port',
  'hash:ip,port,ip',
  'hash:ip,port,net',
  'bitmap:port',
]);

/** Parses `ipset save` output; sets of other types are left out. */
export function parseIPSetSave(text: string): IPSet[] {
  const sets = new Map<string, { set: Omit<IPSet, 'entries'>; entries: string[] }>();
  for (const line of text.split('\n')) {
    const t = line.trim().split(/\s+/);
    if (t[0] === 'create' && t.length >= 3 && SET_TYPES.has(t[2]!)) {
      const opt = (name: string) => {
        const i = t.indexOf(name, 3);
        return i > 0 ? t[i + 1] : undefined;
      };
      sets.set(t[1]!, {
        set: {
          name: t[1]!,
          type: t[2] as IPSetType,
          family: opt('family') === 'inet6' ? 'inet6' : 'inet',
          hashSize: Number(opt('hashsize') ?? 1024),
          maxElem: Number(opt('maxelem') ?? 65536),
          portRange: opt('range') ?? '0-65535',
        },
        entries: [],
      });
    } else if (t[0] === 'add' && t.length >= 3) {
      sets.get(t[1]!)?.entries.push(t[2]!);
    }
  }
  return [...sets.values()].map(({ set, entries }) => ({
    ...set,
    entries: set.type === 'bitmap:port' ? entries.sort((a, b) => Number(a) - Number(b)) : entries.sort(),
  }));
}

/** Parses `ip -o addr show dev X` output into canonical addresses. */
export function parseIPAddrShow(text: string): string[] {
  const out: string[] = [];
  for (const m of text.matchAll(/\binet6?\s+([0-9a-fA-F.:]+)\/[0-9]+/g)) {
    const ip = parseIP(m[1]!)?.ip;
    if (ip !== undefined) out.push(ip);
  }
  return [...new Set(out)].sort();
}
