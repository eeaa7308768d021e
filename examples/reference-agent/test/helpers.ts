// Shared test helpers: polling with a deadline, a log sink, pod builders.
import type { V1Container, V1Pod } from '@kubernetes/client-node';
import { consoleLogger, type Logger, noopLogger } from '@nodeagent/core';

/** Polls `fn` until it returns a value other than undefined/false, or fails with `what` after `timeoutMs`. */
export async function waitFor<T>(
  what: string,
  fn: () => T | undefined | false | Promise<T | undefined | false>,
  timeoutMs = 10_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const v = await fn();
      if (v !== undefined && v !== false) return v;
    } catch (err) {
      last = err;
    }
    if (Date.now() > deadline)
      throw new Error(`timed out waiting for ${what}${last ? `: ${String(last)}` : ''}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** Logs to stderr when NODEAGENT_TEST_LOG is set (debugging), else nothing. */
export function testLogger(): Logger {
  return process.env.NODEAGENT_TEST_LOG ? consoleLogger({ level: 'debug', format: 'pretty' }) : noopLogger;
}

/** A pod bound to `nodeName`. */
export function makePod(
  name: string,
  nodeName: string,
  containers: V1Container[],
  extra: Partial<NonNullable<V1Pod['spec']>> = {},
): V1Pod {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, namespace: 'default' },
    spec: { nodeName, containers, terminationGracePeriodSeconds: 5, ...extra },
  };
}

/** A container running `script` with `image`. */
export function shContainer(name: string, image: string, script: string): V1Container {
  return { name, image, imagePullPolicy: 'IfNotPresent', command: ['sh', '-c', script] };
}
