/**
 * Typed errors for objects the planner had to leave out; the rest of the plan is unaffected.
 *
 * @module
 */
import type { InvalidServicePortError } from '@nodeagent/proxy-state';

/** An endpoint that cannot be a real server (bad address or port); it was skipped. */
export class InvalidEndpointError extends Error {
  override readonly name = 'InvalidEndpointError';
  /** The service port (`ns/svc:port`). */
  readonly servicePort: string;
  /** The endpoint as given. */
  readonly endpoint: string;
  /** @param servicePort owner; @param endpoint the endpoint text; @param reason what is wrong. */
  constructor(servicePort: string, endpoint: string, reason: string) {
    super(`endpoint ${JSON.stringify(endpoint)} of ${JSON.stringify(servicePort)} skipped: ${reason}`);
    this.servicePort = servicePort;
    this.endpoint = endpoint;
  }
}

/**
 * Two service ports claim the same virtual server (address, port, protocol). The first in
 * snapshot order keeps it; the later one's virtual server is skipped.
 */
export class VirtualServerConflictError extends Error {
  override readonly name = 'VirtualServerConflictError';
  /** The virtual server key (`ip:port/PROTO`). */
  readonly virtualServer: string;
  /** The service port that kept the virtual server. */
  readonly owner: string;
  /** The service port whose virtual server was skipped. */
  readonly servicePort: string;
  /** @param virtualServer key; @param owner keeper; @param servicePort loser. */
  constructor(virtualServer: string, owner: string, servicePort: string) {
    super(
      `virtual server ${virtualServer} of ${JSON.stringify(servicePort)} skipped: already used by ${JSON.stringify(owner)}`,
    );
    this.virtualServer = virtualServer;
    this.owner = owner;
    this.servicePort = servicePort;
  }
}

/**
 * A set whose entries exceed its `maxelem` (ipset would answer "Hash is full" part-way
 * through a restore). The planner refuses that set's entries — the set is kept with
 * `entriesRefused` and the kernel's current entries are left alone — and plans every
 * other set as usual.
 */
export class IPSetOverflowError extends Error {
  override readonly name = 'IPSetOverflowError';
  /** The set's name (`KUBE-LOOP-BACK`, `KUBE-6-CLUSTER-IP`, ...). */
  readonly set: string;
  /** How many entries the plan wanted in it. */
  readonly entries: number;
  /** The set's `maxelem`. */
  readonly maxElem: number;
  /** @param set the set name; @param entries wanted entries; @param maxElem its limit. */
  constructor(set: string, entries: number, maxElem: number) {
    super(
      `ipset ${set} would hold ${entries} entries, more than its maxelem ${maxElem}: its entries are left unchanged this sync`,
    );
    this.set = set;
    this.entries = entries;
    this.maxElem = maxElem;
  }
}

/** Any error the planner reports for one object. */
export type IpvsPlanError =
  | InvalidServicePortError
  | InvalidEndpointError
  | VirtualServerConflictError
  | IPSetOverflowError;
