// The kubelet container rules the prober keeps: $(VAR) expansion (upstream expansion_test
// cases), sidecars, and the grace period of probe kills (upstream setTerminationGracePeriod).
import type { V1Pod } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import { expand, probeKillGracePeriodSeconds } from '../src/container-rules.js';

describe('expand', () => {
  const env = new Map([
    ['VAR_A', 'A'],
    ['VAR_EMPTY', ''],
  ]);
  const lookup = (n: string) => env.get(n);
  it.each([
    ['$(VAR_A)', 'A'],
    ['___$(VAR_A)___', '___A___'],
    ['$(VAR_EMPTY)', ''],
    ['$(UNKNOWN)', '$(UNKNOWN)'],
    ['$$(VAR_A)', '$(VAR_A)'],
    ['$$$$', '$$'],
    ['$(VAR_A', '$(VAR_A'],
    ['$VAR_A', '$VAR_A'],
    ['trailing $', 'trailing $'],
  ])('%s → %s', (input, want) => expect(expand(input, lookup)).toBe(want));
});

describe('probeKillGracePeriodSeconds', () => {
  const pod = (spec: number | undefined, probe: number | undefined, deletion?: number): V1Pod => ({
    metadata: { name: 'p', ...(deletion === undefined ? {} : { deletionGracePeriodSeconds: deletion }) },
    spec: {
      ...(spec === undefined ? {} : { terminationGracePeriodSeconds: spec }),
      containers: [
        {
          name: 'c',
          livenessProbe: { ...(probe === undefined ? {} : { terminationGracePeriodSeconds: probe }) },
        },
      ],
    },
  });
  const c = (p: V1Pod) => p.spec?.containers[0] as NonNullable<V1Pod['spec']>['containers'][number];
  it('deletion grace first, then the probe-level value, then the pod value, else 2', () => {
    expect(probeKillGracePeriodSeconds(pod(30, 5, 7), c(pod(30, 5, 7)), 'liveness')).toBe(7);
    expect(probeKillGracePeriodSeconds(pod(30, 5), c(pod(30, 5)), 'liveness')).toBe(5);
    expect(probeKillGracePeriodSeconds(pod(30, undefined), c(pod(30, undefined)), 'liveness')).toBe(30);
    expect(probeKillGracePeriodSeconds(pod(30, 5), c(pod(30, 5)), 'startup')).toBe(30);
    expect(probeKillGracePeriodSeconds(pod(undefined, 5), c(pod(undefined, 5)), 'liveness')).toBe(2);
  });
});
