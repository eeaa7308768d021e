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

/** Most keys have one claim: it is stored bare; contested keys hold a list sorted by owner. */
type Slot = Claim | Claim[];

const first = (slot: Slot): Claim => (Array.isArray(slot) ? slot[0]! : slot);

/** Elements by set and key, with the keys touched since the last {@link ElementIndex.takeDirty}. */
export class ElementIndex {
  readonly #claims = new Map<string, Map<string, Slot>>();
  #dirty = new Map<string, Set<string>>();

  #mark(set: string, key: string): void {
    let d = this.#dirty.get(set);
    if (!d) {
      d = new Set();
      this.#dirty.set(set, d);
    }
    d.add(key);
  }

  /**
   * Adds `owner`'s claims on `elements`. `markDirty: false` skips recording the touched keys
   * (a full sync writes every element anyway).
   */
  add(owner: string, elements: readonly ElementSpec[], markDirty = true): void {
    let lastSet: string | undefined;
    let bySet: Map<string, Slot> | undefined;
    for (const el of elements) {
      if (el.set !== lastSet) {
        lastSet = el.set;
        bySet = this.#claims.get(el.set);
        if (!bySet) {
          bySet = new Map();
          this.#claims.set(el.set, bySet);
        }
      }
      const slot = bySet!.get(el.key);
      const claim: Claim = { owner, el };
      if (slot === undefined) bySet!.set(el.key, claim);
      else {
        const list = Array.isArray(slot) ? slot : [slot];
        let i = list.length;
        while (i > 0 && list[i - 1]!.owner > owner) i--;
        list.splice(i, 0, claim);
        if (list !== slot) bySet!.set(el.key, list);
      }
      if (markDirty) this.#mark(el.set, el.key);
    }
  }

  /** Removes `owner`'s claims on `elements`. */
  remove(owner: string, elements: readonly ElementSpec[]): void {
    for (const el of elements) {
      const bySet = this.#claims.get(el.set);
      const slot = bySet?.get(el.key);
      if (slot === undefined) continue;
      if (Array.isArray(slot)) {
        const i = slot.findIndex((c) => c.owner === owner && c.el === el);
        if (i >= 0) slot.splice(i, 1);
        if (slot.length === 0) bySet!.delete(el.key);
        else if (slot.length === 1) bySet!.set(el.key, slot[0]!);
      } else if (slot.owner === owner && slot.el === el) bySet!.delete(el.key);
      this.#mark(el.set, el.key);
    }
  }

  /** The winning element for a key, if any. */
  get(set: string, key: string): ElementSpec | undefined {
    const slot = this.#claims.get(set)?.get(key);
    return slot === undefined ? undefined : first(slot).el;
  }

  /** Every winning element of every set. */
  *all(): IterableIterator<ElementSpec> {
    for (const bySet of this.#claims.values()) for (const slot of bySet.values()) yield first(slot).el;
  }

  /** The winning elements of every set, by set and key (a fresh copy). */
  winners(): Map<string, Map<string, ElementSpec>> {
    const out = new Map<string, Map<string, ElementSpec>>();
    for (const [set, bySet] of this.#claims) {
      const m = new Map<string, ElementSpec>();
      for (const [key, slot] of bySet) m.set(key, first(slot).el);
      out.set(set, m);
    }
    return out;
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
      for (const [key, slot] of bySet) {
        if (!Array.isArray(slot)) continue;
        const w = slot[0]!;
        const losers = slot
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
