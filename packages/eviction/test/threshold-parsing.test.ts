// Threshold syntax as upstream's ParseThresholdConfig and the kubelet's flag types accept it,
// with upstream's error messages (pkg/kubelet/eviction/helpers.go, component-base cli/flag).
import { describe, expect, it } from 'vitest';
import {
  DEFAULT_EVICTION_HARD,
  formatThreshold,
  InvalidThresholdError,
  parseLangleSeparatedMap,
  parseMapStringString,
  parseThresholdConfig,
  thresholdQuantity,
  withContainerFsThresholds,
} from '../src/index.js';

describe('parseThresholdConfig', () => {
  it('uses the kubelet defaults (incl. imagefs.inodesFree) and copies hard memory to allocatable with enforceNodeAllocatable=pods', () => {
    expect(DEFAULT_EVICTION_HARD).toEqual({
      'memory.available': '100Mi',
      'nodefs.available': '10%',
      'nodefs.inodesFree': '5%',
      'imagefs.available': '15%',
      'imagefs.inodesFree': '5%',
    });
    const ts = parseThresholdConfig();
    expect(ts.map(formatThreshold)).toEqual([
      'memory.available<100Mi',
      'nodefs.available<10%',
      'nodefs.inodesFree<5%',
      'imagefs.available<15%',
      'imagefs.inodesFree<5%',
      'allocatableMemory.available<100Mi',
    ]);
    expect(ts.every((t) => t.gracePeriodMs === 0)).toBe(true);
    expect(parseThresholdConfig({ enforceNodeAllocatable: [] }).map((t) => t.signal)).not.toContain(
      'allocatableMemory.available',
    );
  });

  it('stores percentages as float32 fractions and resolves them as int64(capacity × fraction)', () => {
    const [t] = parseThresholdConfig({
      evictionHard: { 'nodefs.available': '10.5%' },
      enforceNodeAllocatable: [],
    });
    expect(t?.value.percentage).toBe(Math.fround(Math.fround(10.5) / 100));
    // float32(0.1) is 0.100000001490116…: upstream resolves 10% of 1e9 to 100000001, not 1e8.
    const [ten] = parseThresholdConfig({
      evictionHard: { 'nodefs.available': '10%' },
      enforceNodeAllocatable: [],
    });
    expect(thresholdQuantity(ten?.value ?? { percentage: 0 }, 1_000_000_000n)).toBe(100_000_001n);
  });

  it('skips 0% and 100% (disabled), rejects out-of-range percentages and non-positive quantities', () => {
    expect(
      parseThresholdConfig({ evictionHard: { 'memory.available': '0%', 'nodefs.available': '100%' } }),
    ).toEqual([]);
    expect(() => parseThresholdConfig({ evictionHard: { 'nodefs.available': '150%' } })).toThrow(
      'eviction percentage threshold nodefs.available must be <= 100%: 150%',
    );
    expect(() => parseThresholdConfig({ evictionHard: { 'nodefs.available': '-5%' } })).toThrow(
      'eviction percentage threshold nodefs.available must be >= 0%: -5%',
    );
    expect(() => parseThresholdConfig({ evictionHard: { 'memory.available': '0' } })).toThrow(
      'eviction threshold memory.available must be positive: 0',
    );
    expect(() => parseThresholdConfig({ evictionHard: { 'memory.available': '-1Gi' } })).toThrow(
      'eviction threshold memory.available must be positive: -1Gi',
    );
    expect(() => parseThresholdConfig({ evictionHard: { 'memory.available': 'lots' } })).toThrow(
      /^quantities must match the regular expression/,
    );
    expect(() => parseThresholdConfig({ evictionHard: { 'memory.available': 'x%' } })).toThrow(
      'strconv.ParseFloat: parsing "x": invalid syntax',
    );
  });

  it('rejects unknown signals in every map', () => {
    for (const key of [
      'evictionHard',
      'evictionSoft',
      'evictionSoftGracePeriod',
      'evictionMinimumReclaim',
    ] as const) {
      const err = (() => {
        try {
          parseThresholdConfig({ [key]: { 'mem.available': '1' } });
        } catch (e) {
          return e;
        }
        return undefined;
      })();
      expect(err).toBeInstanceOf(InvalidThresholdError);
      expect((err as Error).message).toBe('unsupported eviction signal mem.available');
    }
  });

  it('requires a grace period for every soft threshold; a negative or malformed one is refused', () => {
    expect(() => parseThresholdConfig({ evictionSoft: { 'memory.available': '1Gi' } })).toThrow(
      'grace period must be specified for the soft eviction threshold memory.available',
    );
    expect(() =>
      parseThresholdConfig({
        evictionSoft: { 'memory.available': '1Gi' },
        evictionSoftGracePeriod: { 'memory.available': '-30s' },
      }),
    ).toThrow('invalid eviction grace period specified: -30s, must be a positive value');
    expect(() =>
      parseThresholdConfig({
        evictionSoft: { 'memory.available': '1Gi' },
        evictionSoftGracePeriod: { 'memory.available': '30' },
      }),
    ).toThrow('time: invalid duration "30"');
    const ts = parseThresholdConfig({
      evictionHard: {},
      evictionSoft: { 'memory.available': '1Gi' },
      evictionSoftGracePeriod: { 'memory.available': '1m30s' },
    });
    expect(ts).toHaveLength(1);
    expect(ts[0]?.gracePeriodMs).toBe(90_000);
  });

  it('applies min-reclaim to hard and soft thresholds of the signal; 0 is fine, 0% and negatives are not', () => {
    const ts = parseThresholdConfig({
      evictionHard: { 'memory.available': '100Mi' },
      evictionSoft: { 'memory.available': '300Mi' },
      evictionSoftGracePeriod: { 'memory.available': '1m' },
      evictionMinimumReclaim: { 'memory.available': '500Mi' },
    });
    expect(ts.map((t) => [t.signal, t.minReclaim?.quantity?.value])).toEqual([
      ['memory.available', 500n * 1024n * 1024n],
      ['memory.available', 500n * 1024n * 1024n],
      ['allocatableMemory.available', 500n * 1024n * 1024n],
    ]);
    expect(() => parseThresholdConfig({ evictionMinimumReclaim: { 'memory.available': '0' } })).not.toThrow();
    expect(() => parseThresholdConfig({ evictionMinimumReclaim: { 'nodefs.available': '0%' } })).toThrow(
      'eviction percentage minimum reclaim nodefs.available must be positive: 0%',
    );
    expect(() => parseThresholdConfig({ evictionMinimumReclaim: { 'memory.available': '-1' } })).toThrow(
      'negative eviction minimum reclaim specified for memory.available',
    );
  });
});

