import type { V1Container, V1Pod } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import { InvalidQuantityError, milliValue, quantityValue } from '../src/quantity.js';
import {
  containerLinuxResources,
  containerOomScoreAdjust,
  milliCpuToQuota,
  milliCpuToShares,
  podQosClass,
  podRequests,
  sandboxLinuxResources,
} from '../src/resources.js';

const GiB = 1024n ** 3n;

function pod(containers: V1Container[], initContainers: V1Container[] = []): V1Pod {
  return { metadata: { name: 'p', namespace: 'n', uid: 'u' }, spec: { containers, initContainers } };
}

describe('quantities', () => {
  it.each([
    ['100m', 100n, 1n],
    ['1', 1000n, 1n],
    ['0.5', 500n, 1n],
    ['1.5', 1500n, 2n],
    ['128Mi', 134217728000n, 134217728n],
    ['1G', 1000000000000n, 1000000000n],
    ['1e3', 1000000n, 1000n],
    ['1Ki', 1024000n, 1024n],
    ['0.1m', 1n, 1n],
  ])('%s → milli %s, value %s (rounded up)', (q, milli, value) => {
    expect(milliValue(q)).toBe(milli);
    expect(quantityValue(q)).toBe(value);
  });

  it('rejects garbage with a typed error', () => {
    expect(() => milliValue('12 cores')).toThrow(InvalidQuantityError);
  });
});

describe('CPU shares and quota (kubelet formulas)', () => {
  it.each([
    [0n, 2n],
    [1n, 2n],
    [100n, 102n],
    [250n, 256n],
    [1000n, 1024n],
    [1_000_000n, 262144n],
  ])('milliCpuToShares(%s) = %s', (milli, shares) => expect(milliCpuToShares(milli)).toBe(shares));

  it.each([
    [0n, 0n],
    [5n, 1000n],
    [10n, 1000n],
    [250n, 25000n],
    [1500n, 150000n],
  ])('milliCpuToQuota(%s) = %s', (milli, quota) => expect(milliCpuToQuota(milli)).toBe(quota));
});

describe('container resources', () => {
  it('burstable container: shares from request, quota from limit, memory limit, OOM score by request', () => {
    const c: V1Container = {
      name: 'a',
      resources: { requests: { cpu: '250m', memory: '1Gi' }, limits: { cpu: '500m', memory: '2Gi' } },
    };
    const r = containerLinuxResources(pod([c]), c, { memoryCapacityBytes: 8n * GiB });
    expect(r).toMatchObject({
      cpuShares: 256n,
      cpuQuota: 50000n,
      cpuPeriod: 100000n,
      memoryLimitInBytes: 2n * GiB,
      oomScoreAdj: 875n,
    });
  });

  it('a limit without a request sets the shares (request defaults to limit)', () => {
    const c: V1Container = { name: 'a', resources: { limits: { cpu: '2', memory: '1Gi' } } };
    const r = containerLinuxResources(pod([c]), c, { memoryCapacityBytes: 8n * GiB });
    expect(r.cpuShares).toBe(2048n);
    expect(r.oomScoreAdj).toBe(-997n); // Guaranteed once defaulted
  });

  it('best effort: minimal shares, no quota, OOM 1000; cfs quota can be disabled', () => {
    const c: V1Container = { name: 'a' };
    expect(containerLinuxResources(pod([c]), c, { memoryCapacityBytes: GiB })).toMatchObject({
      cpuShares: 2n,
      cpuQuota: 0n,
      memoryLimitInBytes: 0n,
      oomScoreAdj: 1000n,
    });
    const limited: V1Container = { name: 'a', resources: { limits: { cpu: '1' } } };
    expect(
      containerLinuxResources(pod([limited]), limited, { memoryCapacityBytes: GiB, cpuCfsQuota: false }),
    ).toMatchObject({
      cpuQuota: 0n,
      cpuPeriod: 0n,
    });
  });

  it.each([
    [[{ name: 'a' }], 'BestEffort'],
    [[{ name: 'a', resources: { limits: { cpu: '1', memory: '1Gi' } } }], 'Guaranteed'],
    [
      [
        {
          name: 'a',
          resources: { requests: { cpu: '1', memory: '1Gi' }, limits: { cpu: '1', memory: '1Gi' } },
        },
      ],
      'Guaranteed',
    ],
    [
      [{ name: 'a', resources: { requests: { cpu: '1' }, limits: { cpu: '2', memory: '1Gi' } } }],
      'Burstable',
    ],
    [[{ name: 'a', resources: { limits: { cpu: '1', memory: '1Gi' } } }, { name: 'b' }], 'Burstable'],
  ] as const)('QoS of %j is %s', (containers, qos) => {
    expect(podQosClass(pod(containers as unknown as V1Container[]))).toBe(qos);
  });

  it('burstable OOM score is clamped to [3, 999]', () => {
    const big: V1Container = { name: 'a', resources: { requests: { memory: '8Gi' } } };
    expect(containerOomScoreAdjust(pod([big]), big, 8n * GiB)).toBe(3);
    const tiny: V1Container = { name: 'a', resources: { requests: { memory: '1' } } };
    expect(containerOomScoreAdjust(pod([tiny]), tiny, 8n * GiB)).toBe(999);
  });
});

describe('pod-level requests with sidecars', () => {
  it('max(app + sidecars, largest init + sidecars before it)', () => {
    const p = pod(
      [{ name: 'app', resources: { requests: { cpu: '100m' } } }],
      [
        { name: 's1', restartPolicy: 'Always', resources: { requests: { cpu: '200m' } } },
        { name: 'init', resources: { requests: { cpu: '1' } } },
        { name: 's2', restartPolicy: 'Always', resources: { requests: { cpu: '50m' } } },
      ],
    );
    expect(podRequests(p).cpuMilli).toBe(1200n);
    const sandbox = sandboxLinuxResources(p);
    expect(sandbox.cpuShares).toBe(milliCpuToShares(1200n));
  });
});
