// The kuberuntime tests use the package's `/testing` harness under its short name.
export {
  type RuntimeManagerHarness as Harness,
  startRuntimeManagerHarness as startHarness,
} from '../src/testing.js';
