/**
 * The desired elements of every shared set and map, maintained incrementally: each service
 * port claims its elements; when two ports claim the same key, the port whose key sorts
 * first wins (deterministic), and the other claim takes over if the winner goes away.
 *
 * @module
 */
import type { ElementSpec } from './model.js';

/** Owner id of base (table-owned) elements: sorts before every port key. */
export const BASE_OWNER = '';

interface Claim {
  readonly owner: string;
  readonly el: ElementSpec;
}

/** Elements by set and key, with the keys touched since the last {@link ElementIndex.takeDirty}. */
export class ElementIndex {
  readonly #claims = new Map<string, Map<string, Claim[]>>();
  #dirty = new Map<string, Set<string>>();

  #mark(set: string, key: string): void {
    let d = this.#dirty.get(set);
    if (!d) {
      d = new Set();
      this.#dirty.set(set, d);
    }
    d.add(key);
  }

  /** Adds `owner`'s claims on `elements`. */
  add(owner: string, elements: readonly ElementSpec[]): void {
    for (const el of elements) {
      let bySet = this.#claims.get(el.set);
      if (!bySet) {
        bySet = new Map();
        this.#claims.set(el.set, bySet);
      }
      const list = bySet.get(el.key);
      if (!list) bySet.set(el.key, [{ owner, el }]);
      else {
        let i = list.length;
        while (i > 0 && list[i - 1]!.owner > owner) i--;
        list.splice(i, 0, { owner, el });
      }
      this.#mark(el.set, el.key);
    }
  }

  /** Removes `owner`'s claims on `elements`. */
  remove(owner: string, elements: readonly ElementSpec[]): void {
    for (const el of elements) {
      const bySet = this.#claims.get(el.set);
      const list = bySet?.get(el.key);
      if (!list) continue;
      const i = list.findIndex((c) => c.owner === owner && c.el === el);
      if (i >= 0) list.splice(i, 1);
      if (list.length === 0) bySet!.delete(el.key);
      this.#mark(el.set, el.key);
    }
  }

  /** The winning element for a key, if any. */
  get(set: string, key: string): ElementSpec | undefined {
    return this.#claims.get(set)?.get(key)?.[0]?.el;
  }

  /** Every winning element of every set. */
  *all(): IterableIterator<ElementSpec> {
    for (const bySet of this.#claims.values()) for (const list of bySet.values()) yield list[0]!.el;
  }

  /** Keys touched since the last call, by set; resets the dirty record. */
  takeDirty(): Map<string, Set<string>> {
    const d = this.#dirty;
    this.#dirty = new Map();
    return d;
  }

  /** Owners that lost a key to another owner with a different value (for diagnostics). */
  conflicts(): { set: string; key: string; winner: string; losers: string[] }[] {
    const out: { set: string; key: string; winner: string; losers: string[] }[] = [];
    for (const [set, bySet] of this.#claims) {
      for (const [key, list] of bySet) {
        const w = list[0]!;
        const losers = list
          .slice(1)
          .filter((c) => c.el.value !== w.el.value)
          .map((c) => c.owner);
        if (losers.length > 0) out.push({ set, key, winner: w.owner, losers });
      }
    }
    return out;
  }
}

/** True when two elements write the same thing (value and comment). */
export function sameElement(a: ElementSpec | undefined, b: ElementSpec | undefined): boolean {
  if (a === b) return true;
  if (!a || !b) return false;
  return a.value === b.value && a.comment === b.comment;
}
