// The kubelet's pod condition types (upstream pkg/kubelet/types/pod_status.go and its test) and
// setting one condition of a type.
import { describe, expect, it } from 'vitest';
import {
  POD_CONDITIONS_BY_KUBELET,
  podConditionByKubelet,
  podConditionSharedByKubelet,
  setPodCondition,
} from '../src/index.js';

describe('pod conditions the kubelet owns', () => {
  it('owns the seven types of upstream and nothing else', () => {
    expect([...POD_CONDITIONS_BY_KUBELET].sort()).toEqual([
      'ContainersReady',
      'Initialized',
      'PodReadyToStartContainers',
      'PodResizeInProgress',
      'PodResizePending',
      'PodScheduled',
      'Ready',
    ]);
    for (const t of POD_CONDITIONS_BY_KUBELET) expect(podConditionByKubelet(t)).toBe(true);
    for (const t of ['DisruptionTarget', 'example.com/custom', 'ready', '']) {
      expect(podConditionByKubelet(t)).toBe(false);
    }
  });

  it('shares DisruptionTarget only', () => {
    expect(podConditionSharedByKubelet('DisruptionTarget')).toBe(true);
    for (const t of ['Ready', 'PodScheduled', 'example.com/custom']) {
      expect(podConditionSharedByKubelet(t)).toBe(false);
    }
  });
});

describe('setPodCondition', () => {
  it('replaces the condition of the same type where it stands', () => {
    const conditions = [
      { type: 'Ready', status: 'True' },
      { type: 'DisruptionTarget', status: 'False' },
      { type: 'PodScheduled', status: 'True' },
    ];
    setPodCondition(conditions, { type: 'DisruptionTarget', status: 'True' });
    expect(conditions).toEqual([
      { type: 'Ready', status: 'True' },
      { type: 'DisruptionTarget', status: 'True' },
      { type: 'PodScheduled', status: 'True' },
    ]);
  });

  it('appends a condition of a new type', () => {
    const conditions = [{ type: 'Ready', status: 'True' }];
    setPodCondition(conditions, { type: 'DisruptionTarget', status: 'True' });
    expect(conditions.map((c) => c.type)).toEqual(['Ready', 'DisruptionTarget']);
    const empty: { type: string }[] = [];
    setPodCondition(empty, { type: 'Ready' });
    expect(empty).toEqual([{ type: 'Ready' }]);
  });
});
