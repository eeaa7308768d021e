/**
 * kube-proxy's `--nodeport-addresses` and `--ipvs-*` flags, checked as kube-proxy checks
 * them: a duration that does not parse is refused as pflag refuses it, everything else with
 * the field path and wording of kube-proxy's configuration validation.
 *
 * @module
 */
import {
  cidrValueContains,
  InvalidDurationError,
  parseCIDR,
  parseCIDRValue,
  parseGoDuration,
  parseIP,
  parseIPValue,
} from '@nodeagent/core';
import { CliUsageError } from './errors.js';

/** kube-proxy's IPVS settings. */
export interface IpvsArgs {
  /** `--ipvs-scheduler` (`''` = the default, `rr`). */
  readonly scheduler: string;
  /** `--ipvs-exclude-cidrs`, canonical. */
  readonly excludeCIDRs: readonly string[];
  /** `--ipvs-strict-arp`. */
  readonly strictARP: boolean;
  /** `--ipvs-tcp-timeout` in milliseconds (0 = leave as is). */
  readonly tcpTimeoutMs: number;
  /** `--ipvs-tcpfin-timeout` in milliseconds (0 = leave as is). */
  readonly tcpFinTimeoutMs: number;
  /** `--ipvs-udp-timeout` in milliseconds (0 = leave as is). */
  readonly udpTimeoutMs: number;
}

type Values = Record<string, string | boolean | (string | boolean)[] | undefined>;

const IPVS_PATH = 'KubeProxyConfiguration.KubeProxyIPVSConfiguration';

/** kube-proxy's `field.Invalid` line: `<path>: Invalid value: "<value>": <detail>`. */
function invalid(path: string, value: string, detail: string, command: string): CliUsageError {
  return new CliUsageError(`${path}: Invalid value: ${JSON.stringify(value)}: ${detail}`, command);
}

function items(values: Values, name: string): string[] {
  const v = values[name];
  const raw = Array.isArray(v) ? v : typeof v === 'string' ? [v] : [];
  return raw
    .flatMap((s) => String(s).split(','))
    .map((s) => s.trim())
    .filter((s) => s !== '');
}

/**
 * The keywords of `nodePortAddresses` / `--nodeport-addresses` in current kube-proxy:
 * `primary` (the Node's primary IPv4 and/or IPv6 address), `localhost` (`127.0.0.0/8` and
 * `::1/128`) and `all` (`0.0.0.0/0` and `::/0`). They combine with each other and with CIDRs.
 */
export const NODE_PORT_ADDRESS_KEYWORDS: readonly string[] = ['primary', 'localhost', 'all'];

/**
 * Checks a `nodePortAddresses` list as current kube-proxy's configuration validation does:
 * each entry is a keyword or a CIDR, and no entry is given twice.
 * @returns the canonical entries (keywords as written, CIDRs canonical) and kube-proxy's
 *   `field.Invalid` / `field.Duplicate` lines for the entries it refuses.
 */
export function validateNodePortAddresses(list: readonly string[]): {
  readonly values: string[];
  readonly problems: string[];
} {
  const values: string[] = [];
  const problems: string[] = [];
  const seen = new Set<string>();
  for (const [i, text] of list.entries()) {
    const path = `KubeProxyConfiguration.NodePortAddresses[${i}]`;
    const c = NODE_PORT_ADDRESS_KEYWORDS.includes(text) ? undefined : parseCIDR(text);
    const value = c ? c.cidr : text;
    if (!NODE_PORT_ADDRESS_KEYWORDS.includes(text) && !c) {
      problems.push(`${path}: Invalid value: ${JSON.stringify(text)}: must be a valid CIDR`);
      continue;
    }
    if (seen.has(value)) {
      problems.push(`${path}: Duplicate value: ${JSON.stringify(text)}`);
      continue;
    }
    seen.add(value);
    values.push(value);
  }
  return { values, problems };
}

/**
 * `--nodeport-addresses`: CIDRs and the keywords `primary`, `localhost`, `all`.
 * @throws CliUsageError with kube-proxy's validation line for the first refused entry.
 */
export function parseNodePortAddresses(list: readonly string[], command: string): string[] {
  const { values, problems } = validateNodePortAddresses(list);
  if (problems[0] !== undefined) throw new CliUsageError(problems[0], command);
  return values;
}

function duration(values: Values, flag: string, field: string, command: string): number {
  const text = values[flag];
  if (typeof text !== 'string') return 0;
  let ms: number;
  try {
    ms = parseGoDuration(text.trim());
  } catch (e) {
    if (!(e instanceof InvalidDurationError)) throw e;
    throw new CliUsageError(
      `invalid argument ${JSON.stringify(text)} for "--${flag}" flag: time: invalid duration ${JSON.stringify(text)}`,
      command,
    );
  }
  if (ms < 0)
    throw invalid(`${IPVS_PATH}.${field}`, text.trim(), 'must be greater than or equal to 0', command);
  return ms;
}

/**
 * The `--ipvs-*` flags.
 * `schedulerProblem` is `ipvsSchedulerProblem` of `@nodeagent/ipvs` (passed in, so this module
 * loads without the optional backend packages).
 * @throws CliUsageError for an unknown scheduler, a bad CIDR or a bad or negative duration.
 */
