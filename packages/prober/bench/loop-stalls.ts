// Event-loop stalls, sampled with a 10 ms timer: each sample is how much later than 10 ms after
// the previous one it fired. (perf_hooks.monitorEventLoopDelay reported no samples at all in
// some windows of these benchmarks at 5,000 probes; this sampler is a plain timer among the
// others, late exactly when they are.)

/** Samples event-loop stalls from `start()` until `stop()`. */
export class LoopStalls {
  static readonly RESOLUTION_MS = 10;
  readonly #samples: number[] = [];
  #timer: NodeJS.Timeout | undefined;
  #last = 0;

  start(): void {
    this.#samples.length = 0;
    this.#last = performance.now();
    this.#timer = setTimeout(this.#tick, LoopStalls.RESOLUTION_MS);
  }

  readonly #tick = (): void => {
    const now = performance.now();
    this.#samples.push(Math.max(0, now - this.#last - LoopStalls.RESOLUTION_MS));
    this.#last = now;
    this.#timer = setTimeout(this.#tick, LoopStalls.RESOLUTION_MS);
  };

  /** Stops; returns the p99 and the longest stall (ms) since `start()`. */
  stop(): { p99Ms: number; maxMs: number } {
    clearTimeout(this.#timer);
    const sorted = [...this.#samples].sort((a, b) => a - b);
    return {
      p99Ms: sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * 0.99))] ?? 0,
      maxMs: sorted[sorted.length - 1] ?? 0,
    };
  }
}
