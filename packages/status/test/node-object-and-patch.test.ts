// The flag parsers, addresses, label reconcile, and the two-way strategic patch the writes use.
import { describe, expect, it } from 'vitest';
import {
  defaultLabelsToReconcile,
  InvalidNodeFlagError,
  nodeAddresses,
  normalizePodStatus,
  parseNodeLabels,
  parseTaints,
  podStatusPatch,
  twoWayMergePatch,
} from '../src/index.js';

describe('--node-labels and --register-with-taints', () => {
  it('parse the kubelet formats', () => {
    expect(parseNodeLabels('a=b, example.com/tier=edge,empty=')).toEqual({
      a: 'b',
      'example.com/tier': 'edge',
      empty: '',
    });
    expect(parseTaints('dedicated=edge:NoSchedule,gpu:NoExecute')).toEqual([
      { key: 'dedicated', value: 'edge', effect: 'NoSchedule' },
      { key: 'gpu', effect: 'NoExecute' },
    ]);
  });
  it.each([
    [() => parseNodeLabels('novalue'), /--node-labels: expected key=value/],
    [() => parseNodeLabels('bad key=x'), /invalid label key "bad key"/],
    [() => parseTaints('k=v'), /expected key\[=value\]:Effect/],
    [() => parseTaints('k:Never'), /invalid taint effect "Never"/],
  ])('reject bad input naming the flag (%#)', (fn, message) => {
    expect(fn).toThrow(InvalidNodeFlagError);
    expect(fn).toThrow(message);
  });
});

describe('node addresses and labels', () => {
  it('lists each --node-ip as InternalIP, then the Hostname', () => {
    expect(nodeAddresses(['10.0.0.5', 'fd00::5'], '192.168.1.1', 'n1')).toEqual([
      { type: 'InternalIP', address: '10.0.0.5' },
      { type: 'InternalIP', address: 'fd00::5' },
      { type: 'Hostname', address: 'n1' },
    ]);
    expect(nodeAddresses([], '192.168.1.1', 'n1')[0]).toEqual({ type: 'InternalIP', address: '192.168.1.1' });
  });
  it('reconciles only default labels that are missing or different', () => {
    expect(
      defaultLabelsToReconcile(
        { 'kubernetes.io/os': 'linux', 'kubernetes.io/arch': 'arm64' },
        {
          metadata: { labels: { 'kubernetes.io/os': 'linux', 'kubernetes.io/arch': 'amd64', other: 'x' } },
        },
      ),
    ).toEqual({ 'kubernetes.io/arch': 'arm64' });
  });
});

describe('two-way strategic merge patch', () => {
  it('patches keyed lists per item with $setElementOrder and deletes vanished items', () => {
    expect(
      twoWayMergePatch(
        { podIPs: [{ ip: '10.0.0.1' }, { ip: 'fd00::1' }], hostIP: 'a' },
        { podIPs: [{ ip: '10.0.0.2' }] },
        { podIPs: 'ip' },
      ),
    ).toEqual({
      '$setElementOrder/podIPs': [{ ip: '10.0.0.2' }],
      podIPs: [{ ip: '10.0.0.2' }, { ip: '10.0.0.1', $patch: 'delete' }, { ip: 'fd00::1', $patch: 'delete' }],
      hostIP: null,
    });
  });
  it('replaces container statuses whole and diffs nested objects field by field', () => {
    const patch = twoWayMergePatch(
      { containerStatuses: [{ name: 'a', ready: false }], qos: { x: 1, y: 2 } },
      { containerStatuses: [{ name: 'a', ready: true }], qos: { x: 1, y: 3 } },
    );
    expect(patch).toEqual({ containerStatuses: [{ name: 'a', ready: true }], qos: { y: 3 } });
  });
  it('is "unchanged" when only representation differs (sub-second times, empty values, order)', () => {
    const api = normalizePodStatus(undefined, {
      phase: 'Running',
      message: '',
      startTime: '2025-01-01T00:00:00Z' as unknown as Date,
      containerStatuses: [
        { name: 'b', image: 'i', imageID: '', ready: true, restartCount: 0, lastState: {} },
        { name: 'a', image: 'i', imageID: '', ready: true, restartCount: 0 },
      ],
    });
    const ours = normalizePodStatus(undefined, {
      phase: 'Running',
      startTime: new Date(Date.UTC(2025, 0, 1, 0, 0, 0, 999)),
      containerStatuses: [
        { name: 'a', image: 'i', imageID: '', ready: true, restartCount: 0 },
        { name: 'b', image: 'i', imageID: '', ready: true, restartCount: 0 },
      ],
    });
    expect(podStatusPatch('u', api, ours)).toEqual({ patch: { metadata: { uid: 'u' } }, unchanged: true });
  });
});
