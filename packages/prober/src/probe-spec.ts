/**
 * A container probe with the API's defaults applied and its numbers checked (API validation
 * would reject what fails here; a pod from a file or an older server may still carry it).
 *
 * @module
 */
import type { V1Probe } from '@kubernetes/client-node';
import type { ProbeType } from './probe-types.js';

/** The timing and thresholds of a probe, defaulted. */
export interface ProbeTiming {
  /** `initialDelaySeconds` (default 0). */
  readonly initialDelaySeconds: number;
  /** `periodSeconds` (default 10, minimum 1). */
  readonly periodSeconds: number;
  /** `timeoutSeconds` (default 1, minimum 1). */
  readonly timeoutSeconds: number;
  /** `successThreshold` (default 1; must be 1 for liveness and startup). */
  readonly successThreshold: number;
  /** `failureThreshold` (default 3, minimum 1). */
  readonly failureThreshold: number;
}

/** A probe's timing, or why the probe is malformed (the worker then reports that each period). */
export interface ProbeSpec {
  /** The timing (API defaults where a value is missing or malformed). */
  readonly timing: ProbeTiming;
  /** What is wrong with the probe, when something is; `undefined` for a valid probe. */
  readonly invalid: string | undefined;
}

const DEFAULTS: ProbeTiming = {
  initialDelaySeconds: 0,
  periodSeconds: 10,
  timeoutSeconds: 1,
  successThreshold: 1,
  failureThreshold: 3,
};

const MINIMUMS: Readonly<Record<keyof ProbeTiming, number>> = {
  initialDelaySeconds: 0,
  periodSeconds: 1,
  timeoutSeconds: 1,
  successThreshold: 1,
  failureThreshold: 1,
};

/** Applies the API defaults to `probe` and checks its numbers. */
export function probeSpec(probe: V1Probe, type: ProbeType): ProbeSpec {
  const problems: string[] = [];
  const timing: Record<keyof ProbeTiming, number> = { ...DEFAULTS };
  for (const key of Object.keys(DEFAULTS) as (keyof ProbeTiming)[]) {
    const value: unknown = (probe as Record<string, unknown>)[key];
    // 0 is how an unset int32 arrives from Go-marshalled objects: the API default applies.
    if (value === undefined || value === null || (value === 0 && key !== 'initialDelaySeconds')) continue;
    if (
      typeof value !== 'number' ||
      !Number.isInteger(value) ||
      value < MINIMUMS[key] ||
      value > 2_147_483_647
    ) {
      problems.push(`${key} must be an integer >= ${MINIMUMS[key]}, got ${JSON.stringify(value)}`);
      continue;
    }
    timing[key] = value;
  }
  if (type !== 'readiness' && timing.successThreshold !== 1) {
    problems.push(`successThreshold must be 1 for ${type} probes, got ${timing.successThreshold}`);
  }
  const grace: unknown = probe.terminationGracePeriodSeconds;
  if (grace != null && (typeof grace !== 'number' || !Number.isInteger(grace) || grace < 1)) {
    problems.push(`terminationGracePeriodSeconds must be a positive integer, got ${JSON.stringify(grace)}`);
  }
  return { timing, invalid: problems.length === 0 ? undefined : `invalid probe: ${problems.join('; ')}` };
}
