/**
 * The work loop the mini-apiserver's controllers share: changes ask for a pass, one pass runs on
 * the next turn of the event loop however many asked, and `idle()` resolves once no pass is
 * queued. Internal: not exported from the package.
 */

/** A pass run on the next turn of the event loop, coalescing every request made before it runs. */
export class CoalescedPass {
  readonly #run: () => void;
  #pending = false;
  #waiters: Array<() => void> = [];

  /** @param run the pass; it handles its own errors (a throw would escape to the event loop). */
  constructor(run: () => void) {
    this.#run = run;
  }

  /** Queues a pass unless one is queued already. */
  request(): void {
    if (this.#pending) return;
    this.#pending = true;
    setImmediate(() => {
      this.#pending = false;
      this.#run();
      if (!this.#pending) this.release();
    });
  }

  /** Resolves once no pass is queued (at once when none is). */
  idle(): Promise<void> {
    if (!this.#pending) return Promise.resolve();
    return new Promise((resolve) => this.#waiters.push(resolve));
  }

  /** Resolves every `idle()` waiting now (a stopping controller lets its waiters go). */
  release(): void {
    const w = this.#waiters;
    this.#waiters = [];
    for (const f of w) f();
  }
}
