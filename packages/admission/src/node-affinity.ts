/**
 * `nodeSelector` and required node affinity (component-helpers' `GetRequiredNodeAffinity`
 * `.Match`): every selector label must match, and at least one node selector term must match
 * all its label expressions and field expressions. A term with a malformed expression (a `Gt`
 * value that is not an integer, a `matchFields` key other than `metadata.name`) matches nothing.
 *
 * @module
 */
import type { V1Node, V1NodeSelectorRequirement, V1NodeSelectorTerm, V1Pod } from '@kubernetes/client-node';

function intOf(text: string | undefined): bigint | undefined {
  if (text === undefined || !/^[+-]?\d+$/.test(text)) return undefined;
  return BigInt(text);
}

function requirementMatches(
  req: V1NodeSelectorRequirement,
  labels: Readonly<Record<string, string>>,
): boolean {
  const has = Object.hasOwn(labels, req.key);
  const value = labels[req.key];
  const values = req.values ?? [];
  switch (req.operator) {
    case 'In':
      return has && values.includes(value ?? '');
    case 'NotIn':
      return !has || !values.includes(value ?? '');
    case 'Exists':
      return has;
    case 'DoesNotExist':
      return !has;
    case 'Gt':
    case 'Lt': {
      if (values.length !== 1) return false;
      const bound = intOf(values[0]);
      const actual = intOf(value);
      if (bound === undefined || actual === undefined) return false;
      return req.operator === 'Gt' ? actual > bound : actual < bound;
    }
    default:
      return false;
  }
}

function fieldMatches(req: V1NodeSelectorRequirement, node: V1Node): boolean {
  if (req.key !== 'metadata.name') return false;
  const name = node.metadata?.name ?? '';
  const values = req.values ?? [];
  if (req.operator === 'In') return values.length === 1 && values[0] === name;
  if (req.operator === 'NotIn') return values.length === 1 && values[0] !== name;
  return false;
}

function termMatches(term: V1NodeSelectorTerm, node: V1Node): boolean {
  const exprs = term.matchExpressions ?? [];
  const fields = term.matchFields ?? [];
  if (exprs.length === 0 && fields.length === 0) return false;
  const labels = node.metadata?.labels ?? {};
  return exprs.every((r) => requirementMatches(r, labels)) && fields.every((r) => fieldMatches(r, node));
}

/** Whether the node satisfies the pod's `nodeSelector` and its required node affinity. */
export function requiredNodeAffinityMatches(pod: V1Pod, node: V1Node): boolean {
  const labels = node.metadata?.labels ?? {};
  for (const [k, v] of Object.entries(pod.spec?.nodeSelector ?? {})) {
    if (labels[k] !== v) return false;
  }
  const required = pod.spec?.affinity?.nodeAffinity?.requiredDuringSchedulingIgnoredDuringExecution;
  if (required === undefined) return true;
  return (required.nodeSelectorTerms ?? []).some((t) => termMatches(t, node));
}
