// Worker rules on a fake clock, each encoding upstream's worker_test.go expectations:
// initial results, initial delay, failure/success thresholds, hold after a liveness or startup
// result until the container is replaced, startup gating, probe errors discarded.
import { describe, expect, it } from 'vitest';
import { CID, CONTAINER, execProbe, harness, POD_UID, podWith, runningStatus } from './helpers.js';

const fail = { output: 'nope', exitCode: 1 };
const ok = { output: '', exitCode: 0 };

describe('initial results and initial delay (upstream TestInitialDelay)', () => {
  for (const [type, initial] of [
    ['liveness', 'success'],
    ['readiness', 'failure'],
    ['startup', 'unknown'],
  ] as const) {
    it(`${type}: ${initial} during initialDelaySeconds, success after it`, async () => {
      const h = await harness();
      const key = `${type}Probe` as const;
      const pod = podWith({ [key]: execProbe({ initialDelaySeconds: 10 }) });
      h.statuses.set(POD_UID, runningStatus(new Date(h.clock.now()), { started: type !== 'startup' }));
      h.manager.addPod(pod);
      await h.clock.advance(0);
      expect(h.manager.resultOf(type, CID)).toBe(initial);
      expect(h.runner.calls).toHaveLength(0);
      await h.clock.advance(9_000);
      expect(h.runner.calls).toHaveLength(0);
      await h.clock.advance(1_000);
      expect(h.runner.calls).toHaveLength(1);
      expect(h.manager.resultOf(type, CID)).toBe('success');
      await h.manager.stop();
    });
  }
});

describe('thresholds', () => {
  it('readiness failureThreshold 3: two failures keep success, the third publishes failure (TestFailureThreshold)', async () => {
    const h = await harness();
    h.statuses.set(POD_UID, runningStatus(new Date(h.clock.now()), { started: true }));
    h.manager.addPod(podWith({ readinessProbe: execProbe({ successThreshold: 1, failureThreshold: 3 }) }));
    const seen: string[] = [];
    const step = async (answer: typeof ok) => {
      h.runner.script = () => answer;
      await h.clock.advance(seen.length === 0 ? 0 : 1000);
      seen.push(String(h.manager.resultOf('readiness', CID)));
    };
    for (let i = 0; i < 2; i++) {
      for (let j = 0; j < 3; j++) await step(ok);
      for (let j = 0; j < 2; j++) await step(fail);
      for (let j = 0; j < 3; j++) await step(fail);
    }
    expect(seen).toEqual([
      ...['success', 'success', 'success', 'success', 'success', 'failure', 'failure', 'failure'],
      ...['success', 'success', 'success', 'success', 'success', 'failure', 'failure', 'failure'],
    ]);
    await h.manager.stop();
  });

  it('readiness successThreshold 3: two successes keep failure, the third publishes success (TestSuccessThreshold)', async () => {
    const h = await harness();
    h.statuses.set(POD_UID, runningStatus(new Date(h.clock.now()), { started: true }));
    h.manager.addPod(podWith({ readinessProbe: execProbe({ successThreshold: 3, failureThreshold: 1 }) }));
    const seen: string[] = [];
    for (let i = 0; i < 6; i++) {
      h.runner.script = () => (i === 5 ? fail : ok);
      await h.clock.advance(i === 0 ? 0 : 1000);
      seen.push(String(h.manager.resultOf('readiness', CID)));
    }
    expect(seen).toEqual(['failure', 'failure', 'success', 'success', 'success', 'failure']);
    await h.manager.stop();
  });

  it('startup failureThreshold 3: unknown, unknown, failure, then on hold (TestStartupProbeFailureThreshold)', async () => {
    const h = await harness();
    h.runner.script = () => fail;
    h.statuses.set(POD_UID, runningStatus(new Date(h.clock.now()), { started: false }));
    h.manager.addPod(podWith({ startupProbe: execProbe({ failureThreshold: 3 }) }));
    const seen: string[] = [];
    for (let i = 0; i < 5; i++) {
      await h.clock.advance(i === 0 ? 0 : 1000);
      seen.push(String(h.manager.resultOf('startup', CID)));
    }
    expect(seen).toEqual(['unknown', 'unknown', 'failure', 'failure', 'failure']);
    expect(h.runner.calls).toHaveLength(3);
    await h.manager.stop();
  });
});

