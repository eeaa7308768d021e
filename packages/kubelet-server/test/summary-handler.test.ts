// The CPU-and-memory cut of a Summary for providers without getCpuAndMemory: exactly the
// fields upstream's GetCPUAndMemoryStats fills (summary.go; its test asserts network, fs,
// runtime, rlimit, volumes, ephemeral storage, rootfs, logs, accelerators are absent).
import type { Summary } from '@nodeagent/stats';
import { describe, expect, it } from 'vitest';
import { cpuAndMemoryOnly, onlyCpuAndMemoryRequested } from '../src/summary-handler.js';

const t = '2026-01-01T00:00:00Z';
const fs = { time: t, usedBytes: 1, capacityBytes: 2, availableBytes: 1 };
const cpu = { time: t, usageCoreNanoSeconds: 5 };
const memory = { time: t, workingSetBytes: 7 };
const swap = { time: t, swapUsageBytes: 0 };
const full: Summary = {
  node: {
    nodeName: 'n1',
    startTime: t,
    cpu,
    memory,
    swap,
    network: { time: t, name: 'eth0', rxBytes: 1 },
    fs,
    runtime: { imageFs: fs },
    rlimit: { time: t, maxpid: 10 },
    io: { time: t },
    systemContainers: [
      { name: 'pods', startTime: t, cpu, memory, rootfs: fs, logs: fs, userDefinedMetrics: [] },
    ],
  },
  pods: [
    {
      podRef: { name: 'p', namespace: 'default', uid: 'u' },
      startTime: t,
      cpu,
      memory,
      swap,
      network: { time: t, name: 'eth0' },
      volume: [{ ...fs, name: 'data' }],
      'ephemeral-storage': fs,
      process_stats: { process_count: 3 },
      containers: [{ name: 'c', startTime: t, cpu, memory, swap, rootfs: fs, logs: fs, accelerators: [] }],
    },
  ],
} as Summary;

describe('only_cpu_and_memory', () => {
  it('keeps exactly the fields of upstream GetCPUAndMemoryStats', () => {
    const s = cpuAndMemoryOnly(full);
    expect(Object.keys(s.node).sort()).toEqual(
      ['cpu', 'memory', 'nodeName', 'startTime', 'swap', 'systemContainers'].sort(),
    );
    expect(Object.keys(s.node.systemContainers?.[0] ?? {}).sort()).toEqual(
      ['cpu', 'memory', 'name', 'startTime'].sort(),
    );
    expect(Object.keys(s.pods[0] ?? {}).sort()).toEqual(
      ['containers', 'cpu', 'memory', 'podRef', 'startTime', 'swap'].sort(),
    );
    expect(s.pods[0]?.containers[0]).toEqual({ name: 'c', startTime: t, cpu, memory, swap });
  });

  it('is asked by one only_cpu_and_memory=true, nothing else', () => {
    const q = (s: string) => onlyCpuAndMemoryRequested(new URLSearchParams(s));
    expect(q('only_cpu_and_memory=true')).toBe(true);
    expect(q('only_cpu_and_memory=1')).toBe(false);
    expect(q('only_cpu_and_memory=true&only_cpu_and_memory=true')).toBe(false);
    expect(q('')).toBe(false);
  });
});
