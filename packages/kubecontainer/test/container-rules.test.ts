// The container rules shared by the runtime manager and the prober: $(VAR) expansion (upstream
// third_party/forked/golang/expansion expand_test cases), ExpandContainerCommandOnlyStatic
// (upstream helpers_test), sidecars, and the kill grace period (upstream setTerminationGracePeriod).
import type { V1Container, V1Pod } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import {
  expand,
  expandContainerCommandOnlyStatic,
  isRestartableInitContainer,
  terminationGracePeriodSeconds,
} from '../src/index.js';

describe('expand', () => {
  const env = new Map([
    ['VAR_A', 'A'],
    ['VAR_EMPTY', ''],
  ]);
  const lookup = (n: string) => env.get(n);
  it.each([
    ['$(VAR_A)', 'A'],
    ['___$(VAR_A)___', '___A___'],
    ['$(VAR_A)$(VAR_A)', 'AA'],
    ['$(VAR_EMPTY)', ''],
    ['$(UNKNOWN)', '$(UNKNOWN)'],
    ['$$(VAR_A)', '$(VAR_A)'],
    ['$$$$', '$$'],
    ['$(VAR_A', '$(VAR_A'],
    ['$VAR_A', '$VAR_A'],
    ['a$b', 'a$b'],
    ['$', '$'],
    ['trailing $', 'trailing $'],
  ])('%s → %s', (input, want) => expect(expand(input, lookup)).toBe(want));
});

describe('expandContainerCommandOnlyStatic', () => {
  it('uses literal env values only; valueFrom entries expand to empty; unknown kept', () => {
    const env = [
      { name: 'GREETING', value: 'hi' },
      { name: 'FROM_FIELD', valueFrom: { fieldRef: { fieldPath: 'metadata.name' } } },
    ];
    expect(
      expandContainerCommandOnlyStatic(['echo', '$(GREETING)', '[$(FROM_FIELD)]', '$(NOPE)'], env),
    ).toEqual(['echo', 'hi', '[]', '$(NOPE)']);
  });
  it('no env: the command as written', () => {
    expect(expandContainerCommandOnlyStatic(['cat', '$(X)'], undefined)).toEqual(['cat', '$(X)']);
  });
});

describe('isRestartableInitContainer', () => {
  it('only restartPolicy Always makes a sidecar', () => {
    expect(isRestartableInitContainer({ name: 'a', restartPolicy: 'Always' })).toBe(true);
    expect(isRestartableInitContainer({ name: 'a' })).toBe(false);
  });
});

describe('terminationGracePeriodSeconds', () => {
  const pod = (spec: number | undefined, probe: number | undefined, deletion?: number): V1Pod => ({
    metadata: { name: 'p', ...(deletion === undefined ? {} : { deletionGracePeriodSeconds: deletion }) },
    spec: {
      ...(spec === undefined ? {} : { terminationGracePeriodSeconds: spec }),
      containers: [
        {
          name: 'c',
          livenessProbe: { ...(probe === undefined ? {} : { terminationGracePeriodSeconds: probe }) },
          startupProbe: { ...(probe === undefined ? {} : { terminationGracePeriodSeconds: probe + 1 }) },
        },
      ],
    },
  });
  const c = (p: V1Pod) => p.spec?.containers[0] as V1Container;
  const grace = (p: V1Pod, r: Parameters<typeof terminationGracePeriodSeconds>[2]) =>
    terminationGracePeriodSeconds(p, c(p), r);
  it('deletion grace first, then the failing probe value, then the pod value, else 2', () => {
    expect(grace(pod(30, 5, 7), 'LivenessProbe')).toBe(7);
    expect(grace(pod(30, 5), 'LivenessProbe')).toBe(5);
    expect(grace(pod(30, 5), 'StartupProbe')).toBe(6);
    expect(grace(pod(30, undefined), 'LivenessProbe')).toBe(30);
    expect(grace(pod(30, 5), '')).toBe(30);
    expect(grace(pod(30, 5), 'FailedPostStartHook')).toBe(30);
    expect(grace(pod(undefined, 5), 'LivenessProbe')).toBe(2);
  });
});
