// The node conditions with upstream's reasons and messages, heartbeat/transition semantics, and
// the Ready errors in the kubelet's words (aggregated as "[a, b]").
import { describe, expect, it } from 'vitest';
import { aggregateMessage, pressureCondition, readyCondition, runtimeReadinessErrors } from '../src/index.js';

describe('pressure conditions', () => {
  it.each([
    ['MemoryPressure', false, 'KubeletHasSufficientMemory', 'kubelet has sufficient memory available'],
    ['MemoryPressure', true, 'KubeletHasInsufficientMemory', 'kubelet has insufficient memory available'],
    ['DiskPressure', false, 'KubeletHasNoDiskPressure', 'kubelet has no disk pressure'],
    ['DiskPressure', true, 'KubeletHasDiskPressure', 'kubelet has disk pressure'],
    ['PIDPressure', false, 'KubeletHasSufficientPID', 'kubelet has sufficient PID available'],
    ['PIDPressure', true, 'KubeletHasInsufficientPID', 'kubelet has insufficient PID available'],
  ] as const)('%s pressure=%s → %s', (type, pressure, reason, message) => {
    expect(pressureCondition(type, pressure, undefined, 'T1')).toEqual({
      type,
      status: pressure ? 'True' : 'False',
      reason,
      message,
      lastHeartbeatTime: 'T1',
      lastTransitionTime: 'T1',
    });
  });

  it('moves the heartbeat every time and the transition only on a flip', () => {
    const a = pressureCondition('DiskPressure', false, undefined, 'T1');
    const b = pressureCondition('DiskPressure', false, a, 'T2');
    expect(b).toMatchObject({ lastHeartbeatTime: 'T2', lastTransitionTime: 'T1' });
    const c = pressureCondition('DiskPressure', true, b, 'T3');
    expect(c).toMatchObject({ status: 'True', lastTransitionTime: 'T3' });
  });
});

describe('Ready', () => {
  it('is KubeletReady with "kubelet is posting ready status" when nothing is wrong', () => {
    expect(readyCondition([], undefined, 'T1')).toMatchObject({
      status: 'True',
      reason: 'KubeletReady',
      message: 'kubelet is posting ready status',
    });
  });

  it('aggregates several errors as [a, b] and keeps one as is', () => {
    expect(aggregateMessage(['a'])).toBe('a');
    expect(aggregateMessage(['a', 'b', 'a'])).toBe('[a, b]');
    expect(
      readyCondition(['container runtime is down', 'PLEG is not healthy: x'], undefined, 'T'),
    ).toMatchObject({
      status: 'False',
      reason: 'KubeletNotReady',
      message: '[container runtime is down, PLEG is not healthy: x]',
    });
  });

  it('says what the runtime reported, in the kubelet words and order', () => {
    const ok = { type: 'RuntimeReady', status: true, reason: '', message: '' };
    expect(
      runtimeReadinessErrors({
        conditions: [
          ok,
          {
            type: 'NetworkReady',
            status: false,
            reason: 'NetworkPluginNotReady',
            message: 'cni plugin not initialized',
          },
        ],
        unhealthy: { PLEG: 'pleg has yet to be successful' },
      }),
    ).toEqual([
      'PLEG is not healthy: pleg has yet to be successful',
      'container runtime network not ready: NetworkReady=false reason:NetworkPluginNotReady message:cni plugin not initialized',
    ]);
    expect(runtimeReadinessErrors({ conditions: undefined })).toEqual(['container runtime is down']);
    expect(runtimeReadinessErrors({ conditions: undefined, everChecked: false })).toEqual([
      'container runtime status check may not have completed yet',
    ]);
  });
});
