/**
 * The node and cluster options every renderer (iptables, nftables, IPVS) takes with the same
 * meaning and default, so they are declared and documented once.
 *
 * @module
 */

/**
 * How traffic from local pods is told apart from other traffic (kube-proxy's
 * `--detect-local-mode`). `None` leaves out the rules that depend on it.
 */
export type LocalTrafficDetector =
  | { readonly mode: 'ClusterCIDR' | 'NodeCIDR'; readonly cidr: string }
  | { readonly mode: 'BridgeInterface'; readonly interfaceName: string }
  | { readonly mode: 'InterfaceNamePrefix'; readonly interfacePrefix: string }
  | { readonly mode: 'None' };

/** kube-proxy's default masquerade bit (`--iptables-masquerade-bit`): mark `0x4000`. */
export const DEFAULT_MASQUERADE_BIT = 14;

/** Options shared by every renderer's options (each backend's options extend these). */
export interface ProxyRenderOptions {
  /**
   * Bit of the packet mark that flags packets for masquerade (0-31).
   * @default 14 (mark 0x4000)
   */
  readonly masqueradeBit?: number;
  /**
   * Masquerade all traffic to cluster IPs (kube-proxy `--masquerade-all`).
   * @default false
   */
  readonly masqueradeAll?: boolean;
  /**
   * Local-traffic detector.
   * @default { mode: 'None' }
   */
  readonly localDetector?: LocalTrafficDetector;
}
