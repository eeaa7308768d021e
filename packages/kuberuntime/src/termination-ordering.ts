/**
 * Kill order with sidecars (upstream `terminationOrdering`): app containers stop at once;
 * each sidecar waits until every app container and every sidecar declared after it has
 * stopped (so sidecars go in reverse order), within the grace period.
 *
 * @module
 */
import type { V1Pod } from '@kubernetes/client-node';
import type { Clock } from '@nodeagent/core';
import { isRestartableInitContainer } from '@nodeagent/kubecontainer';

interface Gate {
  done: boolean;
  readonly promise: Promise<void>;
  open(): void;
}

function gate(done: boolean): Gate {
  let open = (): void => {};
  const promise = new Promise<void>((resolve) => {
    open = resolve;
  });
  const g: Gate = {
    done,
    promise,
    open() {
      g.done = true;
      open();
    },
  };
  if (done) g.open();
  return g;
}

/** Who waits for whom while a pod's containers are killed. */
export class TerminationOrdering {
  readonly #terminated = new Map<string, Gate>();
  readonly #prereqs = new Map<string, Gate[]>();

  readonly #clock: Clock;

  /** @param runningNames names of the containers being killed (others count as already stopped). */
  constructor(pod: V1Pod, runningNames: readonly string[], clock: Clock) {
    this.#clock = clock;
    const running = new Set(runningNames);
    const mains: Gate[] = [];
    for (const c of pod.spec?.containers ?? []) {
      const g = gate(!running.has(c.name));
      this.#terminated.set(c.name, g);
      mains.push(g);
    }
    let later: Gate | undefined;
    for (const ic of [...(pod.spec?.initContainers ?? [])].reverse()) {
      const g = gate(!running.has(ic.name));
      this.#terminated.set(ic.name, g);
      if (isRestartableInitContainer(ic)) {
        this.#prereqs.set(ic.name, later === undefined ? [...mains] : [...mains, later]);
        later = g;
      }
    }
  }

  /**
   * Waits until `name` may stop, at most `graceSeconds`. Resolves with the seconds waited
   * (whole seconds, truncated, as the caller subtracts them from the grace period).
   */
  async waitForTurn(name: string, graceSeconds: number): Promise<number> {
    const waits = (this.#prereqs.get(name) ?? []).filter((g) => !g.done);
    if (waits.length === 0) return 0;
    const start = this.#clock.now();
    let timer: { cancel(): void } | undefined;
    await Promise.race([
      Promise.all(waits.map((g) => g.promise)),
      new Promise<void>((resolve) => {
        timer = this.#clock.setTimeout(resolve, graceSeconds * 1000);
      }),
    ]);
    timer?.cancel();
    return Math.floor((this.#clock.now() - start) / 1000);
  }

  /** Marks `name` stopped, releasing whoever waits for it. */
  containerTerminated(name: string): void {
    this.#terminated.get(name)?.open();
  }
}
