/**
 * The cache of published probe results, one per probe type (upstream
 * `pkg/kubelet/prober/results`): container ID → result, changed only by the workers.
 *
 * @module
 */
import type { ProbeResult } from './probe-types.js';

/** One cached result. */
export interface CachedProbeResult {
  /** The published result. */
  readonly result: ProbeResult;
  /** The pod's UID. */
  readonly podUID: string;
  /** The container's name. */
  readonly containerName: string;
}

/**
 * The runtime's container ID of `containerID` as the API shows it (`containerd://abc` → `abc`;
 * an ID without a `<runtime>://` prefix is returned as is).
 */
export function runtimeContainerId(containerID: string): string {
  const i = containerID.indexOf('://');
  return i === -1 ? containerID : containerID.slice(i + 3);
}

/**
 * Results of one probe type by container ID. Lookups accept the API form
 * (`containerd://abc`) and the runtime's bare ID (`abc`).
 */
export class ResultsManager {
  readonly #cache = new Map<string, CachedProbeResult>();

  /** The result for `containerId`, if one is published. */
  get(containerId: string): ProbeResult | undefined {
    return this.#cache.get(runtimeContainerId(containerId))?.result;
  }

  /** The cached entry for `containerId`, with its pod and container. */
  entry(containerId: string): CachedProbeResult | undefined {
    return this.#cache.get(runtimeContainerId(containerId));
  }

  /** Number of cached results. */
  get size(): number {
    return this.#cache.size;
  }

  /**
   * Sets the result; returns true when it is new or changed (upstream sends an update only
   * then). @internal
   */
  set(containerId: string, entry: CachedProbeResult): boolean {
    const id = runtimeContainerId(containerId);
    const prev = this.#cache.get(id);
    if (prev !== undefined && prev.result === entry.result) return false;
    this.#cache.set(id, entry);
    return true;
  }

  /** Forgets the result of `containerId`. @internal */
  remove(containerId: string): boolean {
    return this.#cache.delete(runtimeContainerId(containerId));
  }
}
