/**
 * The eviction signals (upstream `evictionapi.Signal`), the node condition each one raises and
 * the resource it reclaims.
 *
 * @module
 */

/** Every signal the kubelet knows, in upstream's spelling. */
export const SIGNALS = [
  'memory.available',
  'allocatableMemory.available',
  'nodefs.available',
  'nodefs.inodesFree',
  'imagefs.available',
  'imagefs.inodesFree',
  'containerfs.available',
  'containerfs.inodesFree',
  'pid.available',
] as const;

/** An eviction signal, e.g. `memory.available`. */
export type Signal = (typeof SIGNALS)[number];

/** A node pressure condition type. */
export type PressureCondition = 'MemoryPressure' | 'DiskPressure' | 'PIDPressure';

/** A resource an eviction reclaims: `memory`, `ephemeral-storage`, `inodes` or `pids`. */
export type ReclaimedResource = 'memory' | 'ephemeral-storage' | 'inodes' | 'pids';

/** Whether `name` is a known signal (upstream `validSignal`). */
export function isSignal(name: string): name is Signal {
  return (SIGNALS as readonly string[]).includes(name);
}

/** The node condition reported while a threshold on `signal` is met (upstream `signalToNodeCondition`). */
export const SIGNAL_TO_NODE_CONDITION: Readonly<Record<Signal, PressureCondition>> = {
  'memory.available': 'MemoryPressure',
  'allocatableMemory.available': 'MemoryPressure',
  'nodefs.available': 'DiskPressure',
  'nodefs.inodesFree': 'DiskPressure',
  'imagefs.available': 'DiskPressure',
  'imagefs.inodesFree': 'DiskPressure',
  'containerfs.available': 'DiskPressure',
  'containerfs.inodesFree': 'DiskPressure',
  'pid.available': 'PIDPressure',
};

/** The resource reclaimed for `signal` (upstream `signalToResource`). */
export const SIGNAL_TO_RESOURCE: Readonly<Record<Signal, ReclaimedResource>> = {
  'memory.available': 'memory',
  'allocatableMemory.available': 'memory',
  'nodefs.available': 'ephemeral-storage',
  'nodefs.inodesFree': 'inodes',
  'imagefs.available': 'ephemeral-storage',
  'imagefs.inodesFree': 'inodes',
  'containerfs.available': 'ephemeral-storage',
  'containerfs.inodesFree': 'inodes',
  'pid.available': 'pids',
};

/** Memory signals first (upstream `byEvictionPriority`); otherwise the given order is kept. */
export function isMemorySignal(signal: Signal): boolean {
  return signal === 'memory.available' || signal === 'allocatableMemory.available';
}