export function parseIpvsArgs(
  values: Values,
  command: string,
  schedulerProblem: (scheduler: string) => string | undefined,
): IpvsArgs {
  const scheduler = typeof values['ipvs-scheduler'] === 'string' ? values['ipvs-scheduler'].trim() : '';
  const problem = schedulerProblem(scheduler);
  if (problem !== undefined) throw invalid(`${IPVS_PATH}.Scheduler`, scheduler, problem, command);
  const excludeCIDRs = items(values, 'ipvs-exclude-cidrs').map((text, i) => {
    const c = parseCIDR(text);
    if (!c) throw invalid(`${IPVS_PATH}.ExcludeCidrs[${i}]`, text, 'must be a valid CIDR', command);
    return c.cidr;
  });
  return {
    scheduler,
    excludeCIDRs,
    strictARP: values['ipvs-strict-arp'] === true,
    tcpTimeoutMs: duration(values, 'ipvs-tcp-timeout', 'TCPTimeout', command),
    tcpFinTimeoutMs: duration(values, 'ipvs-tcpfin-timeout', 'TCPFinTimeout', command),
    udpTimeoutMs: duration(values, 'ipvs-udp-timeout', 'UDPTimeout', command),
  };
}

/** How {@link resolveNodePortIPs} treats an unset list and loopback addresses. */
export interface NodePortResolveOptions {
  /** The mode's default for an unset list is `primary` (nftables, kube-proxy's platformApplyDefaults). */
  readonly defaultPrimary?: boolean;
  /**
   * The mode serves NodePorts on 127.0.0.1 (iptables with localhost node ports, IPv4): a
   * loopback CIDR (`localhost`, `127.0.0.0/8`, ...) then adds 127.0.0.1. Otherwise loopback
   * addresses are left out, as kube-proxy leaves them out ("localhost NodePorts are not supported").
   */
  readonly loopback?: boolean;
  /**
   * The local interface addresses the CIDRs select from (kube-proxy's `GetNodeIPs` over the
   * interfaces). @default the node IPs (rendering for a node that is not this host)
   */
  readonly localAddresses?: readonly string[];
}

const ZERO: Readonly<Record<4 | 6, string>> = { 4: '0.0.0.0/0', 6: '::/0' };
const LOCALHOST: Readonly<Record<4 | 6, string>> = { 4: '127.0.0.0/8', 6: '::1/128' };
const LOOPBACK_IP: Readonly<Record<4 | 6, string>> = { 4: '127.0.0.1', 6: '::1' };

/**
 * The CIDRs of `family` that `nodePortAddresses` stands for, keywords expanded as kube-proxy
 * expands them: `primary` is the first non-loopback node IP of the family as a /32 or /128,
 * `localhost` the loopback range, `all` the zero CIDR.
 */
export function expandNodePortAddresses(
  nodePortAddresses: readonly string[],
  nodeIPs: readonly string[],
  family: 4 | 6,
): string[] {
  const out: string[] = [];
  for (const entry of nodePortAddresses) {
    if (entry === 'primary') {
      const ip = nodeIPs.map((t) => parseIP(t)).find((p) => p?.family === family);
      if (ip && !cidrValueContains(parseCIDRValue(LOCALHOST[family])!, parseIPValue(ip.ip)!))
        out.push(`${ip.ip}/${family === 4 ? 32 : 128}`);
    } else if (entry === 'localhost') out.push(LOCALHOST[family]);
    else if (entry === 'all') out.push(ZERO[family]);
    else if (parseCIDR(entry)?.family === family) out.push(entry);
  }
  return out;
}

/**
 * `--nodeport-addresses` resolved against this node's IPs of `family`, as kube-proxy resolves
 * it (`NewNodePortAddresses` + `GetNodeIPs`): keywords are expanded; no CIDR of this family,
 * or a zero CIDR, matches every local IP and is returned as undefined (each backend's
 * "every local address" form); otherwise the local addresses (`localAddresses`, else the node
 * IPs) inside the CIDRs (an empty list: no address accepts NodePorts). An unset list is `primary` with `defaultPrimary` (nftables).
 */
export function resolveNodePortIPs(
  nodePortAddresses: readonly string[],
  nodeIPs: readonly string[],
  family: 4 | 6,
  options: NodePortResolveOptions = {},
): string[] | undefined {
  const list = nodePortAddresses.length === 0 && options.defaultPrimary ? ['primary'] : nodePortAddresses;
  const cidrs = expandNodePortAddresses(list, nodeIPs, family).map((c) => parseCIDRValue(c)!);
  if (cidrs.length === 0 || cidrs.some((c) => c.prefixLength === 0)) return undefined;
  const lo = parseCIDRValue(LOCALHOST[family])!;
  const candidates = (options.localAddresses ?? nodeIPs)
    .map((ip) => parseIP(ip.replace(/%.*$/, ''))?.ip)
    .filter((ip): ip is string => ip !== undefined && parseIP(ip)?.family === family);
  if (options.loopback && family === 4 && options.localAddresses === undefined)
    candidates.push(LOOPBACK_IP[4]);
  const out: string[] = [];
  for (const ip of candidates) {
    const v = parseIPValue(ip)!;
    if (cidrValueContains(lo, v) && !(options.loopback && family === 4)) continue;
    if (cidrs.some((c) => cidrValueContains(c, v)) && !out.includes(ip)) out.push(ip);
  }
  return out;
}

/**
 * kube-proxy's `ContainsIPv4Loopback`: whether `nodePortAddresses` (keywords expanded, no IPv4
 * CIDR meaning all) covers 127.0.0.0/8 — iptables mode has localhost node ports only then.
 */
export function nodePortAddressesContainIPv4Loopback(
  nodePortAddresses: readonly string[],
  nodeIPs: readonly string[],
): boolean {
  const cidrs = expandNodePortAddresses(nodePortAddresses, nodeIPs, 4);
  if (cidrs.length === 0) return true;
  const start = parseIPValue('127.0.0.0')!;
  const lo = parseCIDRValue(LOCALHOST[4])!;
  return cidrs.some((c) => {
    const v = parseCIDRValue(c)!;
    return cidrValueContains(v, start) || cidrValueContains(lo, { family: 4, value: v.base });
  });
}