describe('flag values', () => {
  it('--eviction-hard splits on "," and once on "<", trims, skips empty items', () => {
    expect(parseLangleSeparatedMap('memory.available<100Mi, nodefs.available < 10%,,')).toEqual({
      'memory.available': '100Mi',
      'nodefs.available': '10%',
    });
    expect(() => parseLangleSeparatedMap('memory.available=100Mi')).toThrow(
      'malformed pair, expect string<string',
    );
  });

  it('--eviction-soft-grace-period / --eviction-minimum-reclaim take signal=value pairs', () => {
    expect(parseMapStringString('memory.available=1m30s,nodefs.available=2m')).toEqual({
      'memory.available': '1m30s',
      'nodefs.available': '2m',
    });
    expect(() => parseMapStringString('memory.available<1m')).toThrow('malformed pair, expect string=string');
  });
});

describe('containerfs thresholds (UpdateContainerFsThresholds)', () => {
  it('are derived, never taken from the user: from nodefs on one filesystem, from imagefs with a dedicated one', () => {
    const ts = parseThresholdConfig({
      evictionHard: { 'nodefs.available': '10%', 'imagefs.available': '15%', 'containerfs.available': '50%' },
      enforceNodeAllocatable: [],
    });
    expect(withContainerFsThresholds(ts, false).map(formatThreshold)).toEqual([
      'nodefs.available<10%',
      'imagefs.available<15%',
      'containerfs.available<10%',
    ]);
    expect(withContainerFsThresholds(ts, true).map(formatThreshold)).toEqual([
      'nodefs.available<10%',
      'imagefs.available<15%',
      'containerfs.available<15%',
    ]);
  });
});
