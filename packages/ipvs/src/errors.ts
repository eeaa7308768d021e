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

/** Any error the planner reports for one object. */
export type IpvsPlanError = InvalidServicePortError | InvalidEndpointError | VirtualServerConflictError;