describe('hold after a liveness or startup result (TestOnHoldOnLivenessOrStartupCheckFailure)', () => {
  for (const type of ['liveness', 'startup'] as const) {
    it(`${type}: failure holds until a new container ID, then probing resumes`, async () => {
      const h = await harness();
      const key = `${type}Probe` as const;
      h.runner.script = () => fail;
      const status = runningStatus(new Date(h.clock.now()), { started: type !== 'startup' });
      h.statuses.set(POD_UID, status);
      h.manager.addPod(podWith({ [key]: execProbe({ failureThreshold: 1 }) }));
      await h.clock.advance(0);
      expect(h.manager.resultOf(type, CID)).toBe('failure');
      h.runner.script = () => ok;
      await h.clock.advance(3000);
      expect(h.manager.resultOf(type, CID)).toBe('failure');
      expect(h.runner.calls).toHaveLength(1);

      const next = runningStatus(new Date(h.clock.now()), {
        started: type !== 'startup',
        containerID: 'containerd://c2',
      });
      h.statuses.set(POD_UID, next);
      await h.clock.advance(1000);
      expect(h.manager.resultOf(type, 'containerd://c2')).toBe('success');
      expect(h.manager.resultOf(type, CID)).toBeUndefined();
      await h.clock.advance(2000);
      // Liveness keeps probing; a startup success holds too (no extra startup probes).
      expect(h.runner.calls).toHaveLength(type === 'liveness' ? 4 : 2);
      await h.manager.stop();
    });
  }
});

describe('startup gates liveness and readiness', () => {
  it('liveness is not probed until the container is started (TestLivenessProbeDisabledByStarted)', async () => {
    const h = await harness();
    h.runner.script = () => fail;
    h.statuses.set(POD_UID, runningStatus(new Date(h.clock.now()), { started: false }));
    h.manager.addPod(podWith({ livenessProbe: execProbe({ failureThreshold: 1 }) }));
    await h.clock.advance(0);
    expect(h.manager.resultOf('liveness', CID)).toBe('success');
    expect(h.runner.calls).toHaveLength(0);
    h.statuses.set(POD_UID, runningStatus(new Date(h.clock.now() - 1), { started: true }));
    await h.clock.advance(1000);
    expect(h.manager.resultOf('liveness', CID)).toBe('failure');
    await h.manager.stop();
  });

  it('the startup probe stops once started (TestStartupProbeDisabledByStarted)', async () => {
    const h = await harness();
    h.runner.script = () => fail;
    const started = new Date(h.clock.now());
    h.statuses.set(POD_UID, runningStatus(started, { started: false }));
    h.manager.addPod(podWith({ startupProbe: execProbe({ failureThreshold: 2 }) }));
    await h.clock.advance(0);
    expect(h.manager.resultOf('startup', CID)).toBe('unknown');
    h.runner.script = () => ok;
    await h.clock.advance(1000);
    expect(h.manager.resultOf('startup', CID)).toBe('success');
    h.statuses.set(POD_UID, runningStatus(started, { started: true }));
    h.runner.script = () => fail;
    await h.clock.advance(3000);
    expect(h.manager.resultOf('startup', CID)).toBe('success');
    expect(h.runner.calls).toHaveLength(2);
    await h.manager.stop();
  });
});

describe('probe errors', () => {
  it('an erroring action is tried 3 times, reported once, and its result discarded', async () => {
    const h = await harness();
    h.runner.script = () => new Error('runtime is down');
    h.statuses.set(POD_UID, runningStatus(new Date(h.clock.now()), { started: true }));
    h.manager.addPod(podWith({ livenessProbe: execProbe({ failureThreshold: 1 }) }));
    await h.clock.advance(0);
    expect(h.runner.calls).toHaveLength(3);
    expect(h.recorder.lines()).toEqual([
      'Warning Unhealthy Liveness probe errored and resulted in unknown state: runtime is down',
    ]);
    expect(h.manager.resultOf('liveness', CID)).toBe('success');
    expect(h.manager.shouldRestart(CID)).toBe(false);
    await h.manager.stop();
  });

  it('a clean failure is not retried and gives the Unhealthy event with the output', async () => {
    const h = await harness();
    h.runner.script = () => ({ output: 'not ready yet\n', exitCode: 2 });
    h.statuses.set(POD_UID, runningStatus(new Date(h.clock.now()), { started: true }));
    h.manager.addPod(podWith({ readinessProbe: execProbe() }));
    await h.clock.advance(0);
    expect(h.runner.calls).toHaveLength(1);
    expect(h.recorder.events).toEqual([
      {
        pod: 'default/web',
        container: CONTAINER,
        type: 'Warning',
        reason: 'Unhealthy',
        message: 'Readiness probe failed: not ready yet\n',
      },
    ]);
    await h.manager.stop();
  });
});
