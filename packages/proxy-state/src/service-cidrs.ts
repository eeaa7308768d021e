/**
 * The service CIDRs of a cluster from its `ServiceCIDR` objects (`networking.k8s.io/v1`), as
 * kube-proxy collects them for the nftables `cluster-ips-check` chain: the union of every
 * object's `spec.cidrs`, of the proxier's IP family.
 *
 * @module
 */
import type { V1ServiceCIDR } from '@kubernetes/client-node';
import { parseCIDR } from '@nodeagent/core';
import type { IPFamily } from './types.js';

/** A `ServiceCIDR` object whose `spec.cidrs` cannot be read; the other objects still count. */
export class InvalidServiceCIDRError extends Error {
  /** The object kind, for log and event consumers. */
  readonly kind = 'ServiceCIDR' as const;
  /**
   * @param objectName - The ServiceCIDR's name (cluster-scoped).
   * @param problems - One line per problem, naming the field.
   */
  constructor(
    readonly objectName: string,
    readonly problems: readonly string[],
  ) {
    super(`ServiceCIDR ${objectName} skipped: ${problems.join('; ')}`);
    this.name = 'InvalidServiceCIDRError';
  }
}

/** What {@link collectServiceCIDRs} found. */
export interface CollectedServiceCIDRs {
  /** Canonical CIDRs of the family, without duplicates, sorted. */
  readonly cidrs: readonly string[];
  /** One error per object that could not be read. */
  readonly errors: readonly InvalidServiceCIDRError[];
}

/**
 * The union of `spec.cidrs` of `objects` for `family` (kube-proxy's `OnServiceCIDRsChanged`
 * keeps the CIDRs of its proxier's family). An object being deleted still counts until it is
 * gone, as in kube-proxy, which does not look at the objects' conditions.
 */
export function collectServiceCIDRs(
  objects: readonly V1ServiceCIDR[],
  family: IPFamily,
): CollectedServiceCIDRs {
  const out = new Set<string>();
  const errors: InvalidServiceCIDRError[] = [];
  for (const obj of objects) {
    const name = typeof obj?.metadata?.name === 'string' ? obj.metadata.name : '';
    const raw: unknown = (obj?.spec as { cidrs?: unknown } | undefined)?.cidrs;
    if (raw === undefined || raw === null) continue;
    if (!Array.isArray(raw)) {
      errors.push(
        new InvalidServiceCIDRError(name, [`spec.cidrs: must be a list of CIDRs, got ${typeof raw}`]),
      );
      continue;
    }
    const problems: string[] = [];
    const mine: string[] = [];
    raw.forEach((text: unknown, i) => {
      const c = typeof text === 'string' ? parseCIDR(text) : null;
      if (!c) problems.push(`spec.cidrs[${i}]: ${JSON.stringify(text)} is not a CIDR`);
      else if (c.family === family) mine.push(c.cidr);
    });
    if (problems.length > 0) errors.push(new InvalidServiceCIDRError(name, problems));
    else for (const c of mine) out.add(c);
  }
  return { cidrs: [...out].sort(), errors };
}
