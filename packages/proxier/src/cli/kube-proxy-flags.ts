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
import { ipvsSchedulerProblem } from '@nodeagent/ipvs';
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
 * `--nodeport-addresses`: CIDRs, or the single word `primary`.
 * @throws CliUsageError as kube-proxy's `validateKubeProxyNodePortAddress`.
 */
export function parseNodePortAddresses(list: readonly string[], command: string): string[] {
  const out: string[] = [];
  for (const [i, text] of list.entries()) {
    const path = `KubeProxyConfiguration.NodePortAddresses[${i}]`;
    if (text === 'primary') {
      if (i !== 0 || list.length !== 1)
        throw invalid(path, text, "can't use both 'primary' and CIDRs", command);
      return ['primary'];
    }
    const c = parseCIDR(text);
    if (!c) throw invalid(path, text, 'must be a valid CIDR', command);
    out.push(c.cidr);
  }
  return out;
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
 * @throws CliUsageError for an unknown scheduler, a bad CIDR or a bad or negative duration.
 */
export function parseIpvsArgs(values: Values, command: string): IpvsArgs {
  const scheduler = typeof values['ipvs-scheduler'] === 'string' ? values['ipvs-scheduler'].trim() : '';
  const problem = ipvsSchedulerProblem(scheduler);
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

/**
 * `--nodeport-addresses` resolved against this node's IPs of `family`, as kube-proxy resolves
 * it against the node's addresses: `primary` is the first node IP of the family; CIDRs keep the
 * node IPs inside them; no CIDR of this family (or no flag) means every local IP, returned as
 * undefined (each backend's default) — unless `defaultPrimary` (nftables' default is `primary`).
 */
export function resolveNodePortIPs(
  nodePortAddresses: readonly string[],
  nodeIPs: readonly string[],
  family: 4 | 6,
  defaultPrimary = false,
): string[] | undefined {
  const mine = nodeIPs.filter((ip) => parseIP(ip)?.family === family);
  if (nodePortAddresses[0] === 'primary' || (nodePortAddresses.length === 0 && defaultPrimary))
    return mine.slice(0, 1);
  const cidrs = nodePortAddresses.flatMap((c) => {
    const v = parseCIDRValue(c);
    return v && v.family === family ? [v] : [];
  });
  if (cidrs.length === 0) return undefined;
  return mine.filter((ip) => cidrs.some((c) => cidrValueContains(c, parseIPValue(ip)!)));
}
