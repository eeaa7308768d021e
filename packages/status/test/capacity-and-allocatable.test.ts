// Capacity from the machine (fixture /proc, /sys, /etc) and allocatable = capacity − kube-reserved
// − system-reserved − hard eviction (memory.available 100Mi, nodefs.available 10 %), as upstream.
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import {
  InvalidReservationError,
  type MachineInfo,
  nodeAllocatable,
  nodeCapacity,
  parseReservation,
  readMachineInfo,
} from '../src/index.js';

const HOST = fileURLToPath(new URL('./fixtures/host', import.meta.url));

function machine(over: Partial<MachineInfo> = {}): MachineInfo {
  return {
    cpus: 2,
    memoryBytes: 16 * 1024 ** 3,
    hugePages: {},
    ephemeralStorageBytes: 100 * 1024 ** 3,
    arch: 'amd64',
    os: 'linux',
    kernelVersion: '6.1.0',
    osImage: 'Debian',
    machineId: 'm',
    systemUuid: 's',
    bootId: 'b',
    hostname: 'h',
    internalIp: '10.0.0.5',
    ...over,
  };
}

describe('readMachineInfo', () => {
  it('reads CPUs, MemTotal, huge pages and the identity files from the given roots', () => {
    const m = readMachineInfo({
      procRoot: `${HOST}/proc`,
      sysRoot: `${HOST}/sys`,
      etcRoot: `${HOST}/etc`,
      rootDir: HOST,
      interfaces: {
        lo: [{ address: '127.0.0.1', family: 'IPv4', internal: true } as never],
        eth0: [{ address: '192.168.1.7', family: 'IPv4', internal: false } as never],
      },
    });
    expect(m).toMatchObject({
      cpus: 2,
      memoryBytes: 16331052 * 1024,
      hugePages: { [2 * 1024 * 1024]: 4 * 1024 * 1024, [1024 ** 3]: 0 },
      kernelVersion: '6.1.0-test',
      osImage: 'Debian GNU/Linux 12 (bookworm)',
      machineId: 'abc123machine',
      systemUuid: '4c4c-uuid',
      bootId: '0f0e-boot',
      hostname: 'fixture-host',
      internalIp: '192.168.1.7',
    });
    expect(m.ephemeralStorageBytes).toBeGreaterThan(0);
  });

  it('reports capacity like the kubelet: cpu, memory in Ki, huge pages by size, pods', () => {
    const m = readMachineInfo({
      procRoot: `${HOST}/proc`,
      sysRoot: `${HOST}/sys`,
      etcRoot: `${HOST}/etc`,
      rootDir: HOST,
    });
    const cap = nodeCapacity({ ...m, ephemeralStorageBytes: 100 * 1024 ** 3 });
    expect(cap).toEqual({
      cpu: '2',
      memory: '16331052Ki',
      'ephemeral-storage': '100Gi',
      'hugepages-2Mi': '4Mi',
      'hugepages-1Gi': '0',
      pods: '110',
    });
    // memory − 100Mi hard eviction − 4Mi of huge pages
    expect(nodeAllocatable(cap).memory).toBe(`${16331052 - 102400 - 4096}Ki`);
  });
});

describe('nodeAllocatable', () => {
  it('matches the kubelet docs example: 16Gi − 1Gi kube − 500Mi system − 100Mi eviction = 14760Mi (≈14.4Gi)', () => {
    const cap = nodeCapacity(machine());
    const alloc = nodeAllocatable(cap, {
      kubeReserved: { memory: '1Gi' },
      systemReserved: { memory: '500Mi' },
    });
    expect(alloc.memory).toBe('14760Mi');
  });

  it('takes reserved CPU in millicores and leaves pods alone', () => {
    const alloc = nodeAllocatable(nodeCapacity(machine(), 30), { kubeReserved: { cpu: '100m' } });
    expect(alloc.cpu).toBe('1900m');
    expect(alloc.pods).toBe('30');
  });

  it('reserves nodefs.available 10 % of ephemeral storage as a truncated float32 fraction (upstream GetThresholdQuantity)', () => {
    const alloc = nodeAllocatable(nodeCapacity(machine()));
    // 107374182400 × float32(0.1) = 10737418400 (not 10737418240)
    expect(alloc['ephemeral-storage']).toBe(String(107374182400 - 10737418400));
  });

  it('clamps at zero and follows a custom evictionHard', () => {
    const alloc = nodeAllocatable(nodeCapacity(machine({ memoryBytes: 64 * 1024 ** 2 })), {
      evictionHard: { 'memory.available': '1Gi' },
    });
    expect(alloc.memory).toBe('0');
    expect(alloc['ephemeral-storage']).toBe('100Gi');
  });
});

describe('parseReservation', () => {
  it('parses the kubelet flag format', () => {
    expect(parseReservation('cpu=200m, memory=512Mi,ephemeral-storage=1Gi,pid=1000')).toEqual({
      cpu: '200m',
      memory: '512Mi',
      'ephemeral-storage': '1Gi',
      pid: '1000',
    });
  });
  it.each([
    ['cpu', /expected name=quantity/],
    ['gpu=1', /unsupported resource "gpu"/],
    ['memory=lots', /--system-reserved: .*invalid quantity "lots"/],
  ])('rejects %j naming the flag', (text, message) => {
    expect(() => parseReservation(text, '--system-reserved')).toThrow(InvalidReservationError);
    expect(() => parseReservation(text, '--system-reserved')).toThrow(message);
  });
});
