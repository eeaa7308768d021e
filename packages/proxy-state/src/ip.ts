/**
 * IP and CIDR parsing lives in `@nodeagent/core` (kube-proxy's normalisation); re-exported
 * here so that data-plane code can import it with the rest of the proxy state.
 *
 * @module
 */
export {
  type CIDRValue,
  cidrValueContains,
  formatIPValue,
  type IPValue,
  type IPValueOptions,
  type ParsedCIDR,
  type ParsedIP,
  parseCIDR,
  parseCIDRValue,
  parseIP,
  parseIPValue,
} from '@nodeagent/core';
