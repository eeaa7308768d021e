/**
 * The options of the node lifecycle controller, with kube-controller-manager's flag names and
 * defaults (`--node-monitor-period`, `--node-monitor-grace-period`, `--node-startup-grace-period`,
 * `--node-eviction-rate`, ...), and their validation.
 *
 * @module
 */
import { type Clock, InvalidOptionsError, type Logger } from '@nodeagent/core';
import type { ObjectStore } from './store.js';

/** Default of `nodeMonitorPeriodMs`: kube-controller-manager's `--node-monitor-period` of 5 s. */
export const DEFAULT_NODE_MONITOR_PERIOD_MS = 5_000;
/**
 * Default of `nodeMonitorGracePeriodMs`: kube-controller-manager's `--node-monitor-grace-period`,
 * 50 s since Kubernetes 1.32 (40 s before; kubernetes/kubernetes#126287 changed
 * `pkg/controller/nodelifecycle/config/v1alpha1/defaults.go` and the controller's test).
 */
export const DEFAULT_NODE_MONITOR_GRACE_PERIOD_MS = 50_000;
/** Default of `nodeStartupGracePeriodMs`: `--node-startup-grace-period` of 60 s (same defaults file). */
export const DEFAULT_NODE_STARTUP_GRACE_PERIOD_MS = 60_000;
/** `--node-eviction-rate`: Nodes per second that get a NoExecute taint in a healthy zone. */
export const DEFAULT_NODE_EVICTION_RATE = 0.1;
/** `--secondary-node-eviction-rate`: the same in a partially disrupted large zone. */
export const DEFAULT_SECONDARY_NODE_EVICTION_RATE = 0.01;
/** `--large-cluster-size-threshold`: zones up to this size stop tainting when partially disrupted. */
export const DEFAULT_LARGE_CLUSTER_SIZE_THRESHOLD = 50;
/** `--unhealthy-zone-threshold`: share of not-Ready Nodes (and more than 2) that disrupts a zone. */
export const DEFAULT_UNHEALTHY_ZONE_THRESHOLD = 0.55;

/** Options of {@link NodeLifecycleController}. */
export interface NodeLifecycleControllerOptions {
  /** Where Nodes, Leases, Pods and Events live. */
  readonly store: ObjectStore;
  /** Source of time and timers. */
  readonly clock: Clock;
  /** Logger. @default noopLogger */
  readonly logger?: Logger;
  /**
   * How often Node heartbeats are checked (`--node-monitor-period`). Minimum: 1.
   * @default 5000
   */
  readonly nodeMonitorPeriodMs?: number;
  /**
   * Time without a heartbeat (Ready `lastHeartbeatTime` or Lease `renewTime`) after which a
   * Node's conditions go Unknown (`--node-monitor-grace-period`). Minimum: 0.
   * @default 50000
   */
  readonly nodeMonitorGracePeriodMs?: number;
  /**
   * The same for a Node that never posted a Ready condition, counted from its creation
   * (`--node-startup-grace-period`). Minimum: 0.
   * @default 60000
   */
  readonly nodeStartupGracePeriodMs?: number;
  /**
   * Nodes per second per zone that get a NoExecute taint (`--node-eviction-rate`). Minimum: 0.
   * @default 0.1
   */
  readonly nodeEvictionRate?: number;
  /**
   * The same in a partially disrupted zone larger than `largeClusterSizeThreshold`
   * (`--secondary-node-eviction-rate`). Minimum: 0.
   * @default 0.01
   */
  readonly secondaryNodeEvictionRate?: number;
  /** `--large-cluster-size-threshold`. Minimum: 0. @default 50 */
  readonly largeClusterSizeThreshold?: number;
  /** `--unhealthy-zone-threshold`, a share in (0, 1]. @default 0.55 */
  readonly unhealthyZoneThreshold?: number;
}

function check(name: string, value: number, min: number, max = Number.POSITIVE_INFINITY): number {
  if (!Number.isFinite(value) || value < min || value > max) {
    throw new InvalidOptionsError(
      'NodeLifecycleController',
      `${name} must be a finite number ${max === Number.POSITIVE_INFINITY ? `>= ${min}` : `in [${min}, ${max}]`}, got ${value}`,
    );
  }
  return value;
}

/** The timing and rate settings of {@link NodeLifecycleController}, defaults applied. */
export type NodeLifecycleSettings = Required<
  Omit<NodeLifecycleControllerOptions, 'store' | 'clock' | 'logger'>
>;

/**
 * Validates the settings of {@link NodeLifecycleController} and applies the defaults.
 * @throws InvalidOptionsError naming the option out of range
 */
export function nodeLifecycleSettings(
  o: Omit<NodeLifecycleControllerOptions, 'store' | 'clock' | 'logger'>,
): NodeLifecycleSettings {
  const unhealthy = o.unhealthyZoneThreshold ?? DEFAULT_UNHEALTHY_ZONE_THRESHOLD;
  if (!(unhealthy > 0))
    throw new InvalidOptionsError(
      'NodeLifecycleController',
      `unhealthyZoneThreshold must be in (0, 1], got ${unhealthy}`,
    );
  return {
    nodeMonitorPeriodMs: check(
      'nodeMonitorPeriodMs',
      o.nodeMonitorPeriodMs ?? DEFAULT_NODE_MONITOR_PERIOD_MS,
      1,
    ),
    nodeMonitorGracePeriodMs: check(
      'nodeMonitorGracePeriodMs',
      o.nodeMonitorGracePeriodMs ?? DEFAULT_NODE_MONITOR_GRACE_PERIOD_MS,
      0,
    ),
    nodeStartupGracePeriodMs: check(
      'nodeStartupGracePeriodMs',
      o.nodeStartupGracePeriodMs ?? DEFAULT_NODE_STARTUP_GRACE_PERIOD_MS,
      0,
    ),
    nodeEvictionRate: check('nodeEvictionRate', o.nodeEvictionRate ?? DEFAULT_NODE_EVICTION_RATE, 0),
    secondaryNodeEvictionRate: check(
      'secondaryNodeEvictionRate',
      o.secondaryNodeEvictionRate ?? DEFAULT_SECONDARY_NODE_EVICTION_RATE,
      0,
    ),
    largeClusterSizeThreshold: check(
      'largeClusterSizeThreshold',
      o.largeClusterSizeThreshold ?? DEFAULT_LARGE_CLUSTER_SIZE_THRESHOLD,
      0,
    ),
    unhealthyZoneThreshold: check('unhealthyZoneThreshold', unhealthy, 0, 1),
  };
}
