// Shared test helpers: polling with a deadline, a log sink, pod builders, the embedded store.
import { execFileSync, spawn } from 'node:child_process';
import type { V1Container, V1Pod, V1PodCondition } from '@kubernetes/client-node';
import { consoleLogger, type Logger, noopLogger } from '@nodeagent/core';
import type { MiniApiServer } from '@nodeagent/mini-apiserver';
import { afterAll, beforeAll } from 'vitest';
import { type AgentOptions, type RunningAgent, runAgent } from '../src/agent.js';

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

/** The embedded API server's store of a test agent (it must run on the embedded defaults). */
export function embeddedStore(agent: RunningAgent): MiniApiServer['store'] {
  if (!agent.apiServer) throw new Error('no embedded API server');
  return agent.apiServer.store;
}

/** The pod `default/<name>` as the embedded API server holds it. */
export function podNamed(agent: RunningAgent, name: string): V1Pod | undefined {
  return embeddedStore(agent).tryGet('pods', 'default', name) as V1Pod | undefined;
}

/** A pod's condition of this type. */
export function podCondition(pod: V1Pod | undefined, type: string): V1PodCondition | undefined {
  return pod?.status?.conditions?.find((c) => c.type === type);
}

/** The kubelet's timings shortened for tests (relist, housekeeping, retries, node status, back-off cap). */
export const FAST_AGENT_TIMINGS = {
  relistPeriodMs: 200,
  housekeepingMs: 200,
  backOffPeriodMs: 500,
  nodeStatusUpdateMs: 300,
  crashLoopBackOffMaxMs: 1_000,
} as const;

/** What {@link useEmbeddedAgent} gives a describe block. */
export interface EmbeddedAgent {
  /** The running agent (set in beforeAll). */
  readonly agent: RunningAgent;
  /** Its embedded API server's store. */
  store(): MiniApiServer['store'];
  /** The pod `default/<name>` as the embedded API server holds it. */
  pod(name: string): V1Pod | undefined;
}

/**
 * Registers beforeAll/afterAll that run an agent on the embedded defaults with
 * {@link FAST_AGENT_TIMINGS} and the {@link testLogger} (then `options`), and stop it;
 * call inside describe.
 */
export function useEmbeddedAgent(options: AgentOptions): EmbeddedAgent {
  let agent: RunningAgent | undefined;
  beforeAll(async () => {
    agent = await runAgent({ ...FAST_AGENT_TIMINGS, logger: testLogger(), ...options });
  });
  afterAll(async () => {
    await agent?.stop();
  });
  const running = (): RunningAgent => {
    if (!agent) throw new Error('the agent is not running (use it inside a test)');
    return agent;
  };
  return {
    get agent() {
      return running();
    },
    store: () => embeddedStore(running()),
    pod: (name) => podNamed(running(), name),
  };
}

/**
 * Writes a self-signed EC P-256 certificate and key with `openssl` (`keyPath`, `certPath`),
 * valid `days` from now, subject `/CN=<cn>`.
 */
export function writeSelfSignedCert(keyPath: string, certPath: string, days: number, cn: string): void {
  execFileSync(
    'openssl',
    [
      'req',
      '-x509',
      '-newkey',
      'ec',
      '-pkeyopt',
      'ec_paramgen_curve:P-256',
      '-nodes',
      '-keyout',
      keyPath,
      '-out',
      certPath,
      '-days',
      String(days),
      '-subj',
      `/CN=${cn}`,
    ],
    { stdio: 'ignore' },
  );
}

/**
 * Follows `pod`'s log with `kubectl logs -f` (as `kubeconfigPath`'s user) until line `lines`
 * (`line-<n>-…`) arrives, and returns the numbers of the lines seen, in order.
 */
export async function followLineNumbers(
  kubeconfigPath: string,
  pod: string,
  lines: number,
  timeoutMs: number,
): Promise<number[]> {
  const child = spawn('kubectl', ['logs', '-f', pod], {
    env: { ...process.env, KUBECONFIG: kubeconfigPath },
  });
  let out = '';
  child.stdout.on('data', (c: Buffer) => {
    out += c.toString();
  });
  try {
    await waitFor('the last line through kubectl logs -f', () => out.includes(`line-${lines}-`), timeoutMs);
  } finally {
    child.kill();
  }
  return out
    .trim()
    .split('\n')
    .map((l) => Number(/^line-(\d+)-/.exec(l)?.[1]));
}
