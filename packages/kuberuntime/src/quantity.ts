/**
 * Resource quantities now live in `@nodeagent/core` (admission and status read them too).
 *
 * @module
 */
export { InvalidQuantityError, isValidQuantity, milliValue, quantityValue } from '@nodeagent/core';
