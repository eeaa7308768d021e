/**
 * Typed errors for API objects that cannot be programmed. Each names the object and lists
 * every problem found; the object is skipped and everything else is still processed.
 *
 * @module
 */

/** A Service that cannot be programmed (invalid IP, port out of range, unknown protocol, …). */
export class InvalidServiceError extends Error {
  /** The object kind, for log and event consumers. */
  readonly kind = 'Service' as const;
  /**
   * @param namespace - The Service's namespace.
   * @param serviceName - The Service's name.
   * @param problems - One human-readable line per problem, each naming the field and the valid range.
   */
  constructor(
    readonly namespace: string,
    readonly serviceName: string,
    readonly problems: readonly string[],
  ) {
    super(`Service ${namespace}/${serviceName} skipped: ${problems.join('; ')}`);
    this.name = 'InvalidServiceError';
  }
}

/** An EndpointSlice that cannot be programmed (no service-name label, invalid address, bad port, …). */
export class InvalidEndpointSliceError extends Error {
  /** The object kind, for log and event consumers. */
  readonly kind = 'EndpointSlice' as const;
  /**
   * @param namespace - The EndpointSlice's namespace.
   * @param sliceName - The EndpointSlice's name.
   * @param problems - One human-readable line per problem.
   */
  constructor(
    readonly namespace: string,
    readonly sliceName: string,
    readonly problems: readonly string[],
  ) {
    super(`EndpointSlice ${namespace}/${sliceName} skipped: ${problems.join('; ')}`);
    this.name = 'InvalidEndpointSliceError';
  }
}

/** Either error kind: what `onError` receives and update results carry. */
export type ProxyStateError = InvalidServiceError | InvalidEndpointSliceError;

/**
 * A service port a renderer (iptables, nftables, IPVS) cannot program for its ruleset (an
 * address of the other family, a port out of range, a name that cannot appear in a chain
 * name, …). Only that port is skipped; the others are still programmed.
 */
export class InvalidServicePortError extends Error {
  override readonly name = 'InvalidServicePortError';
  /** `ns/name:port` of the skipped service port. */
  readonly servicePortName: string;
  /** What is wrong, one entry per problem. */
  readonly problems: readonly string[];
  /**
   * @param servicePortName - `ns/name:port` (`ns/name` for an unnamed port).
   * @param problems - What is wrong and what would be valid: one reason or one entry per problem.
   */
  constructor(servicePortName: string, problems: string | readonly string[]) {
    const list = typeof problems === 'string' ? [problems] : problems;
    super(`service port ${JSON.stringify(servicePortName)} skipped: ${list.join('; ')}`);
    this.servicePortName = servicePortName;
    this.problems = list;
  }
}

/**
 * True when `value` is a port number a renderer can program: an integer in 1–65535, or 0 too
 * when `allowZero` (an unset `nodePort` / `healthCheckNodePort`).
 */
export function isValidPort(value: unknown, allowZero = false): value is number {
  return (
    typeof value === 'number' && Number.isInteger(value) && value <= 65535 && value >= (allowZero ? 0 : 1)
  );
}
