import { describe, expect, it } from 'vitest';
import {
  CgroupError,
  cgroupPath,
  expandSlice,
  newCgroupName,
  parseCgroupfs,
  parseSystemd,
  toCgroupfs,
  toSystemd,
} from '../src/index.js';

describe('cgroup names as the kubelet spells them', () => {
  it('systemd expands nested slices and escapes "-" as "_" (upstream ToSystemd doc example)', () => {
    expect(toSystemd(['kubepods', 'burstable', 'pod1234-abcd-5678-efgh'])).toBe(
      '/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod1234_abcd_5678_efgh.slice',
    );
    expect(toSystemd(['kubepods', 'pod1234-abcd'])).toBe('/kubepods.slice/kubepods-pod1234_abcd.slice');
    expect(toSystemd([])).toBe('/');
  });

  it('cgroupfs joins the components', () => {
    expect(toCgroupfs(['kubepods', 'besteffort', 'pod1234-abcd'])).toBe('/kubepods/besteffort/pod1234-abcd');
    expect(toCgroupfs([])).toBe('/');
    expect(cgroupPath(['a', 'b'], 'cgroupfs')).toBe('/a/b');
  });

  it('parses both forms back', () => {
    expect(parseCgroupfs('/kubepods/burstable/pod1')).toEqual(['kubepods', 'burstable', 'pod1']);
    expect(parseCgroupfs('/')).toEqual([]);
    expect(
      parseSystemd('/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod12_34.slice'),
    ).toEqual(['kubepods', 'burstable', 'pod12-34']);
  });

  it('expandSlice follows systemd (root, nesting, invalid names)', () => {
    expect(expandSlice('-.slice')).toBe('/');
    expect(expandSlice('a-b-c.slice')).toBe('/a.slice/a-b.slice/a-b-c.slice');
    for (const bad of ['a--b.slice', '-a.slice', 'a-.slice', 'a.scope', 'a/b.slice']) {
      expect(() => expandSlice(bad)).toThrow(CgroupError);
    }
  });

  it('refuses "/" and "_" in a component (upstream NewCgroupName)', () => {
    expect(() => newCgroupName(['kubepods'], 'pod_1')).toThrow(/invalid character in component "pod_1"/);
    expect(() => newCgroupName(['kubepods'], 'a/b')).toThrow(CgroupError);
    expect(newCgroupName(['kubepods'], 'burstable')).toEqual(['kubepods', 'burstable']);
  });
});
