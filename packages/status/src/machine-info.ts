/**
 * The machine facts the node status reports (what the kubelet gets from cAdvisor and the
 * host): CPUs, memory from /proc/meminfo, huge pages from sysfs, ephemeral storage from a
 * statfs of the root directory, and the identity files. Every path has a root that tests
 * point at fixture files.
 *
 * @module
 */
import { readdirSync, readFileSync, statfsSync } from 'node:fs';
import os from 'node:os';
import { join } from 'node:path';

/** Facts about the machine. */
export interface MachineInfo {
  /** Logical CPUs. */
  readonly cpus: number;
  /** Physical memory (MemTotal), bytes. */
  readonly memoryBytes: number;
  /** Huge pages by page size in bytes → total bytes (page size × nr_hugepages). */
  readonly hugePages: Readonly<Record<number, number>>;
  /** Size of the filesystem holding the root directory, bytes. */
  readonly ephemeralStorageBytes: number;
  /** `kubernetes.io/arch` value (`amd64`, `arm64`, …). */
  readonly arch: string;
  /** `kubernetes.io/os` value. */
  readonly os: string;
  /** Kernel release (`uname -r`). */
  readonly kernelVersion: string;
  /** `PRETTY_NAME` of os-release, or `Linux`. */
  readonly osImage: string;
  /** machine-id, or `''`. */
  readonly machineId: string;
  /** DMI product UUID, or `''` when unreadable. */
  readonly systemUuid: string;
  /** The boot ID, or `''`. */
  readonly bootId: string;
  /** The host name. */
  readonly hostname: string;
  /** The first non-loopback IPv4 address, else the first IPv6, else `127.0.0.1`. */
  readonly internalIp: string;
}

/** Where {@link readMachineInfo} reads; tests point these at fixture trees. */
export interface MachineInfoSources {
  /** @default '/proc' */
  readonly procRoot?: string;
  /** @default '/sys' */
  readonly sysRoot?: string;
  /** @default '/etc' */
  readonly etcRoot?: string;
  /** The directory whose filesystem is the node's ephemeral storage (upstream: the kubelet root dir's). @default '/' */
  readonly rootDir?: string;
  /** Network interfaces. @default os.networkInterfaces() */
  readonly interfaces?: NodeJS.Dict<os.NetworkInterfaceInfo[]>;
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

/** MemTotal of a /proc/meminfo text, bytes (0 when absent). */
export function parseMemTotal(meminfo: string): number {
  const m = /^MemTotal:\s+(\d+)\s*kB$/m.exec(meminfo);
  return m === null ? 0 : Number(m[1]) * 1024;
}

function hugePages(sysRoot: string): Record<number, number> {
  const dir = join(sysRoot, 'kernel/mm/hugepages');
  const out: Record<number, number> = {};
  let entries: string[];
  try {
    entries = readdirSync(dir);
  } catch {
    return out;
  }
  for (const e of entries) {
    const m = /^hugepages-(\d+)kB$/.exec(e);
    if (m === null) continue;
    const pageBytes = Number(m[1]) * 1024;
    const count = Number(readTrimmed(join(dir, e, 'nr_hugepages')) || '0');
    out[pageBytes] = pageBytes * count;
  }
  return out;
}

function cpuCount(procRoot: string): number {
  const n = (readTrimmed(join(procRoot, 'cpuinfo')).match(/^processor\s*:/gm) ?? []).length;
  return n > 0 ? n : os.availableParallelism();
}

function firstAddress(interfaces: NodeJS.Dict<os.NetworkInterfaceInfo[]>): string {
  const all = Object.values(interfaces).flatMap((a) => a ?? []);
  const v4 = all.find((a) => a.family === 'IPv4' && !a.internal);
  const v6 = all.find((a) => a.family === 'IPv6' && !a.internal && !a.address.startsWith('fe80'));
  return v4?.address ?? v6?.address ?? '127.0.0.1';
}

/** Reads the machine's facts (synchronously; a handful of small files and one statfs). */
export function readMachineInfo(sources: MachineInfoSources = {}): MachineInfo {
  const proc = sources.procRoot ?? '/proc';
  const sys = sources.sysRoot ?? '/sys';
  const etc = sources.etcRoot ?? '/etc';
  let ephemeral = 0;
  try {
    const s = statfsSync(sources.rootDir ?? '/');
    ephemeral = s.blocks * s.bsize;
  } catch {
    // Reported as 0: the node then has no allocatable ephemeral storage.
  }
  const release = readTrimmed(join(etc, 'os-release'));
  return {
    cpus: cpuCount(proc),
    memoryBytes: parseMemTotal(readTrimmed(join(proc, 'meminfo'))) || os.totalmem(),
    hugePages: hugePages(sys),
    ephemeralStorageBytes: ephemeral,
    arch: ARCH[process.arch] ?? process.arch,
    os: 'linux',
    kernelVersion: readTrimmed(join(proc, 'sys/kernel/osrelease')) || os.release(),
    osImage: /^PRETTY_NAME="?([^"\n]*)"?$/m.exec(release)?.[1] ?? 'Linux',
    machineId: readTrimmed(join(etc, 'machine-id')),
    systemUuid: readTrimmed(join(sys, 'class/dmi/id/product_uuid')),
    bootId: readTrimmed(join(proc, 'sys/kernel/random/boot_id')),
    hostname: readTrimmed(join(proc, 'sys/kernel/hostname')) || os.hostname(),
    internalIp: firstAddress(sources.interfaces ?? os.networkInterfaces()),
  };
}
