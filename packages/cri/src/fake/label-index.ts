/**
 * An inverted index of the fake's objects by label, so a list filtered by a label selector
 * (the kubelet lists one pod's sandboxes and containers by `io.kubernetes.pod.uid`) looks at
 * that pod's objects instead of scanning every object on the node.
 *
 * @module
 */

/** IDs by `key=value` label pair, each set in insertion (creation) order. */
export class LabelIndex {
  readonly #byPair = new Map<string, Set<string>>();

  /** Indexes object `id` under each of its labels (labels never change after creation). */
  add(id: string, labels: Readonly<Record<string, string>>): void {
    for (const key in labels) {
      const pair = pairKey(key, labels[key] as string);
      let ids = this.#byPair.get(pair);
      if (ids === undefined) {
        ids = new Set();
        this.#byPair.set(pair, ids);
      }
      ids.add(id);
    }
  }

  /** Removes object `id` (with the labels it was added with). */
  delete(id: string, labels: Readonly<Record<string, string>>): void {
    for (const key in labels) {
      const pair = pairKey(key, labels[key] as string);
      const ids = this.#byPair.get(pair);
      if (ids === undefined) continue;
      ids.delete(id);
      if (ids.size === 0) this.#byPair.delete(pair);
    }
  }

  /**
   * A superset of the IDs carrying every pair of `selector`, in creation order: the IDs of
   * its rarest pair (empty when some pair is on no object). `undefined` for an empty
   * selector (everything matches). Callers still check the whole selector per object.
   */
  candidates(selector: Readonly<Record<string, string>>): ReadonlySet<string> | undefined {
    let best: ReadonlySet<string> | undefined;
    for (const key in selector) {
      const ids = this.#byPair.get(pairKey(key, selector[key] as string));
      if (ids === undefined) return EMPTY;
      if (best === undefined || ids.size < best.size) best = ids;
    }
    return best;
  }
}

const EMPTY: ReadonlySet<string> = new Set();

// NUL cannot appear in a label key, so `key\0value` is unambiguous.
function pairKey(key: string, value: string): string {
  return `${key}\u0000${value}`;
}

/** Whether `labels` has every pair of `selector`. */
export function labelsMatch(
  selector: Readonly<Record<string, string>>,
  labels: Readonly<Record<string, string>>,
): boolean {
  for (const key in selector) if (labels[key] !== selector[key]) return false;
  return true;
}
