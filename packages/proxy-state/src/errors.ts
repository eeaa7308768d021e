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
