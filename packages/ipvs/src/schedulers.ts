/**
 * The IPVS schedulers kube-proxy accepts for `--ipvs-scheduler`, and the check of a name.
 *
 * @module
 */

/** kube-proxy's default scheduler (round robin), used when none (or `''`) is given. */
export const DEFAULT_IPVS_SCHEDULER = 'rr';

/**
 * The scheduler names kube-proxy knows: its `IPVSSchedulerMethod` values (`rr` round robin,
 * `wrr` weighted round robin, `lc` least connection, `wlc` weighted least connection, `lblc`
 * locality-based least connection, `lblcr` the same with replication, `sh` source hashing,
 * `dh` destination hashing, `sed` shortest expected delay, `nq` never queue) plus `mh` (Maglev
 * hashing), which its proxier supports by setting the source-hash flag.
 */
export const IPVS_SCHEDULERS: readonly string[] = [
  'rr',
  'wrr',
  'lc',
  'wlc',
  'lblc',
  'lblcr',
  'sh',
  'dh',
  'sed',
  'nq',
  'mh',
];

/**
 * Why `name` is not an accepted scheduler, in kube-proxy's validation wording, or undefined
 * when it is one (`''` means the default).
 *
 * @example
 * ```ts
 * ipvsSchedulerProblem('wlc'); // undefined
 * ipvsSchedulerProblem('fast'); // 'must be in [rr wrr ... mh], blank means the default algorithm method (currently rr)'
 * ```
 */
export function ipvsSchedulerProblem(name: string): string | undefined {
  if (name === '' || IPVS_SCHEDULERS.includes(name)) return undefined;
  return `must be in [${IPVS_SCHEDULERS.join(' ')}], blank means the default algorithm method (currently ${DEFAULT_IPVS_SCHEDULER})`;
}
