/**
 * The rules every sync writes regardless of services: chain declarations, the masquerade
 * and forwarding boiler-plate, and the KUBE-SERVICES tail rule.
 *
 * @module
 */
import { KUBE_EXTERNAL_SERVICES, KUBE_NODEPORTS, KUBE_PROXY_FIREWALL, KUBE_SERVICES } from './chain-names.js';
import type { ResolvedRenderOptions } from './render-options.js';

/** Filter chains every sync declares, in kube-proxy's order. */
export function filterChains(o: ResolvedRenderOptions): string[] {
  const chains = [KUBE_SERVICES, KUBE_EXTERNAL_SERVICES, 'KUBE-FORWARD', KUBE_NODEPORTS, KUBE_PROXY_FIREWALL];
  if (o.localhostNodePorts) chains.push('KUBE-FIREWALL');
  return chains;
}

/** Filter rules written before the per-service rules (kube-proxy's KUBE-FIREWALL copy). */
export function filterHeadRules(o: ResolvedRenderOptions): string[] {
  if (!o.localhostNodePorts) return [];
  return [
    '-A KUBE-FIREWALL -m comment --comment "block incoming localnet connections" -d 127.0.0.0/8 ! -s 127.0.0.0/8 -m conntrack ! --ctstate RELATED,ESTABLISHED,DNAT -j DROP',
  ];
}

/** KUBE-FORWARD rules, written after the per-service rules. */
export function filterTailRules(o: ResolvedRenderOptions): string[] {
  const mark = `${o.masqueradeMark}/${o.masqueradeMark}`;
  const rules: string[] = [];
  if (!o.conntrackTCPLiberal) {
    const nfacct = o.nfacctCtStateInvalid ? ' -m nfacct --nfacct-name ct_state_invalid_dropped_pkts' : '';
    rules.push(`-A KUBE-FORWARD -m conntrack --ctstate INVALID${nfacct} -j DROP`);
  }
  rules.push(
    `-A KUBE-FORWARD -m comment --comment "kubernetes forwarding rules" -m mark --mark ${mark} -j ACCEPT`,
    '-A KUBE-FORWARD -m comment --comment "kubernetes forwarding conntrack rule" -m conntrack --ctstate RELATED,ESTABLISHED -j ACCEPT',
  );
  return rules;
}

/** KUBE-POSTROUTING and KUBE-MARK-MASQ rules. */
export function natHeadRules(o: ResolvedRenderOptions): string[] {
  const m = o.masqueradeMark;
  return [
    `-A KUBE-POSTROUTING -m mark ! --mark ${m}/${m} -j RETURN`,
    `-A KUBE-POSTROUTING -j MARK --xor-mark ${m}`,
    `-A KUBE-POSTROUTING -m comment --comment "kubernetes service traffic requiring SNAT" -j MASQUERADE${o.randomFully ? ' --random-fully' : ''}`,
    `-A KUBE-MARK-MASQ -j MARK --or-mark ${m}`,
  ];
}

/** The last rule(s) of nat KUBE-SERVICES: the jump to KUBE-NODEPORTS. */
export function natTailRules(o: ResolvedRenderOptions): string[] {
  const comment =
    '-m comment --comment "kubernetes service nodeports; NOTE: this must be the last rule in this chain"';
  if (o.nodePortIPs === undefined) {
    let dst = '-m addrtype --dst-type LOCAL';
    if (o.ipFamily === 'IPv6') dst += ' ! -d ::1/128';
    else if (!o.localhostNodePorts) dst += ' ! -d 127.0.0.0/8';
    return [`-A KUBE-SERVICES ${comment} ${dst} -j KUBE-NODEPORTS`];
  }
  const rules: string[] = [];
  for (const ip of o.nodePortIPs) {
    const loopback = ip.startsWith('127.') || ip === '::1';
    if (loopback && (o.ipFamily === 'IPv6' || !o.localhostNodePorts)) continue;
    rules.push(`-A KUBE-SERVICES ${comment} -d ${ip} -j KUBE-NODEPORTS`);
  }
  return rules;
}
