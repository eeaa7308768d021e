/** RBAC manifests with one permission taken away, to show a component needs every verb it is granted. */

/** A manifest that may hold RBAC rules (a ClusterRole or Role; bindings have none). */
export interface RulesManifest {
  readonly rules?: readonly { readonly verbs: readonly string[] }[];
}

/**
 * Deep copies of `manifests`, with `verb` removed from rule `rule` of manifest `manifest` when
 * `drop` (`[manifest, rule, verb]`) is given.
 */
export function withoutVerb<T extends object>(manifests: readonly T[], drop?: [number, number, string]): T[] {
  return manifests.map((m, i) => {
    const rules = (m as RulesManifest).rules;
    if (!drop || i !== drop[0] || !rules) return structuredClone(m);
    return {
      ...structuredClone(m),
      rules: rules.map((r, j) => (j === drop[1] ? { ...r, verbs: r.verbs.filter((v) => v !== drop[2]) } : r)),
    } as T;
  });
}
