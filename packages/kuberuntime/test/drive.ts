import type { FakeClock } from '@nodeagent/core/testing';

/**
 * Advances the fake clock in steps until `promise` settles, yielding real time between steps
 * so gRPC round trips to the fake runtime complete.
 */
export async function drive<T>(
  clock: FakeClock,
  promise: Promise<T>,
  stepMs = 250,
  maxSteps = 2000,
): Promise<T> {
  let settled = false;
  const watched = promise.finally(() => {
    settled = true;
  });
  for (let i = 0; i < maxSteps && !settled; i++) {
    await new Promise((r) => setTimeout(r, 2));
    if (!settled) await clock.advance(stepMs);
  }
  return watched;
}
