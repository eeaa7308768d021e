/**
 * A test harness for code built on the runtime manager: {@link startRuntimeManagerHarness}
 * starts the fake CRI runtime (`startFakeRuntime` of `@nodeagent/kubecontainer/testing`) on a
 * fake clock and wires a {@link KubeRuntimeManager} to it, with log and pod roots in a fresh
 * temporary directory.
 *
 * @example
 * ```ts
 * import { startRuntimeManagerHarness } from '@nodeagent/kuberuntime/testing';
 *
 * const h = await startRuntimeManagerHarness();
 * const pod = { metadata: { name: 'web', namespace: 'default', uid: 'u-1' },
 *   spec: { containers: [{ name: 'app', image: 'busybox:1.36' }] } };
 * await h.manager.syncPod(pod, await h.manager.getPodStatus(pod));
 * await h.close();
 * ```
 *
 * @packageDocumentation
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FakeClock, RecordingLogger } from '@nodeagent/core/testing';
import type { CriClient } from '@nodeagent/cri';
import type { FakeRuntime, FakeRuntimeOptions } from '@nodeagent/cri/testing';
import { startFakeRuntime } from '@nodeagent/kubecontainer/testing';
import { KubeRuntimeManager } from './runtime-manager.js';
import type { KubeRuntimeManagerOptions } from './runtime-manager-options.js';

/** What {@link startRuntimeManagerHarness} started. */
export interface RuntimeManagerHarness {
  /** The fake clock everything runs on. */
  readonly clock: FakeClock;
  /** The fake runtime (behaviours, faults, call log). */
  readonly fake: FakeRuntime;
  /** A client on the fake's socket. */
  readonly cri: CriClient;
  /** A manager over {@link RuntimeManagerHarness.cri}. */
  readonly manager: KubeRuntimeManager;
  /** The temporary directory holding `logs/` and `pods/`. */
  readonly dir: string;
  /** Records what the managers log. */
  readonly logger: RecordingLogger;
  /** Another manager over the same runtime (an agent restart), with `extra` options. */
  newManager(extra?: Partial<KubeRuntimeManagerOptions>): KubeRuntimeManager;
  /** Stops the fake, closes the client and removes the directory. */
  close(): Promise<void>;
}

/**
 * Starts a fake runtime (on a fake clock, `busybox:1.36` preloaded unless `fakeOptions.images`
 * says otherwise) and a manager over it: no resolv.conf, 8 GiB of memory, log and pod roots
 * under a temporary directory.
 */
export async function startRuntimeManagerHarness(
  fakeOptions: FakeRuntimeOptions = {},
  managerOptions: Partial<KubeRuntimeManagerOptions> = {},
): Promise<RuntimeManagerHarness> {
  const clock = new FakeClock();
  const {
    runtime: fake,
    cri,
    stop,
  } = await startFakeRuntime({
    clock,
    images: [{ ref: 'busybox:1.36' }],
    ...fakeOptions,
    client: {},
  });
  const dir = mkdtempSync(join(tmpdir(), 'kuberuntime-test-'));
  const logger = new RecordingLogger();
  const newManager = (extra: Partial<KubeRuntimeManagerOptions> = {}) =>
    new KubeRuntimeManager({
      cri,
      clock,
      logger,
      podLogsRoot: join(dir, 'logs'),
      podsRoot: join(dir, 'pods'),
      resolvConf: '',
      memoryCapacityBytes: 8n * 1024n ** 3n,
      ...managerOptions,
      ...extra,
    });
  return {
    clock,
    fake,
    cri,
    dir,
    logger,
    manager: newManager(),
    newManager,
    async close() {
      await stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
