/**
 * The one-call entry point: a proxy-state snapshot in, kube-proxy's full restore payload out.
 *
 * @module
 */
import { definedFields } from '@nodeagent/core';
import type { ProxySnapshot } from '@nodeagent/proxy-state';
import { IptablesRenderer, type IptablesRuleset } from './render.js';
import type { IptablesRenderOptions } from './render-options.js';
import { restoreText } from './restore-text.js';
import { SnapshotAdapter, snapshotFamily } from './snapshot-input.js';

/**
 * Renders the full iptables-restore payload (filter + nat) kube-proxy's iptables mode
 * writes for `snapshot`. The family comes from the snapshot and `nodeIP` defaults to the
 * snapshot node's first IP.
 * @throws InvalidOptionsError for unusable options.
 */
export function renderIptables(snapshot: ProxySnapshot, options: IptablesRenderOptions = {}): string {
  return restoreText(renderIptablesSnapshot(snapshot, options));
}

/** Like {@link renderIptables} but returns the structured ruleset (with per-port errors). */
export function renderIptablesSnapshot(
  snapshot: ProxySnapshot,
  options: IptablesRenderOptions = {},
): IptablesRuleset {
  const renderer = new IptablesRenderer(snapshotRenderOptions(snapshot, options));
  return renderer.render(new SnapshotAdapter().servicePorts(snapshot));
}

/** `options` with the family and node IP taken from the snapshot where not given. */
export function snapshotRenderOptions(
  snapshot: ProxySnapshot,
  options: IptablesRenderOptions,
): IptablesRenderOptions {
  const nodeIP = options.nodeIP ?? snapshot.node.ips[0];
  return {
    ...options,
    ipFamily: snapshotFamily(snapshot),
    ...definedFields({ nodeIP }),
  };
}
