/**
 * Eviction thresholds (upstream `evictionapi.Threshold`) and their parsing from the kubelet's
 * flags and configuration (`ParseThresholdConfig`): `--eviction-hard`, `--eviction-soft`,
 * `--eviction-soft-grace-period`, `--eviction-minimum-reclaim`, with upstream's rules and
 * error messages. Percentages are kept as float32 fractions, as upstream does, so a
 * percentage threshold resolves to exactly the byte count the kubelet computes.
 *
 * @module
 */
import { InvalidDurationError, InvalidQuantityError, parseGoDuration, quantityValue } from '@nodeagent/core';
import { formatOfQuantityText, formatQuantity, type QuantityFormat } from './quantity-format.js';
import { isSignal, type Signal } from './signals.js';

/** An absolute amount (bytes, inodes or PIDs) with the format it prints in. */
export interface ThresholdQuantity {
  /** The amount. */
  readonly value: bigint;
  /** How it prints (`100Mi` is BinarySI, `500M` DecimalSI). */
  readonly format: QuantityFormat;
}

/** A threshold value: an absolute quantity or a fraction of capacity. */
export type ThresholdValue =
  | { readonly quantity: ThresholdQuantity; readonly percentage?: undefined }
  | {
      /** Fraction of capacity in [0, 1], a float32 as upstream (`10%` → `Math.fround(0.1)`). */
      readonly percentage: number;
      readonly quantity?: undefined;
    };

/** One eviction threshold: `signal < value`, hard when `gracePeriodMs` is 0. */
export interface Threshold {
  /** The signal compared. */
  readonly signal: Signal;
  /** The only operator upstream has. */
  readonly operator: 'LessThan';
  /** The value the observed availability must stay at or above. */
  readonly value: ThresholdValue;
  /** Time the threshold must hold before it drives eviction, ms; 0 for a hard threshold. */
  readonly gracePeriodMs: number;
  /** Extra amount to reclaim beyond the threshold once it was met. @default none */
  readonly minReclaim?: ThresholdValue;
}

/** The kubelet's eviction settings as maps (the configuration file's shape). */
export interface ThresholdConfig {
  /** `evictionHard`: signal → value (`100Mi`, `10%`). @default DEFAULT_EVICTION_HARD */
  readonly evictionHard?: Readonly<Record<string, string>>;
  /** `evictionSoft`: signal → value. @default {} */
  readonly evictionSoft?: Readonly<Record<string, string>>;
  /** `evictionSoftGracePeriod`: signal → Go duration (`1m30s`). @default {} */
  readonly evictionSoftGracePeriod?: Readonly<Record<string, string>>;
  /** `evictionMinimumReclaim`: signal → value. @default {} */
  readonly evictionMinimumReclaim?: Readonly<Record<string, string>>;
  /** `enforceNodeAllocatable`: with `pods`, hard `memory.available` thresholds are copied to `allocatableMemory.available`. @default ['pods'] */
  readonly enforceNodeAllocatable?: readonly string[];
}

/**
 * The kubelet's default hard thresholds on Linux (`DefaultEvictionHard`), including
 * `imagefs.inodesFree<5%` of current releases.
 */
export const DEFAULT_EVICTION_HARD: Readonly<Record<string, string>> = Object.freeze({
  'memory.available': '100Mi',
  'nodefs.available': '10%',
  'nodefs.inodesFree': '5%',
  'imagefs.available': '15%',
  'imagefs.inodesFree': '5%',
});

/** Default `--eviction-pressure-transition-period`: 5 minutes. */
export const DEFAULT_PRESSURE_TRANSITION_PERIOD_MS = 5 * 60_000;
/** Default `--eviction-max-pod-grace-period`: 0 (the kubelet's default). */
export const DEFAULT_MAX_POD_GRACE_PERIOD_SECONDS = 0;

/** A threshold setting upstream refuses; the message is upstream's. */
export class InvalidThresholdError extends Error {
  override readonly name = 'InvalidThresholdError';
  /** @param message upstream's error text. @param input the refused text. */
  constructor(
    message: string,
    readonly input: string,
  ) {
    super(message);
  }
}

