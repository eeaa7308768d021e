/**
 * Test doubles for prober users: a recorder that keeps events, a scripted command runner and
 * a mutable pod status provider.
 *
 * @packageDocumentation
 */
export {
  FakeCommandRunner,
  type FakeCommandScript,
  type RecordedProbeEvent,
  RecordingEventRecorder,
  StaticPodStatusProvider,
} from './testing/fakes.js';
