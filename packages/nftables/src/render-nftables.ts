/**
 * One-call entry points: a snapshot in, the full `nft -f` text (as a first full sync writes
 * it) out.
 *
 * @module
 */
import { definedFields } from '@nodeagent/core';
import type { ProxySnapshot } from '@nodeagent/proxy-state';
import type { NftRenderOptions } from './render-options.js';
import { NftRenderer, type RenderResult } from './renderer.js';
import { NftSyncPlanner } from './sync-planner.js';

/** `options` with the family and node IP taken from the snapshot where not given. */
export function snapshotRenderOptions(
  snapshot: ProxySnapshot,
  options: NftRenderOptions = {},
): NftRenderOptions {
  const nodeIP = options.nodeIP ?? snapshot.node.ips[0];
  return {
    ...options,
    family: snapshot.ipFamily === 6 ? 'ip6' : 'ip',
    ...definedFields({ nodeIP }),
  };
}

/** Renders the structured ruleset of a snapshot (family and node IP from the snapshot). */
export function renderNftablesRuleset(snapshot: ProxySnapshot, options: NftRenderOptions = {}): RenderResult {
  return new NftRenderer(snapshotRenderOptions(snapshot, options)).render(snapshot);
}

/**
 * The full transaction a first sync into an empty namespace writes for `snapshot`.
 * @throws InvalidOptionsError for unusable options.
 */
export function renderNftables(snapshot: ProxySnapshot, options: NftRenderOptions = {}): string {
  const { ruleset } = renderNftablesRuleset(snapshot, options);
  return new NftSyncPlanner().planFull(ruleset, 0).text;
}
