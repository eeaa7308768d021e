// Event-loop stalls, sampled with a 10 ms timer: each sample is how much later than 10 ms after
// the previous one it fired. (perf_hooks.monitorEventLoopDelay reported no samples at all in
// some windows of these benchmarks at 5,000 probes; this sampler is a plain timer among the
// others, late exactly when they are.) Each long stall also records the CPU the process used
// during it: near the stall's length, the process was busy (its own work, a backlog); far
// below, it was not running (the machine's other load, or a blocking call).

/** One long stall: when it ended (performance.now()), its length and the process CPU in it (ms). */
export interface Stall {
  atMs: number;
  ms: number;
  cpuMs: number;
}

/** Samples event-loop stalls from `start()` until `stop()`. */
export class LoopStalls {
  static readonly RESOLUTION_MS = 10;
  /** Stalls at least this long are kept one by one ({@link Stall}). */
  static readonly LONG_MS = 40;
  readonly #samples: number[] = [];
  readonly #long: Stall[] = [];
  #timer: NodeJS.Timeout | undefined;
  #last = 0;
  #lastCpu = process.cpuUsage();

  start(): void {
    this.#samples.length = 0;
    this.#long.length = 0;
    this.#last = performance.now();
    this.#lastCpu = process.cpuUsage();
    this.#timer = setTimeout(this.#tick, LoopStalls.RESOLUTION_MS);
  }

  readonly #tick = (): void => {
    const now = performance.now();
    const cpu = process.cpuUsage();
    const stall = Math.max(0, now - this.#last - LoopStalls.RESOLUTION_MS);
    this.#samples.push(stall);
    if (stall >= LoopStalls.LONG_MS) {
      const cpuMs = (cpu.user - this.#lastCpu.user + cpu.system - this.#lastCpu.system) / 1000;
      this.#long.push({ atMs: now, ms: stall + LoopStalls.RESOLUTION_MS, cpuMs });
    }
    this.#last = now;
    this.#lastCpu = cpu;
    this.#timer = setTimeout(this.#tick, LoopStalls.RESOLUTION_MS);
  };

  /** Stops; returns the p99 and the longest stall (ms) since `start()`, and the long ones. */
  stop(): { p99Ms: number; maxMs: number; long: Stall[] } {
    clearTimeout(this.#timer);
    const sorted = [...this.#samples].sort((a, b) => a - b);
    return {
      p99Ms: sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * 0.99))] ?? 0,
      maxMs: sorted[sorted.length - 1] ?? 0,
      long: [...this.#long],
    };
  }
}
