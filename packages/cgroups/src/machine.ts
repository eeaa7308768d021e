/**
 * Machine facts the container manager reads: the `pid` capacity (upstream `pidlimit.Stats`:
 * the smaller of `kernel/pid_max` and `kernel/threads-max`) and the huge page sizes the kernel
 * offers (`/sys/kernel/mm/hugepages/hugepages-<n>kB`).
 *
 * @module
 */
import { join } from 'node:path';
import { type CgroupFs, nodeCgroupFs } from './cgroup-fs.js';

/** Max PIDs of the node (min of pid_max and threads-max), or undefined when neither is readable. */
export function readMaxPid(procRoot = '/proc', fs: CgroupFs = nodeCgroupFs): bigint | undefined {
  let max: bigint | undefined;
  for (const file of ['sys/kernel/pid_max', 'sys/kernel/threads-max']) {
    try {
      const v = BigInt(fs.readFile(join(procRoot, file)).trim());
      if (max === undefined || v < max) max = v;
    } catch {}
  }
  return max;
}

/** Huge page sizes in bytes, ascending (upstream `HugePageSizes`); empty when the kernel has none. */
export function readHugePageSizes(sysRoot = '/sys', fs: CgroupFs = nodeCgroupFs): bigint[] {
  let entries: string[];
  try {
    entries = fs.readdir(join(sysRoot, 'kernel/mm/hugepages'));
  } catch {
    return [];
  }
  const sizes: bigint[] = [];
  for (const e of entries) {
    const m = /^hugepages-(\d+)kB$/.exec(e);
    if (m?.[1] !== undefined) sizes.push(BigInt(m[1]) * 1024n);
  }
  return sizes.sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
}
