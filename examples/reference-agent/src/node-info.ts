/**
 * What the agent says about its machine in the Node object: labels, capacity and
 * allocatable (cpu, memory, pods), addresses, and `nodeInfo` — read from `node:os` and a few
 * files under /etc and /proc, as the kubelet reads them from cAdvisor and the host.
 *
 * @module
 */
import { readFileSync } from 'node:fs';
import os from 'node:os';
import type { V1Node, V1NodeAddress, V1NodeSystemInfo } from '@kubernetes/client-node';

/** The kubelet version the reference agent reports (`nodeInfo.kubeletVersion`). */
export const KUBELET_VERSION = 'v1.34.0-nodeagent';

/** The kubelet's default `maxPods`. */
export const DEFAULT_MAX_PODS = 110;

/** Facts about the machine; every field can be given (tests), else it is read from the host. */
export interface MachineInfo {
  /** Logical CPUs. */
  readonly cpus: number;
  /** Physical memory, bytes. */
  readonly memoryBytes: number;
  /** `kubernetes.io/arch` value (`amd64`, `arm64`, …). */
  readonly arch: string;
  /** Kernel release (`uname -r`). */
  readonly kernelVersion: string;
  /** `PRETTY_NAME` of /etc/os-release, or `Linux`. */
  readonly osImage: string;
  /** /etc/machine-id, or `''`. */
  readonly machineId: string;
  /** /proc/sys/kernel/random/boot_id, or `''`. */
  readonly bootId: string;
  /** The first non-loopback IPv4 address, else 127.0.0.1. */
  readonly internalIp: string;
  /** The host name. */
  readonly hostname: string;
}

const ARCH: Readonly<Record<string, string>> = {
  x64: 'amd64',
  arm64: 'arm64',
  arm: 'arm',
  ia32: '386',
  ppc64: 'ppc64le',
  s390x: 's390x',
};

function readTrimmed(path: string): string {
  try {
    return readFileSync(path, 'utf8').trim();
  } catch {
    return '';
  }
}

function osImage(): string {
  const release = readTrimmed('/etc/os-release');
  const m = /^PRETTY_NAME="?([^"\n]*)"?$/m.exec(release);
  return m?.[1] ?? 'Linux';
}

function firstIpv4(): string {
  for (const addrs of Object.values(os.networkInterfaces())) {
    for (const a of addrs ?? []) if (a.family === 'IPv4' && !a.internal) return a.address;
  }
  return '127.0.0.1';
}

/** Reads the machine's facts from the host. */
export function readMachineInfo(): MachineInfo {
  return {
    cpus: os.availableParallelism(),
    memoryBytes: os.totalmem(),
    arch: ARCH[process.arch] ?? process.arch,
    kernelVersion: os.release(),
    osImage: osImage(),
    machineId: readTrimmed('/etc/machine-id'),
    bootId: readTrimmed('/proc/sys/kernel/random/boot_id'),
    internalIp: firstIpv4(),
    hostname: os.hostname(),
  };
}

/** Capacity (= allocatable: the agent reserves nothing) in the API's quantity format. */
export function machineCapacity(machine: MachineInfo, maxPods: number): Record<string, string> {
  return {
    cpu: String(machine.cpus),
    memory: `${Math.floor(machine.memoryBytes / 1024)}Ki`,
    pods: String(maxPods),
  };
}

/** The node's addresses: InternalIP (given or detected) and Hostname. */
export function nodeAddresses(machine: MachineInfo, nodeIp: string | undefined): V1NodeAddress[] {
  return [
    { type: 'InternalIP', address: nodeIp ?? machine.internalIp },
    { type: 'Hostname', address: machine.hostname },
  ];
}

/** `status.nodeInfo` with the runtime's version (`<runtimeName>://<runtimeVersion>`). */
export function nodeSystemInfo(machine: MachineInfo, containerRuntimeVersion: string): V1NodeSystemInfo {
  return {
    architecture: machine.arch,
    bootID: machine.bootId,
    containerRuntimeVersion,
    kernelVersion: machine.kernelVersion,
    kubeProxyVersion: '',
    kubeletVersion: KUBELET_VERSION,
    machineID: machine.machineId,
    operatingSystem: 'linux',
    osImage: machine.osImage,
    systemUUID: machine.machineId,
  };
}

/** The Node object the agent registers (upstream `initialNode`): labels, podCIDR, capacity. */
export function initialNode(
  nodeName: string,
  machine: MachineInfo,
  options: {
    readonly podCidr?: string | undefined;
    readonly maxPods: number;
    readonly nodeIp?: string | undefined;
  },
): V1Node {
  const capacity = machineCapacity(machine, options.maxPods);
  return {
    apiVersion: 'v1',
    kind: 'Node',
    metadata: {
      name: nodeName,
      labels: {
        'kubernetes.io/hostname': nodeName,
        'kubernetes.io/os': 'linux',
        'kubernetes.io/arch': machine.arch,
        'beta.kubernetes.io/os': 'linux',
        'beta.kubernetes.io/arch': machine.arch,
      },
    },
    spec: options.podCidr === undefined ? {} : { podCIDR: options.podCidr, podCIDRs: [options.podCidr] },
    status: {
      capacity,
      allocatable: { ...capacity },
      addresses: nodeAddresses(machine, options.nodeIp),
    },
  };
}
