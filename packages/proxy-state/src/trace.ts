/**
 * The packet-tracer vocabulary shared by every renderer (iptables, nftables, IPVS): the
 * packet fed to a tracer and the answer it gives, so callers (the proxier's `trace`
 * command, tests, custom renderers) handle the backends' tracers alike.
 *
 * @module
 */
import type { Protocol } from './types.js';

/** A packet to trace through a backend's rendered rules. */
export interface TracePacket {
  /** Source address. */
  readonly sourceIP: string;
  /** Destination address. */
  readonly destIP: string;
  /** Destination port. */
  readonly destPort: number;
  /** @default 'TCP' */
  readonly protocol?: Protocol;
  /**
   * The node's own addresses (loopback is always local; each backend's tracer may add the
   * addresses it already knows, e.g. the IPVS plan's bound addresses).
   */
  readonly nodeIPs?: readonly string[];
  /** Input interface, for interface-based local-traffic detection. */
  readonly inInterface?: string;
  /**
   * The packet comes from a process on the node (the output hook / nat OUTPUT) rather than
   * arriving on an interface. The default is the backend tracer's (see its packet type).
   */
  readonly fromLocalProcess?: boolean;
}

/**
 * What happens to a traced packet: `endpoints` when it is DNAT-ed / forwarded to a service
 * endpoint, a filter verdict (`REJECT`, `DROP`, `ACCEPT`), or `untouched` when no rule
 * matched.
 */
export type TraceOutcome = 'endpoints' | 'REJECT' | 'DROP' | 'ACCEPT' | 'untouched';

/** A tracer's answer for one packet (backends may add debugging fields). */
export interface TraceResult {
  /** The packet's fate. */
  readonly outcome: TraceOutcome;
  /** Every `ip:port` the packet may be sent to (all random / weighted branches), sorted. */
  readonly endpoints: readonly string[];
  /** True if the packet is masqueraded (on any branch it may take). */
  readonly masquerade: boolean;
}
