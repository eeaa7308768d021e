/**
 * `ipvsadm` rule text: the full state for `ipvsadm-restore` (which clears the table first),
 * and one line per incremental operation for `ipvsadm -R` (which does not).
 *
 * @module
 */
import { joinHostPort, parseIP } from '@nodeagent/core';
import type { IpvsState, RealServerId, VirtualServerId, VirtualServerSpec } from './model.js';
import type { IpvsOperation } from './operations.js';

/** Data that cannot be written as ipvsadm text (never produced by the planner). */
export class IpvsRenderError extends Error {
  override readonly name = 'IpvsRenderError';
}

const SCHEDULER_RE = /^[a-z][a-z0-9_]{0,15}$/;

function address(a: string): string {
  const ip = parseIP(String(a))?.ip;
  if (ip === undefined) throw new IpvsRenderError(`${JSON.stringify(a)} is not an IP address`);
  return ip;
}

function port(p: number): number {
  if (!Number.isInteger(p) || p < 0 || p > 65535)
    throw new IpvsRenderError(`${JSON.stringify(p)} is not a port`);
  return p;
}

/** `-t 10.0.0.1:80`, `-u [fd00::1]:53` or `--sctp-service 10.0.0.1:9`. */
export function serviceArgs(vs: VirtualServerId): string[] {
  const flag = { TCP: '-t', UDP: '-u', SCTP: '--sctp-service' }[vs.protocol];
  if (flag === undefined) throw new IpvsRenderError(`unknown protocol ${JSON.stringify(vs.protocol)}`);
  return [flag, joinHostPort(address(vs.address), port(vs.port))];
}

/** Scheduler, persistence and scheduler-flag arguments of a virtual server. */
export function serviceOptionArgs(vs: VirtualServerSpec): string[] {
  if (!SCHEDULER_RE.test(vs.scheduler))
    throw new IpvsRenderError(`${JSON.stringify(vs.scheduler)} is not a scheduler`);
  const args = ['-s', vs.scheduler];
  if (vs.flags.includes('persistent')) {
    if (!Number.isInteger(vs.timeoutSeconds) || vs.timeoutSeconds < 1) {
      throw new IpvsRenderError(`persistence timeout ${JSON.stringify(vs.timeoutSeconds)} is invalid`);
    }
    args.push('-p', String(vs.timeoutSeconds));
  }
  if (vs.flags.includes('source-hash')) {
    args.push('-b', vs.scheduler === 'mh' ? 'mh-port' : vs.scheduler === 'sh' ? 'sh-port' : 'flag-2');
  }
  return args;
}

function realServerArgs(rs: RealServerId, weight?: number): string[] {
  const args = ['-r', joinHostPort(address(rs.address), port(rs.port))];
  if (weight !== undefined) {
    if (!Number.isInteger(weight) || weight < 0 || weight > 65535) {
      throw new IpvsRenderError(`weight ${JSON.stringify(weight)} is invalid`);
    }
    args.push('-m', '-w', String(weight));
  }
  return args;
}

/** The ipvsadm arguments of one IPVS operation, or undefined for other backends' operations. */
export function ipvsadmArgs(op: IpvsOperation): string[] | undefined {
  switch (op.kind) {
    case 'add-virtual-server':
      return ['-A', ...serviceArgs(op.virtualServer), ...serviceOptionArgs(op.virtualServer)];
    case 'update-virtual-server':
      return ['-E', ...serviceArgs(op.virtualServer), ...serviceOptionArgs(op.virtualServer)];
    case 'delete-virtual-server':
      return ['-D', ...serviceArgs(op.virtualServer)];
    case 'add-real-server':
      return ['-a', ...serviceArgs(op.virtualServer), ...realServerArgs(op.realServer, op.realServer.weight)];
    case 'update-real-server':
      return ['-e', ...serviceArgs(op.virtualServer), ...realServerArgs(op.realServer, op.realServer.weight)];
    case 'delete-real-server':
      return ['-d', ...serviceArgs(op.virtualServer), ...realServerArgs(op.realServer)];
    default:
      return undefined;
  }
}

/** `ipvsadm -R` input for the IPVS operations among `ops` (others are left out), in order. */
export function renderIpvsadmOperations(ops: readonly IpvsOperation[]): string {
  const lines: string[] = [];
  for (const op of ops) {
    const args = ipvsadmArgs(op);
    if (args) lines.push(args.join(' '));
  }
  return lines.length === 0 ? '' : `${lines.join('\n')}\n`;
}

/**
 * The whole IPVS table as `ipvsadm-restore` input (the format `ipvsadm -S -n` prints):
 * `-A -t VIP:PORT -s rr [-p timeout]` per virtual server followed by
 * `-a -t VIP:PORT -r RIP:RPORT -m -w WEIGHT` per real server. `ipvsadm-restore` clears the
 * table before loading it; use {@link renderIpvsadmOperations} with `ipvsadm -R` for changes.
 */
export function renderIpvsadmRestore(state: Pick<IpvsState, 'virtualServers'>): string {
  const ops: IpvsOperation[] = [];
  for (const vs of state.virtualServers) {
    ops.push({ kind: 'add-virtual-server', virtualServer: vs });
    for (const rs of vs.realServers) ops.push({ kind: 'add-real-server', virtualServer: vs, realServer: rs });
  }
  return renderIpvsadmOperations(ops);
}
