/**
 * The one error every `@nodeagent` constructor throws for options that cannot work, so a
 * caller catches one class whatever the package.
 *
 * @module
 */

/**
 * Thrown synchronously by a constructor or factory when an option is out of range, of the
 * wrong type or contradicts another. The message names the option, the bad value and what
 * would be valid; {@link InvalidOptionsError.component} names what refused it.
 *
 * @example
 * ```ts
 * try {
 *   new WorkQueue({ name: 'pods', maxRetries: -1 });
 * } catch (error) {
 *   if (error instanceof InvalidOptionsError) console.error(error.component, error.message);
 * }
 * ```
 */
export class InvalidOptionsError extends Error {
  override readonly name = 'InvalidOptionsError';

  /**
   * @param component what refused the options (a class or function name such as `'WorkQueue'`).
   * @param message what is wrong and what would be valid.
   */
  constructor(
    readonly component: string,
    message: string,
  ) {
    super(message);
  }
}
