// Expectations from upstream's helpers_linux_test.go (TestResourceConfigForPod, the
// MilliCPUToShares/Quota tables) and the kubelet's getCPUWeight formula.
import { describe, expect, it } from 'vitest';
import {
  type CgroupPod,
  cpuSharesToWeight,
  milliCpuToQuota,
  milliCpuToShares,
  nodeAllocatableAbsolute,
  nodeAllocatableResourceConfig,
  qosResourceConfigs,
  type ResourceConfig,
  resourceConfigForPod,
} from '../src/index.js';

const Mi = 1024n * 1024n;
type List = Record<string, string>;
const list = (cpu: string, memory: string): List => ({
  ...(cpu === '' ? {} : { cpu }),
  ...(memory === '' ? {} : { memory }),
});
const container = (requests: List, limits: List, restartPolicy?: string) => ({
  resources: { requests, limits },
  ...(restartPolicy === undefined ? {} : { restartPolicy }),
});
const pod = (
  containers: ReturnType<typeof container>[],
  initContainers: ReturnType<typeof container>[] = [],
  overhead?: List,
): CgroupPod => ({
  metadata: { uid: 'u1' },
  spec: { containers, initContainers, ...(overhead === undefined ? {} : { overhead }) },
});
const cpuMem = (c: ResourceConfig) => ({
  cpuShares: c.cpuShares,
  cpuQuota: c.cpuQuota,
  cpuPeriod: c.cpuPeriod,
  memory: c.memory,
});
const expected = (e: Partial<ReturnType<typeof cpuMem>>) => ({
  cpuShares: undefined,
  cpuQuota: undefined,
  cpuPeriod: undefined,
  memory: undefined,
  ...e,
});

describe('resourceConfigForPod (upstream TestResourceConfigForPod)', () => {
  const period = 100_000n;
  const tuned = 5_000n;
  const cases: [string, CgroupPod, boolean, bigint, ReturnType<typeof expected>][] = [
    ['besteffort', pod([container(list('', ''), list('', ''))]), true, period, expected({ cpuShares: 2n })],
    [
      'burstable-no-limits',
      pod([container(list('100m', '100Mi'), list('', ''))]),
      true,
      period,
      expected({ cpuShares: 102n }),
    ],
    [
      'burstable-with-limits',
      pod([container(list('100m', '100Mi'), list('200m', '200Mi'))]),
      true,
      period,
      expected({ cpuShares: 102n, cpuQuota: 20_000n, cpuPeriod: period, memory: 200n * Mi }),
    ],
    [
      'burstable-with-limits-no-cpu-enforcement',
      pod([container(list('100m', '100Mi'), list('200m', '200Mi'))]),
      false,
      period,
      expected({ cpuShares: 102n, cpuQuota: -1n, cpuPeriod: period, memory: 200n * Mi }),
    ],
    [
      'burstable-partial-limits',
      pod([
        container(list('100m', '100Mi'), list('200m', '200Mi')),
        container(list('100m', '100Mi'), list('', '')),
      ]),
      true,
      period,
      expected({ cpuShares: 204n }),
    ],
    [
      'burstable-with-limits-with-tuned-quota',
      pod([container(list('100m', '100Mi'), list('200m', '200Mi'))]),
      true,
      tuned,
      expected({ cpuShares: 102n, cpuQuota: 1_000n, cpuPeriod: tuned, memory: 200n * Mi }),
    ],
    [
      'guaranteed',
      pod([container(list('100m', '100Mi'), list('100m', '100Mi'))]),
      true,
      period,
      expected({ cpuShares: 102n, cpuQuota: 10_000n, cpuPeriod: period, memory: 100n * Mi }),
    ],
    [
      'guaranteed-no-cpu-enforcement',
      pod([container(list('100m', '100Mi'), list('100m', '100Mi'))]),
      false,
      period,
      expected({ cpuShares: 102n, cpuQuota: -1n, cpuPeriod: period, memory: 100n * Mi }),
    ],
    [
      'burstable-partial-limits-with-init-containers',
      pod(
        [
          container(list('100m', '100m'), list('100m', '100Mi')),
          container(list('100m', '100m'), list('', '')),
        ],
        [
          container(list('100m', '100m'), list('100m', '100Mi')),
          container(list('100m', '100m'), list('', '')),
        ],
      ),
      true,
      tuned,
      expected({ cpuShares: 204n }),
    ],
  ];
  for (const [name, p, enforce, quotaPeriod, want] of cases) {
    it(name, () => {
      expect(
        cpuMem(resourceConfigForPod(p, { cpuCfsQuota: enforce, cpuCfsQuotaPeriodUs: quotaPeriod })),
      ).toEqual(want);
    });
  }

  it('adds the pod overhead to requests and to non-zero limits (PodRequests / PodLimits)', () => {
    const p = pod([container(list('100m', '100Mi'), list('100m', '100Mi'))], [], {
      cpu: '10m',
      memory: '10Mi',
    });
    expect(cpuMem(resourceConfigForPod(p))).toEqual(
      expected({
        cpuShares: milliCpuToShares(110n),
        cpuQuota: 11_000n,
        cpuPeriod: period,
        memory: 110n * Mi,
      }),
    );
  });

  it('an init container larger than the app containers sets the pod values (max vs sum)', () => {
    const p = pod(
      [
        container(list('100m', '64Mi'), list('100m', '64Mi')),
        container(list('100m', '64Mi'), list('100m', '64Mi')),
      ],
      [container(list('500m', '256Mi'), list('500m', '256Mi'))],
    );
    expect(cpuMem(resourceConfigForPod(p))).toEqual(
      expected({ cpuShares: 512n, cpuQuota: 50_000n, cpuPeriod: period, memory: 256n * Mi }),
    );
  });

  it('sidecars (restartPolicy Always) add to the app containers and to later init steps', () => {
    const p = pod(
      [container(list('200m', '100Mi'), list('200m', '100Mi'))],
      [
        container(list('100m', '50Mi'), list('100m', '50Mi'), 'Always'),
        container(list('250m', '100Mi'), list('250m', '100Mi')),
      ],
    );
    // sum = 200m + 100m (sidecar) = 300m; init step 2 = 250m + 100m sidecar = 350m → max 350m.
    expect(cpuMem(resourceConfigForPod(p))).toEqual(
      expected({
        cpuShares: milliCpuToShares(350n),
        cpuQuota: 35_000n,
        cpuPeriod: period,
        memory: 150n * Mi,
      }),
    );
  });

  it('pods pids limit and huge page requests', () => {
    const p = pod([
      {
        resources: {
          requests: { cpu: '1', memory: '1Gi', 'hugepages-2Mi': '4Mi' },
          limits: { cpu: '1', memory: '1Gi', 'hugepages-2Mi': '4Mi' },
        },
      },
    ]);
    const c = resourceConfigForPod(p, { podPidsLimit: 1024n });
    expect(c.pidsLimit).toBe(1024n);
    expect(c.hugePageLimits).toEqual(new Map([[2n * Mi, 4n * Mi]]));
    expect(resourceConfigForPod(p, { podPidsLimit: -1n }).pidsLimit).toBeUndefined();
  });
});

