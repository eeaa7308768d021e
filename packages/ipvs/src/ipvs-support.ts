/**
 * kube-proxy's start-up check of IPVS mode (`canUseIPVSProxier`): the ipset tool is at least
 * version 6.0, the kernel answers IPVS requests, and it accepts a virtual server with the
 * configured scheduler (a probe on 198.51.100.0:20000/TCP, TEST-NET-2, removed again),
 * unless an existing virtual server already uses that scheduler.
 *
 * @module
 */
import { existsSync } from 'node:fs';
import type { IpvsExecutor } from './executor.js';
import { DEFAULT_IPVS_SCHEDULER } from './schedulers.js';

/** The lowest ipset version kube-proxy runs with (IPv6 support), `MinIPSetCheckVersion`. */
export const MIN_IPSET_VERSION = '6.0';

/** The probe virtual server kube-proxy adds to test the scheduler (TEST-NET-2, RFC 5737). */
export const IPVS_PROBE_VIRTUAL_SERVER = { address: '198.51.100.0', port: 20000, protocol: 'TCP' } as const;

/** Why IPVS mode cannot run here. */
export type IpvsUnavailableReason = 'ipset' | 'kernel' | 'scheduler';

/** IPVS mode cannot run on this node; the message starts with upstream's `can't use the IPVS proxier:`. */
export class IpvsUnavailableError extends Error {
  override readonly name = 'IpvsUnavailableError';
  /** `ipset`: missing or older than 6.0; `kernel`: no IPVS; `scheduler`: the kernel refused the scheduler. */
  readonly reason: IpvsUnavailableReason;
  /** @param reason what failed; @param detail why; @param cause the underlying error. */
  constructor(reason: IpvsUnavailableReason, detail: string, cause?: unknown) {
    super(`can't use the IPVS proxier: ${detail}`, { cause });
    this.reason = reason;
  }
}

/** Options of {@link checkIpvsSupport}. */
export interface IpvsSupportOptions {
  /** The executor the proxier will use (its namespace is the one checked). */
  readonly executor: IpvsExecutor;
  /**
   * `--ipvs-scheduler`.
   * @default 'rr'
   */
  readonly scheduler?: string;
  /**
   * Where `net/ip_vs` is looked for, to explain a kernel failure (the file exists once the
   * `ip_vs` module is loaded or built in).
   * @default '/proc'
   */
  readonly procRoot?: string;
}

const VERSION_RE = /v([0-9]+)\.([0-9]+)/;

/** The `X.Y` of `ipset --version` output, or undefined. */
export function parseIpsetVersion(text: string): [number, number] | undefined {
  const m = VERSION_RE.exec(text);
  return m ? [Number(m[1]), Number(m[2])] : undefined;
}

function message(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}

/**
 * Runs kube-proxy's IPVS start-up check through `executor`.
 * @throws IpvsUnavailableError naming what is missing.
 */
export async function checkIpvsSupport(options: IpvsSupportOptions): Promise<void> {
  const { executor } = options;
  const scheduler = options.scheduler || DEFAULT_IPVS_SCHEDULER;
  let versionText: string;
  try {
    versionText = await executor.ipsetVersion();
  } catch (e) {
    throw new IpvsUnavailableError('ipset', `error getting ipset version, error: ${message(e)}`, e);
  }
  const version = parseIpsetVersion(versionText);
  const [minMajor, minMinor] = MIN_IPSET_VERSION.split('.').map(Number) as [number, number];
  if (!version || version[0] < minMajor || (version[0] === minMajor && version[1] < minMinor)) {
    const shown = version ? `v${version.join('.')}` : JSON.stringify(versionText.trim());
    throw new IpvsUnavailableError(
      'ipset',
      `ipset version: ${shown} is less than min required version: ${MIN_IPSET_VERSION}`,
    );
  }
  const kernelFailure = (e: unknown) => {
    const proc = `${(options.procRoot ?? '/proc').replace(/\/+$/, '')}/net/ip_vs`;
    const hint = existsSync(proc)
      ? ''
      : ` (${proc} does not exist: IPVS is not built into this kernel or the ip_vs module is not loaded)`;
    return new IpvsUnavailableError('kernel', `IPVS is not available: ${message(e)}${hint}`, e);
  };
  let current: Awaited<ReturnType<IpvsExecutor['read']>>;
  try {
    current = await executor.read();
  } catch (e) {
    throw kernelFailure(e);
  }
  // A restart: IPVS works and the scheduler is known to the kernel.
  if (current.virtualServers.some((v) => v.scheduler === scheduler)) return;
  const probe = { ...IPVS_PROBE_VIRTUAL_SERVER, scheduler, flags: [], timeoutSeconds: 0 };
  try {
    await executor.apply([{ kind: 'add-virtual-server', virtualServer: probe }]);
  } catch (e) {
    throw new IpvsUnavailableError(
      'scheduler',
      `the kernel refused a virtual server with scheduler ${JSON.stringify(scheduler)}: ${message(e)}`,
      e,
    );
  }
  const after = await executor.read().catch((e: unknown) => {
    throw kernelFailure(e);
  });
  const key = (v: { address: string; port: number; protocol: string }) =>
    `${v.address}:${v.port}/${v.protocol}`;
  if (!after.virtualServers.some((v) => key(v) === key(probe))) {
    throw new IpvsUnavailableError(
      'kernel',
      'IPVS is not available: the probe virtual server was not created',
    );
  }
  await executor.apply([{ kind: 'delete-virtual-server', virtualServer: IPVS_PROBE_VIRTUAL_SERVER }]);
}