const QUANTITY_REGEXP = "'^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'";
const GO_FLOAT = /^[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?$/;

function unsupported(signal: string): InvalidThresholdError {
  return new InvalidThresholdError(`unsupported eviction signal ${signal}`, signal);
}

/** `strconv.ParseFloat(trimmed, 32)` then `/100`, as float32. */
function parsePercentage(text: string): number {
  const trimmed = text.replace(/%+$/, '');
  if (!GO_FLOAT.test(trimmed)) {
    throw new InvalidThresholdError(
      `strconv.ParseFloat: parsing ${JSON.stringify(trimmed)}: invalid syntax`,
      text,
    );
  }
  return Math.fround(Math.fround(Number(trimmed)) / 100);
}

function parseQuantity(text: string): ThresholdQuantity {
  try {
    return { value: quantityValue(text), format: formatOfQuantityText(text) };
  } catch (err) {
    if (err instanceof InvalidQuantityError) {
      throw new InvalidThresholdError(
        `quantities must match the regular expression ${QUANTITY_REGEXP}`,
        text,
      );
    }
    throw err;
  }
}

/** One `signal<value` statement; `undefined` for `0%` and `100%` (disabled). */
export function parseThresholdStatement(signal: string, value: string): Threshold | undefined {
  if (!isSignal(signal)) throw unsupported(signal);
  if (value.endsWith('%')) {
    if (value === '0%' || value === '100%') return undefined;
    const percentage = parsePercentage(value);
    if (percentage < 0) {
      throw new InvalidThresholdError(
        `eviction percentage threshold ${signal} must be >= 0%: ${value}`,
        value,
      );
    }
    if (percentage > 1) {
      throw new InvalidThresholdError(
        `eviction percentage threshold ${signal} must be <= 100%: ${value}`,
        value,
      );
    }
    return { signal, operator: 'LessThan', value: { percentage }, gracePeriodMs: 0 };
  }
  const quantity = parseQuantity(value);
  if (quantity.value <= 0n) {
    throw new InvalidThresholdError(
      `eviction threshold ${signal} must be positive: ${formatQuantity(quantity.value, quantity.format)}`,
      value,
    );
  }
  return { signal, operator: 'LessThan', value: { quantity }, gracePeriodMs: 0 };
}

function parseStatements(statements: Readonly<Record<string, string>>): Threshold[] {
  const out: Threshold[] = [];
  for (const [signal, value] of Object.entries(statements)) {
    const t = parseThresholdStatement(signal, value);
    if (t !== undefined) out.push(t);
  }
  return out;
}

function parseGracePeriods(statements: Readonly<Record<string, string>>): Map<Signal, number> {
  const out = new Map<Signal, number>();
  for (const [signal, value] of Object.entries(statements)) {
    if (!isSignal(signal)) throw unsupported(signal);
    let ms: number;
    try {
      ms = parseGoDuration(value);
    } catch (err) {
      if (err instanceof InvalidDurationError) {
        throw new InvalidThresholdError(`time: invalid duration ${JSON.stringify(value)}`, value);
      }
      throw err;
    }
    if (ms < 0) {
      throw new InvalidThresholdError(
        `invalid eviction grace period specified: ${value}, must be a positive value`,
        value,
      );
    }
    out.set(signal, ms);
  }
  return out;
}

function parseMinimumReclaims(statements: Readonly<Record<string, string>>): Map<Signal, ThresholdValue> {
  const out = new Map<Signal, ThresholdValue>();
  for (const [signal, value] of Object.entries(statements)) {
    if (!isSignal(signal)) throw unsupported(signal);
    if (value.endsWith('%')) {
      const percentage = parsePercentage(value);
      if (percentage <= 0) {
        throw new InvalidThresholdError(
          `eviction percentage minimum reclaim ${signal} must be positive: ${value}`,
          value,
        );
      }
      out.set(signal, { percentage });
      continue;
    }
    const quantity = parseQuantity(value);
    if (quantity.value < 0n) {
      throw new InvalidThresholdError(`negative eviction minimum reclaim specified for ${signal}`, value);
    }
    out.set(signal, { quantity });
  }
  return out;
}

/**
 * The thresholds of a configuration (upstream `ParseThresholdConfig`): hard ones, then soft
 * ones (each must have a grace period), min-reclaim applied to every threshold of its
 * signal, and with `enforceNodeAllocatable` containing `pods` each hard `memory.available`
 * copied as `allocatableMemory.available`. Any error rejects the whole configuration.
 *
 * @throws InvalidThresholdError with upstream's message
 */
export function parseThresholdConfig(config: ThresholdConfig = {}): Threshold[] {
  const hard = parseStatements(config.evictionHard ?? DEFAULT_EVICTION_HARD);
  const soft = parseStatements(config.evictionSoft ?? {});
  const grace = parseGracePeriods(config.evictionSoftGracePeriod ?? {});
  const minReclaims = parseMinimumReclaims(config.evictionMinimumReclaim ?? {});
  const results: Threshold[] = [...hard];
  for (const t of soft) {
    const period = grace.get(t.signal);
    if (period === undefined) {
      throw new InvalidThresholdError(
        `grace period must be specified for the soft eviction threshold ${t.signal}`,
        t.signal,
      );
    }
    results.push({ ...t, gracePeriodMs: period });
  }
  const withReclaim = results.map((t) => {
    const minReclaim = minReclaims.get(t.signal);
    return minReclaim === undefined ? t : { ...t, minReclaim };
  });
  if ((config.enforceNodeAllocatable ?? ['pods']).includes('pods')) {
    for (const t of [...withReclaim]) {
      if (t.signal === 'memory.available' && isHardEvictionThreshold(t)) {
        withReclaim.push({ ...t, signal: 'allocatableMemory.available', gracePeriodMs: 0 });
      }
    }
  }
  return withReclaim;
}

/** Whether the threshold is hard (no grace period; upstream `isHardEvictionThreshold`). */
export function isHardEvictionThreshold(t: Threshold): boolean {
  return t.gracePeriodMs === 0;
}

/**
 * The threshold's amount for a capacity (upstream `GetThresholdQuantity`): a quantity as is,
 * a percentage as `int64(capacity × fraction)`, truncated.
 */
export function thresholdQuantity(value: ThresholdValue, capacity: bigint): bigint {
  if (value.quantity !== undefined) return value.quantity.value;
  return BigInt(Math.trunc(Number(capacity) * value.percentage));
}

/** Upstream `compareThresholdValue`: same quantity, or same percentage. */
export function sameThresholdValue(a: ThresholdValue, b: ThresholdValue): boolean {
  if (a.quantity !== undefined || b.quantity !== undefined) {
    return a.quantity !== undefined && b.quantity !== undefined && a.quantity.value === b.quantity.value;
  }
  return a.percentage === b.percentage;
}

/** Upstream `hasThreshold`'s equality: signal, operator, grace period and value. */
export function sameThreshold(a: Threshold, b: Threshold): boolean {
  return (
    a.signal === b.signal &&
    a.operator === b.operator &&
    a.gracePeriodMs === b.gracePeriodMs &&
    sameThresholdValue(a.value, b.value)
  );
}

/** A threshold as the kubelet's flags spell it, e.g. `memory.available<100Mi` or `nodefs.available<10%`. */
export function formatThreshold(t: Threshold): string {
  return `${t.signal}<${formatThresholdValue(t.value)}`;
}

/** `100Mi`, `10%`. */
export function formatThresholdValue(v: ThresholdValue): string {
  if (v.quantity !== undefined) return formatQuantityValue(v.quantity);
  return `${Number((v.percentage * 100).toPrecision(6))}%`;
}

function formatQuantityValue(q: ThresholdQuantity): string {
  return formatQuantity(q.value, q.format);
}

/**
 * Parses a `--eviction-hard` / `--eviction-soft` flag value the way the kubelet's
 * `LangleSeparatedMapStringString` does: items split on `,`, empty items skipped, each split
 * once on `<`, key and value trimmed.
 * @throws InvalidThresholdError `malformed pair, expect string<string`
 */
export function parseLangleSeparatedMap(value: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const item of value.split(',')) {
    if (item.length === 0) continue;
    const at = item.indexOf('<');
    if (at < 0) throw new InvalidThresholdError('malformed pair, expect string<string', item);
    out[item.slice(0, at).trim()] = item.slice(at + 1).trim();
  }
  return out;
}

/**
 * Parses a `--eviction-soft-grace-period` / `--eviction-minimum-reclaim` flag value as the
 * kubelet's `MapStringString`: items split on `,`, each split once on `=`, trimmed.
 * @throws InvalidThresholdError `malformed pair, expect string=string`
 */
export function parseMapStringString(value: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const item of value.split(',')) {
    if (item.length === 0) continue;
    const at = item.indexOf('=');
    if (at < 0) throw new InvalidThresholdError('malformed pair, expect string=string', item);
    out[item.slice(0, at).trim()] = item.slice(at + 1).trim();
  }
  return out;
}
