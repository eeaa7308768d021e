/**
 * Node capacity and allocatable (upstream `nodestatus.MachineInfo` and the container manager's
 * `GetNodeAllocatableReservation`): capacity from the machine, and allocatable = capacity −
 * kube-reserved − system-reserved − the hard eviction thresholds on `memory.available`
 * (memory) and `nodefs.available` (ephemeral-storage), clamped at 0, with huge pages also
 * taken out of memory.
 *
 * @module
 */
import type { MachineInfo } from './machine-info.js';
import { formatBinary, formatMilli, type InvalidQuantityError, parseMilli, parseValue } from './quantity.js';

/** Resource name → quantity, as in `status.capacity`. */
export type ResourceList = Readonly<Record<string, string>>;

/** The kubelet's default `maxPods`. */
export const DEFAULT_MAX_PODS = 110;

/** The kubelet's default hard eviction thresholds on Linux (`evictionHard`). */
export const DEFAULT_EVICTION_HARD: ResourceList = {
  'memory.available': '100Mi',
  'nodefs.available': '10%',
  'nodefs.inodesFree': '5%',
  'imagefs.available': '15%',
};

/** Resource names `--kube-reserved` / `--system-reserved` accept. */
const RESERVABLE = new Set(['cpu', 'memory', 'ephemeral-storage', 'pid']);

/** A `name=quantity,...` flag value that does not parse; names the flag and the bad part. */
export class InvalidReservationError extends Error {
  override readonly name = 'InvalidReservationError';
  /** @param flag e.g. `--kube-reserved`. @param detail what is wrong. */
  constructor(
    readonly flag: string,
    detail: string,
  ) {
    super(`${flag}: ${detail}`);
  }
}

/**
 * Parses `cpu=100m,memory=1Gi,ephemeral-storage=1Gi,pid=1000` (the kubelet's
 * `--kube-reserved` / `--system-reserved`). @throws InvalidReservationError
 */
export function parseReservation(text: string, flag = '--kube-reserved'): ResourceList {
  const out: Record<string, string> = {};
  for (const part of text.split(',').map((p) => p.trim())) {
    if (part === '') continue;
    const [name = '', value, extra] = part.split('=');
    if (value === undefined || extra !== undefined || value === '') {
      throw new InvalidReservationError(flag, `expected name=quantity, got ${JSON.stringify(part)}`);
    }
    if (!RESERVABLE.has(name)) {
      throw new InvalidReservationError(
        flag,
        `unsupported resource ${JSON.stringify(name)}: expected one of cpu, memory, ephemeral-storage, pid`,
      );
    }
    try {
      parseMilli(value, `${flag} ${name}`);
    } catch (err) {
      throw new InvalidReservationError(flag, (err as InvalidQuantityError).message);
    }
    out[name] = value;
  }
  return out;
}

/** Huge page resource name for a page size in bytes (`hugepages-2Mi`, `hugepages-1Gi`). */
export function hugePageResourceName(pageBytes: number): string {
  return `hugepages-${formatBinary(BigInt(pageBytes))}`;
}

/** Capacity from machine facts: cpu, memory, ephemeral-storage, huge pages, pods. */
export function nodeCapacity(machine: MachineInfo, maxPods: number = DEFAULT_MAX_PODS): ResourceList {
  const out: Record<string, string> = {
    cpu: formatMilli(BigInt(machine.cpus) * 1000n),
    memory: formatBinary(BigInt(machine.memoryBytes)),
    'ephemeral-storage': formatBinary(BigInt(machine.ephemeralStorageBytes)),
    pods: String(maxPods),
  };
  for (const [page, bytes] of Object.entries(machine.hugePages)) {
    out[hugePageResourceName(Number(page))] = formatBinary(BigInt(bytes));
  }
  return out;
}

/** What is held back from allocatable. */
export interface Reservations {
  /** `--kube-reserved`. @default {} */
  readonly kubeReserved?: ResourceList;
  /** `--system-reserved`. @default {} */
  readonly systemReserved?: ResourceList;
  /** Hard eviction thresholds by signal (`100Mi` or `10%`). @default DEFAULT_EVICTION_HARD */
  readonly evictionHard?: ResourceList;
}

const isBinary = (name: string) =>
  name === 'memory' || name === 'ephemeral-storage' || name.startsWith('hugepages-');

/** Upstream `GetThresholdQuantity`: a percentage (a float32, truncated) of capacity, or the quantity. */
function thresholdMilli(value: string, capacity: string, what: string): bigint {
  const pct = /^([0-9.]+)%$/.exec(value.trim());
  if (pct === null) return parseMilli(value, what);
  const capValue = Number(parseValue(capacity));
  return BigInt(Math.trunc(capValue * Math.fround(Number(pct[1]) / 100))) * 1000n;
}

/** The per-resource reservation (kube + system + hard eviction), in milli-units. */
export function allocatableReservation(capacity: ResourceList, r: Reservations = {}): Map<string, bigint> {
  const out = new Map<string, bigint>();
  const add = (name: string, milli: bigint) => out.set(name, (out.get(name) ?? 0n) + milli);
  for (const [name, list] of [
    ['kube-reserved', r.kubeReserved],
    ['system-reserved', r.systemReserved],
  ] as const) {
    for (const [res, q] of Object.entries(list ?? {})) add(res, parseMilli(q, `${name} ${res}`));
  }
  const hard = r.evictionHard ?? DEFAULT_EVICTION_HARD;
  const signals: readonly [string, string][] = [
    ['memory.available', 'memory'],
    ['nodefs.available', 'ephemeral-storage'],
  ];
  for (const [signal, res] of signals) {
    const v = hard[signal];
    const cap = capacity[res];
    if (v !== undefined && cap !== undefined) add(res, thresholdMilli(v, cap, `eviction-hard ${signal}`));
  }
  return out;
}

/** Allocatable = capacity − reservation, clamped at 0; memory also minus huge pages. */
export function nodeAllocatable(capacity: ResourceList, reservations: Reservations = {}): ResourceList {
  const reserved = allocatableReservation(capacity, reservations);
  const milli: Record<string, bigint> = {};
  for (const [name, q] of Object.entries(capacity)) {
    const v = parseMilli(q, `capacity ${name}`) - (reserved.get(name) ?? 0n);
    milli[name] = v < 0n ? 0n : v;
  }
  for (const [name, q] of Object.entries(capacity)) {
    if (!name.startsWith('hugepages-') || milli.memory === undefined) continue;
    const v = milli.memory - parseMilli(q);
    milli.memory = v < 0n ? 0n : v;
  }
  const out: Record<string, string> = {};
  for (const [name, v] of Object.entries(milli)) {
    out[name] = isBinary(name)
      ? formatBinary(v / 1000n)
      : name === 'cpu'
        ? formatMilli(v)
        : String(v / 1000n);
  }
  return out;
}
