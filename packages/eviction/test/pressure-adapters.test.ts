// The manager plugs straight into the status package's node conditions (NodePressureProvider)
// and the admission package's pressure handler (NodePressureSource).
import { NodePressureAdmitHandler, type NodePressureSource } from '@nodeagent/admission';
import { FakeClock } from '@nodeagent/core/testing';
import type { NodePressureProvider } from '@nodeagent/status';
import { expect, it } from 'vitest';
import { EvictionManager, parseThresholdConfig } from '../src/index.js';
import { FakeSummary, Mi, RecordingKiller } from './fixtures.js';

it('is a NodePressureProvider and a NodePressureSource', async () => {
  const clock = new FakeClock();
  const summary = new FakeSummary(() => clock.now());
  const manager = new EvictionManager({
    thresholds: parseThresholdConfig({
      evictionHard: { 'pid.available': '10%', 'memory.available': '100Mi' },
    }),
    summaryProvider: summary,
    activePods: () => [],
    podKiller: new RecordingKiller(),
    clock,
  });
  const provider: NodePressureProvider = manager;
  const source: NodePressureSource = manager;
  expect([
    provider.isUnderMemoryPressure(),
    provider.isUnderDiskPressure(),
    provider.isUnderPIDPressure(),
  ]).toEqual([false, false, false]);
  summary.memoryAvailable = 10 * Mi;
  summary.pid = { maxpid: 1000, curproc: 999 };
  await manager.synchronize();
  expect([
    provider.isUnderMemoryPressure(),
    provider.isUnderDiskPressure(),
    provider.isUnderPIDPressure(),
  ]).toEqual([true, false, true]);
  // conditions come in the order of the thresholds that raised them
  const handler = new NodePressureAdmitHandler(source);
  expect(
    handler.admit({ pod: { metadata: { name: 'p', uid: 'u' }, spec: { containers: [] } }, otherPods: [] }),
  ).toEqual({
    admit: false,
    reason: 'Evicted',
    message: 'The node had condition: [PIDPressure MemoryPressure]. ',
  });
});
