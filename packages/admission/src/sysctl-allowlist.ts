/**
 * The sysctl allow-list (upstream `pkg/kubelet/sysctl`): a pod may set only the safe,
 * namespaced sysctls plus those the operator allows (`--allowed-unsafe-sysctls`, patterns
 * ending in `*` allowed). A safe sysctl of the network or IPC namespace is still refused to
 * a pod sharing that namespace with the host. Reason `SysctlForbidden`.
 *
 * @module
 */
import { InvalidOptionsError } from '@nodeagent/core';
import type { PodAdmitAttributes, PodAdmitHandler, PodAdmitResult } from './admit-handler.js';
import { ADMITTED } from './admit-handler.js';

/** The kernel namespace a sysctl belongs to, as upstream names them in messages. */
export type SysctlNamespace = 'IPC' | 'Net';

/** The kubelet's safe sysctls (namespaced and isolated from other pods), current release. */
export const SAFE_SYSCTLS: readonly string[] = Object.freeze([
  'kernel.shm_rmid_forced',
  'net.ipv4.ip_local_port_range',
  'net.ipv4.tcp_syncookies',
  'net.ipv4.ping_group_range',
  'net.ipv4.ip_unprivileged_port_start',
  'net.ipv4.ip_local_reserved_ports',
  'net.ipv4.tcp_keepalive_time',
  'net.ipv4.tcp_fin_timeout',
  'net.ipv4.tcp_keepalive_intvl',
  'net.ipv4.tcp_keepalive_probes',
  'net.ipv4.tcp_rmem',
  'net.ipv4.tcp_wmem',
]);

/** `kernel/shm_rmid_forced` → `kernel.shm_rmid_forced` (upstream `NormalizeName`: a leading `/` separator swaps `/` and `.`). */
export function normalizeSysctlName(name: string): string {
  const sep = name.search(/[./]/);
  if (sep === -1 || name[sep] === '.') return name;
  return name.replace(/[./]/g, (c) => (c === '/' ? '.' : '/'));
}

/** The namespace of a sysctl name or prefix, or undefined when it is not known to be namespaced. */
export function sysctlNamespace(nameOrPrefix: string): SysctlNamespace | undefined {
  if (nameOrPrefix === 'kernel.sem') return 'IPC';
  for (const p of ['kernel.shm', 'kernel.msg', 'fs.mqueue.']) if (nameOrPrefix.startsWith(p)) return 'IPC';
  if (nameOrPrefix.startsWith('net.')) return 'Net';
  return undefined;
}

/** The allow-list admit handler. */
export class SysctlAllowlist implements PodAdmitHandler {
  readonly #sysctls = new Map<string, SysctlNamespace>();
  readonly #prefixes = new Map<string, SysctlNamespace>();

  /**
   * @param allowedUnsafeSysctls extra sysctls or `prefix*` patterns (`--allowed-unsafe-sysctls`),
   *   each known to be namespaced.
   * @throws InvalidOptionsError for a sysctl that is not namespaced (`kernel.panic`).
   */
  constructor(allowedUnsafeSysctls: readonly string[] = []) {
    for (const pattern of [...SAFE_SYSCTLS, ...allowedUnsafeSysctls]) {
      if (!/^([a-z0-9]([-_a-z0-9]*[a-z0-9])?[./])*(\*|[a-z0-9]([-_a-z0-9]*[a-z0-9])?)\*?$/.test(pattern)) {
        throw new InvalidOptionsError(
          'SysctlAllowlist',
          `sysctl pattern ${JSON.stringify(pattern)} is not valid`,
        );
      }
      let name = normalizeSysctlName(pattern);
      const star = name.indexOf('*');
      const prefixed = star !== -1;
      if (prefixed) name = name.slice(0, star);
      const ns = sysctlNamespace(name);
      if (ns === undefined) {
        throw new InvalidOptionsError(
          'SysctlAllowlist',
          `the sysctls ${JSON.stringify(name)} are not known to be namespaced`,
        );
      }
      (prefixed ? this.#prefixes : this.#sysctls).set(name, ns);
    }
  }

  /** Why `name` is refused, or undefined when it is allowed. */
  validate(name: string, hostNetwork: boolean, hostIPC: boolean): string | undefined {
    const sysctl = normalizeSysctlName(name);
    let ns = this.#sysctls.get(sysctl);
    if (ns === undefined) {
      for (const [prefix, pns] of this.#prefixes) {
        if (sysctl.startsWith(prefix)) {
          ns = pns;
          break;
        }
      }
    }
    if (ns === undefined) return `${JSON.stringify(sysctl)} not allowlisted`;
    if ((ns === 'IPC' && hostIPC) || (ns === 'Net' && hostNetwork)) {
      return `${JSON.stringify(sysctl)} not allowed with host ${ns} enabled`;
    }
    return undefined;
  }

  /** Rejects the pod at its first refused sysctl. */
  admit({ pod }: PodAdmitAttributes): PodAdmitResult {
    for (const s of pod.spec?.securityContext?.sysctls ?? []) {
      const why = this.validate(s.name, pod.spec?.hostNetwork === true, pod.spec?.hostIPC === true);
      if (why !== undefined)
        return { admit: false, reason: 'SysctlForbidden', message: `forbidden sysctl: ${why}` };
    }
    return ADMITTED;
  }
}
