// The pod-workers test doubles live in the package's `/testing` entry; the tests use them
// under their short names, plus two promise helpers of their own.
export {
  type Behavior,
  createPodWorkersHarness as createHarness,
  type FakeStatus,
  FakeStatusCache,
  makePod,
  type PodOptions,
  type PodWorkersHarness as Harness,
  RecordingSyncer,
  RecordingWorkQueue,
  type SyncCall,
  type SyncMethod,
} from '../src/testing.js';

/** A promise the test resolves or rejects by hand. */
export function deferred<T = void>(): { promise: Promise<T>; resolve(v: T): void; reject(e: unknown): void } {
  let resolve!: (v: T) => void;
  let reject!: (e: unknown) => void;
  const promise = new Promise<T>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

/** Resolves when the signal aborts (rejecting like an abortable operation would). */
export function untilAborted(signal: AbortSignal): Promise<never> {
  return new Promise((_, reject) => {
    if (signal.aborted) reject(signal.reason);
    signal.addEventListener('abort', () => reject(signal.reason), { once: true });
  });
}
