import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FakeClock, RecordingLogger } from '@nodeagent/core/testing';
import { type CriClient, createCriClient } from '@nodeagent/cri';
import { FakeRuntime, type FakeRuntimeOptions } from '@nodeagent/cri/testing';
import { KubeRuntimeManager, type KubeRuntimeManagerOptions } from '../src/index.js';

export interface Harness {
  readonly clock: FakeClock;
  readonly fake: FakeRuntime;
  readonly cri: CriClient;
  readonly manager: KubeRuntimeManager;
  readonly dir: string;
  readonly logger: RecordingLogger;
  newManager(extra?: Partial<KubeRuntimeManagerOptions>): KubeRuntimeManager;
  close(): Promise<void>;
}

/** A fake runtime on a fake clock and a manager over it, with temp log / pod roots. */
export async function startHarness(
  fakeOptions: FakeRuntimeOptions = {},
  managerOptions: Partial<KubeRuntimeManagerOptions> = {},
): Promise<Harness> {
  const clock = new FakeClock();
  const fake = new FakeRuntime({ clock, images: [{ ref: 'busybox:1.36' }], ...fakeOptions });
  await fake.start();
  const endpoint = fake.endpoint;
  const cri = createCriClient(endpoint);
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
      cri.close();
      await fake.stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
