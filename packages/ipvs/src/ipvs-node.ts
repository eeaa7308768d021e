/**
 * What kube-proxy does once when it starts in IPVS mode, as one call: log the deprecation
 * of IPVS mode, check that IPVS can run ({@link checkIpvsSupport}), set the sysctls
 * ({@link ensureIpvsSysctls}) and the IPVS timeouts (a failure there is logged, not fatal,
 * as upstream).
 *
 * @module
 */
import { type Logger, noopLogger } from '@nodeagent/core';
import type { IpvsExecutor, IpvsTimeouts } from './executor.js';
import { checkIpvsSupport } from './ipvs-support.js';
import { ensureIpvsSysctls, type SysctlReport } from './ipvs-sysctls.js';
import type { SysctlAccess } from './sysctl-access.js';

/**
 * kube-proxy's message (logged at error level, and as a `IPVSDeprecation` warning event)
 * since IPVS mode was deprecated in Kubernetes 1.35 (KEP-5495).
 */
export const IPVS_DEPRECATION_MESSAGE =
  "The ipvs proxier is now deprecated and may be removed in a future release. Please use 'nftables' instead.";

/** Options of {@link prepareIpvsNode}. */
export interface PrepareIpvsNodeOptions {
  /** The IPVS/ipset executor (probe, timeouts). */
  readonly executor: IpvsExecutor;
  /** Where the sysctls are written (`new ProcSysctl()` for this namespace). */
  readonly sysctl: SysctlAccess;
  /**
   * `--ipvs-scheduler`.
   * @default 'rr'
   */
  readonly scheduler?: string;
  /**
   * `--ipvs-strict-arp`.
   * @default false
   */
  readonly strictARP?: boolean;
  /**
   * `--ipvs-tcp-timeout` / `--ipvs-tcpfin-timeout` / `--ipvs-udp-timeout`; nothing is set
   * when all are 0.
   * @default all 0
   */
  readonly timeouts?: IpvsTimeouts;
  /**
   * Where `net/ip_vs` is looked for (see {@link checkIpvsSupport}).
   * @default '/proc'
   */
  readonly procRoot?: string;
  /** @default noopLogger */
  readonly logger?: Logger;
}

/** What {@link prepareIpvsNode} did. */
export interface IpvsNodeReport {
  /** The sysctls. */
  readonly sysctls: SysctlReport;
  /** `configured`, `unchanged` (all timeouts 0) or the error that was logged. */
  readonly timeouts: 'configured' | 'unchanged' | { readonly error: unknown };
}

/**
 * Prepares a node for IPVS mode, in upstream's order.
 * @throws IpvsUnavailableError when IPVS cannot run (nothing has been changed then).
 * @throws SysctlError naming the first sysctl that could not be set.
 */
export async function prepareIpvsNode(options: PrepareIpvsNodeOptions): Promise<IpvsNodeReport> {
  const log = options.logger ?? noopLogger;
  log.error(IPVS_DEPRECATION_MESSAGE);
  await checkIpvsSupport({
    executor: options.executor,
    ...(options.scheduler !== undefined ? { scheduler: options.scheduler } : {}),
    ...(options.procRoot !== undefined ? { procRoot: options.procRoot } : {}),
  });
  const sysctls = await ensureIpvsSysctls(options.sysctl, {
    strictARP: options.strictARP ?? false,
    logger: log,
  });
  const t = options.timeouts ?? {};
  // As upstream: only when one of them is set; a 0 inside leaves that one as it is.
  if (![t.tcpMs, t.tcpFinMs, t.udpMs].some((v) => (v ?? 0) > 0)) {
    return { sysctls, timeouts: 'unchanged' };
  }
  try {
    await options.executor.configureTimeouts(t);
    return { sysctls, timeouts: 'configured' };
  } catch (error) {
    log.error({ err: error }, 'Failed to configure IPVS timeouts');
    return { sysctls, timeouts: { error } };
  }
}
