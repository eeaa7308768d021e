/**
 * Test doubles for `@nodeagent/core` users: a manual clock and a logger that records.
 *
 * @packageDocumentation
 */
export { FakeClock, type FakeClockOptions } from './fake-clock.js';
export { type LogRecord, RecordingLogger } from './recording-logger.js';
