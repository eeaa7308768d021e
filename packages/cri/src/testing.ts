/**
 * Test doubles for CRI users: {@link FakeRuntime}, an in-memory container runtime
 * served over a real gRPC unix socket (both `runtime.v1.RuntimeService` and
 * `runtime.v1.ImageService`), with scriptable container behaviour, fault injection and
 * a call log, all on an injectable clock.
 *
 * @example
 * ```ts
 * import { FakeClock } from '@nodeagent/core/testing';
 * import { FakeRuntime } from '@nodeagent/cri/testing';
 *
 * const clock = new FakeClock();
 * const fake = new FakeRuntime({ clock, images: [{ ref: 'busybox:1.36' }] });
 * fake.addBehaviour({ name: 'job' }, { exitAfterMs: 5_000, exitCode: 3 }); // exits with 3 after 5 s
 * fake.injectError('PullImage', { code: 14, message: 'registry unavailable' }); // next pull fails
 * await fake.start();
 * const endpoint = fake.endpoint; // 'unix:///tmp/nodeagent-fake-cri-…/cri.sock'
 * // … run the code under test against `endpoint`, then: await clock.advance(5_000) …
 * console.log(fake.callNames()); // ['Version', 'RunPodSandbox', …]
 * await fake.stop();
 * ```
 *
 * @packageDocumentation
 */
export type {
  BehaviourRule,
  ContainerBehaviour,
  ContainerMatch,
  ExecResult,
  ExecScript,
} from './fake/behaviours.js';
export type { FakeLogLine } from './fake/container-log.js';
export type { DefaultExecHandler } from './fake/exec.js';
export { FakeRuntimeConfigError, FakeRuntimeError } from './fake/fake-error.js';
export {
  type CriMethod,
  FakeRuntime,
  type FakeRuntimeOptions,
  type KillOptions,
} from './fake/fake-runtime.js';
export type { InjectedError, RecordedCall } from './fake/faults.js';
export { normalizeImageRef } from './fake/image-ref.js';
export type { FakeImage, FakeRegistryResolver } from './fake/image-store.js';
export type { FakeVersionInfo } from './fake/runtime-service.js';
