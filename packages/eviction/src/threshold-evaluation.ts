/**
 * The pure steps of one eviction round (upstream helpers): which thresholds are met, when each
 * was first seen, which node conditions they raise and for how long those stay reported,
 * whose grace period elapsed and whose stats are new.
 *
 * @module
 */
import type { SignalObservations } from './observations.js';
import { isMemorySignal, type PressureCondition, SIGNAL_TO_NODE_CONDITION } from './signals.js';
import { sameThreshold, type Threshold, thresholdQuantity } from './thresholds.js';

/**
 * The thresholds met by the observations (upstream `thresholdsMet`): met when the threshold's
 * amount (plus min-reclaim when `enforceMinReclaim`) is strictly greater than what is
 * available. Thresholds without an observation are skipped.
 */
export function thresholdsMet(
  thresholds: readonly Threshold[],
  observations: SignalObservations,
  enforceMinReclaim: boolean,
): Threshold[] {
  return thresholds.filter((t) => {
    const observed = observations.get(t.signal);
    if (observed === undefined) return false;
    let quantity = thresholdQuantity(t.value, observed.capacity);
    if (enforceMinReclaim && t.minReclaim !== undefined) {
      quantity += thresholdQuantity(t.minReclaim, observed.capacity);
    }
    return quantity > observed.available;
  });
}

/** `a` plus the thresholds of `b` not already in it (upstream `mergeThresholds`). */
export function mergeThresholds(a: readonly Threshold[], b: readonly Threshold[]): Threshold[] {
  const out = [...a];
  for (const t of b) if (!out.some((o) => sameThreshold(o, t))) out.push(t);
  return out;
}

/** The first time each threshold was observed, keeping earlier times (upstream `thresholdsFirstObservedAt`). */
export function thresholdsFirstObservedAt(
  thresholds: readonly Threshold[],
  previous: ReadonlyMap<Threshold, number>,
  nowMs: number,
): Map<Threshold, number> {
  const out = new Map<Threshold, number>();
  for (const t of thresholds) {
    let at = nowMs;
    for (const [p, time] of previous) {
      if (sameThreshold(p, t)) {
        at = time;
        break;
      }
    }
    out.set(t, at);
  }
  return out;
}

/** The node conditions the thresholds raise, in first-seen order (upstream `nodeConditions`). */
export function nodeConditions(thresholds: readonly Threshold[]): PressureCondition[] {
  const out: PressureCondition[] = [];
  for (const t of thresholds) {
    const c = SIGNAL_TO_NODE_CONDITION[t.signal];
    if (!out.includes(c)) out.push(c);
  }
  return out;
}

/** `now` for the conditions present, the old time for the others (upstream `nodeConditionsLastObservedAt`). */
export function nodeConditionsLastObservedAt(
  conditions: readonly PressureCondition[],
  previous: ReadonlyMap<PressureCondition, number>,
  nowMs: number,
): Map<PressureCondition, number> {
  const out = new Map(previous);
  for (const c of conditions) out.set(c, nowMs);
  return out;
}

/** The conditions last observed less than `periodMs` ago (upstream `nodeConditionsObservedSince`). */
export function nodeConditionsObservedSince(
  lastObservedAt: ReadonlyMap<PressureCondition, number>,
  periodMs: number,
  nowMs: number,
): PressureCondition[] {
  const out: PressureCondition[] = [];
  for (const [c, at] of lastObservedAt) if (nowMs - at < periodMs) out.push(c);
  return out;
}

/** The thresholds whose grace period elapsed (upstream `thresholdsMetGracePeriod`). */
export function thresholdsMetGracePeriod(
  firstObservedAt: ReadonlyMap<Threshold, number>,
  nowMs: number,
): Threshold[] {
  const out: Threshold[] = [];
  for (const [t, at] of firstObservedAt) if (nowMs - at >= t.gracePeriodMs) out.push(t);
  return out;
}

/**
 * The thresholds whose observation is newer than last round's (upstream
 * `thresholdsUpdatedStats`), so stale stats never evict twice.
 */
export function thresholdsUpdatedStats(
  thresholds: readonly Threshold[],
  observations: SignalObservations,
  last: SignalObservations,
): Threshold[] {
  return thresholds.filter((t) => {
    const observed = observations.get(t.signal);
    if (observed === undefined) return false;
    const previous = last.get(t.signal);
    return (
      previous === undefined ||
      observed.timeMs === undefined ||
      previous.timeMs === undefined ||
      observed.timeMs > previous.timeMs
    );
  });
}

/** Memory thresholds first, the rest in their order (upstream `byEvictionPriority`, made stable). */
export function byEvictionPriority(thresholds: readonly Threshold[]): Threshold[] {
  const memory = thresholds.filter((t) => isMemorySignal(t.signal));
  return [...memory, ...thresholds.filter((t) => !isMemorySignal(t.signal))];
}
