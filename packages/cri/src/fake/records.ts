/**
 * The fake runtime's in-memory objects: what it remembers about each sandbox and
 * container, and the clock that stamps them.
 *
 * @module
 */
import type { Clock, Timer } from '@nodeagent/core';
import type {
  ContainerConfig,
  ContainerResources,
  ContainerState,
  ImageSpec,
  PodSandboxConfig,
  PodSandboxState,
} from '../gen/runtime/v1/api.js';
import type { ContainerBehaviour } from './behaviours.js';

/** A pod sandbox as the fake remembers it. */
export interface SandboxRecord {
  readonly id: string;
  readonly config: PodSandboxConfig;
  readonly runtimeHandler: string;
  readonly createdAtNs: bigint;
  /** NODE network namespace: no pod IP. */
  readonly hostNetwork: boolean;
  state: PodSandboxState;
  /** The pod IP while READY; "" for host-network sandboxes and once stopped (the netns is gone). */
  ip: string;
}

/** A container as the fake remembers it, including its simulated process. */
export interface ContainerRecord {
  readonly id: string;
  readonly sandboxId: string;
  readonly config: ContainerConfig;
  readonly image: ImageSpec;
  readonly imageId: string;
  readonly logPath: string;
  readonly createdAtNs: bigint;
  behaviour: ContainerBehaviour;
  state: ContainerState;
  startedAtNs: bigint;
  finishedAtNs: bigint;
  exitCode: number;
  reason: string;
  message: string;
  resources: ContainerResources | undefined;
  /** Timers of the running process (self-exit, exit after SIGTERM); all cancelled when it exits. */
  readonly timers: Timer[];
  /** A StartContainer call is waiting out `startDelayMs`. */
  starting: boolean;
  /** Callbacks of StopContainer/RemoveContainer calls waiting for the process to exit. */
  readonly exitWaiters: Array<() => void>;
  /** Usage reported by stats, set by behaviour or `setContainerUsage`. */
  usage: { memoryWorkingSetBytes: number; cpuCores: number };
}

/**
 * Nanosecond timestamps from a millisecond clock, strictly increasing: two events in
 * the same millisecond still sort in the order they happened (the kubelet orders
 * container attempts by `created_at`).
 */
export class NanoClock {
  #last = 0n;

  constructor(readonly clock: Clock) {}

  /** Now, in ns since the epoch. */
  now(): bigint {
    const ns = BigInt(Math.floor(this.clock.now())) * 1_000_000n;
    this.#last = ns > this.#last ? ns : this.#last + 1n;
    return this.#last;
  }
}
