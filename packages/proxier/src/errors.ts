/**
 * Typed errors of the proxier loop.
 *
 * @module
 */
import type { IPFamily } from '@nodeagent/proxy-state';

/** A backend sync that failed for one or more IP families; the proxier retries with a full sync. */
export class ProxierSyncError extends Error {
  override readonly name = 'ProxierSyncError';
  /** The failed families and their errors. */
  readonly failures: readonly { readonly family: IPFamily; readonly error: unknown }[];
  /** @param backend - Backend name. @param failures - Failed families with their errors. */
  constructor(backend: string, failures: readonly { readonly family: IPFamily; readonly error: unknown }[]) {
    const parts = failures.map(
      (f) => `IPv${f.family}: ${f.error instanceof Error ? f.error.message : String(f.error)}`,
    );
    super(`${backend} sync failed (${parts.join('; ')})`);
    this.failures = failures;
  }
}