describe('shares, quota and weight conversions', () => {
  it('MilliCPUToShares (upstream table)', () => {
    expect(milliCpuToShares(0n)).toBe(2n);
    expect(milliCpuToShares(1n)).toBe(2n);
    expect(milliCpuToShares(250n)).toBe(256n);
    expect(milliCpuToShares(1000n)).toBe(1024n);
    expect(milliCpuToShares(300_000n)).toBe(262_144n);
  });

  it('MilliCPUToQuota: 0 without a limit, at least 1 ms', () => {
    expect(milliCpuToQuota(0n)).toBe(0n);
    expect(milliCpuToQuota(5n)).toBe(1_000n);
    expect(milliCpuToQuota(250n)).toBe(25_000n);
    expect(milliCpuToQuota(1500n)).toBe(150_000n);
  });

  it('cpu.weight from shares as the kubelet converts them (getCPUWeight)', () => {
    expect(cpuSharesToWeight(2n)).toBe(1n);
    expect(cpuSharesToWeight(256n)).toBe(10n); // a 250m request
    expect(cpuSharesToWeight(1024n)).toBe(39n);
    expect(cpuSharesToWeight(262_144n)).toBe(10_000n);
  });
});

describe('QoS tiers and node allocatable', () => {
  it('burstable shares sum the Burstable pods requests; besteffort stays at 2', () => {
    const burst = (cpu: string): CgroupPod => pod([container(list(cpu, '10Mi'), list('', ''))]);
    const guaranteed = pod([container(list('1', '1Gi'), list('1', '1Gi'))]);
    const c = qosResourceConfigs([burst('250m'), burst('500m'), guaranteed], []);
    expect(c.burstable.cpuShares).toBe(milliCpuToShares(750n));
    expect(c.besteffort.cpuShares).toBe(2n);
    expect(qosResourceConfigs([], []).burstable.cpuShares).toBe(2n);
  });

  it('kubepods gets capacity − system − kube reserved; the eviction threshold is not subtracted', () => {
    const list = nodeAllocatableAbsolute(
      { cpu: '4', memory: '16Gi', pid: '32768' },
      { cpu: '500m', memory: '512Mi' },
      { cpu: '100m', memory: '1Gi', pid: '1000' },
    );
    const c = nodeAllocatableResourceConfig(list, '0-3');
    expect(c.memory).toBe((16n * 1024n - 1024n - 512n) * Mi);
    expect(c.cpuShares).toBe(milliCpuToShares(3400n));
    expect(c.pidsLimit).toBe(31_768n);
    expect(c.cpuSet).toBe('0-3');
    expect(nodeAllocatableAbsolute({ memory: '1Gi' }, { memory: '2Gi' }).get('memory')).toBe(0n);
  });
});
