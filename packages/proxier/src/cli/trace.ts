/**
 * `trace`: runs the backend library's packet tracer over the rendered rules and formats
 * its answer as text or JSON.
 *
 * @module
 */
import { joinHostPort } from '@nodeagent/core';
import type { TraceOutcome } from '@nodeagent/proxy-state';
import type { ModuleLoader } from '../backend-loader.js';
import type { Backend, PacketArgs } from './args.js';
import { offlineBackendModule } from './backend-modules.js';
import { oneLine } from './errors.js';
import type { BackendRules } from './render-backend.js';

/** The tracer's answer, as the CLI prints it. */
export interface CliTraceResult {
  /** Which backend's rules were traced. */
  readonly backend: Backend;
  /** The packet. */
  readonly packet: PacketArgs;
  /** `endpoints`, `REJECT`, `DROP`, `ACCEPT` or `untouched` (no rule matched). */
  readonly outcome: TraceOutcome;
  /** Every `ip:port` the packet may be DNAT-ed / forwarded to, sorted. */
  readonly endpoints: readonly string[];
  /** True if the packet is masqueraded (SNAT to the node). */
  readonly masquerade: boolean;
  /** The rules that matched, in order (iptables and ipvs tracers only). */
  readonly matchedRules?: readonly string[];
}

/**
 * Traces `packet` through `rules` with the backend's own tracer (its package loaded on use).
 * @throws CliFailure when the backend's package is not installed
 */
export async function traceRules(
  rules: BackendRules,
  packet: PacketArgs,
  nodeIPs: readonly string[],
  load?: ModuleLoader,
): Promise<CliTraceResult> {
  const pkt = { ...packet, nodeIPs };
  switch (rules.backend) {
    case 'iptables': {
      const { tracePacket } = await offlineBackendModule('iptables', 'iptables', load);
      const r = tracePacket(rules.text, pkt);
      return { backend: 'iptables', packet, ...pick(r), matchedRules: r.matchedRules };
    }
    case 'nftables': {
      const { tracePacket } = await offlineBackendModule('nftables', 'nftables', load);
      const r = tracePacket(rules.text, pkt, rules.ruleset.family);
      return { backend: 'nftables', packet, ...pick(r) };
    }
    case 'ipvs': {
      const { traceIpvs } = await offlineBackendModule('ipvs', 'ipvs', load);
      const r = traceIpvs(rules.plan, pkt);
      return { backend: 'ipvs', packet, ...pick(r), matchedRules: r.matchedRules };
    }
  }
}

function pick(r: Pick<CliTraceResult, 'outcome' | 'endpoints' | 'masquerade'>) {
  return { outcome: r.outcome, endpoints: [...r.endpoints], masquerade: r.masquerade };
}

const MEANING: Readonly<Record<CliTraceResult['outcome'], string>> = {
  endpoints: 'DNAT to a service endpoint',
  REJECT: 'rejected at once (the service port has no endpoints)',
  DROP: 'dropped (no local endpoint under a Local traffic policy, or a source outside loadBalancerSourceRanges)',
  ACCEPT: 'accepted without DNAT',
  untouched: 'no service rule matched; the packet is not a service packet',
};

/** The human-readable form: one `key: value` line each, matched rules with `verbose`. */
export function formatTrace(r: CliTraceResult, verbose: boolean): string {
  const p = r.packet;
  const lines = [
    `packet:     ${p.protocol.toLowerCase()} ${p.sourceIP} -> ${joinHostPort(p.destIP, p.destPort)} (${r.backend})`,
    `outcome:    ${r.outcome} - ${MEANING[r.outcome]}`,
    `endpoints:  ${r.endpoints.length > 0 ? r.endpoints.join(', ') : '(none)'}`,
    `masquerade: ${r.masquerade ? 'yes' : 'no'}`,
  ];
  if (verbose && r.matchedRules !== undefined) {
    lines.push('matched rules:');
    for (const rule of r.matchedRules) lines.push(`  ${oneLine(rule)}`);
  }
  return `${lines.join('\n')}\n`;
}

/** The `--json` form: one object on one line. */
export function formatTraceJson(r: CliTraceResult, verbose: boolean): string {
  const { matchedRules, ...rest } = r;
  return `${JSON.stringify(verbose && matchedRules !== undefined ? r : rest)}\n`;
}
