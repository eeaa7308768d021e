/**
 * @nodeagent/stats — the kubelet's resource statistics.
 *
 * @packageDocumentation
 */
export * from './summary-types.js';
