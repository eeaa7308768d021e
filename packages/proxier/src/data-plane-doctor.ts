/**
 * The data-plane doctor as a library call, for tools that fold its findings into their own
 * report (the reference agent's `nodeagent doctor`): the same readings and checks as
 * `nodeagent-proxy doctor` without drift or traces.
 *
 * @module
 */
import type { DetectedMode, Finding } from './cli/doctor-checks.js';
import type { DoctorRunner } from './cli/doctor-read.js';

/** Options of {@link dataPlaneDoctor}. */
export interface DataPlaneDoctorOptions {
  /** Read this network namespace (`/run/netns/<name>`) instead of the caller's. */
  readonly netns?: string;
  /** Runs the read-only commands (tests: saved outputs). @default spawned, inside `netns` */
  readonly runner?: DoctorRunner;
}

/** What {@link dataPlaneDoctor} found. */
export interface DataPlaneDoctorResult {
  /** Proxy modes whose rules are present. */
  readonly modes: readonly DetectedMode[];
  /** Every finding, most severe first. */
  readonly findings: readonly Finding[];
}

/**
 * Reads the node's proxy rules and prerequisites and returns `nodeagent-proxy doctor`'s
 * findings (rules present, mixed modes, stale chains, missing prerequisites).
 */
export async function dataPlaneDoctor(options: DataPlaneDoctorOptions = {}): Promise<DataPlaneDoctorResult> {
  // Loaded on use: the doctor renders with every backend, which are optional installs of this
  // package's entry point.
  const { runDoctor } = await import('./cli/doctor.js');
  const report = await runDoctor(
    {
      netns: options.netns,
      service: undefined,
      sourceIP: '192.0.2.10',
      json: true,
      objects: { from: 'none' },
      backend: undefined,
      renderArgv: [],
      files: [],
    },
    {
      stdout: { write: () => true },
      stderr: { write: () => true },
      env: {},
      ...(options.runner !== undefined ? { runner: options.runner } : {}),
    },
  );
  return { modes: report.modes, findings: report.findings };
}
