/**
 * An optional node lifecycle controller (`nodeLifecycleController`), as kube-controller-manager's
 * (`pkg/controller/nodelifecycle/node_lifecycle_controller.go`): every `nodeMonitorPeriodMs` it
 * checks each Node's heartbeats — a new `lastHeartbeatTime` on its Ready condition, or a newer
 * `spec.renewTime` on its Lease in `kube-node-lease` — and, when none came for
 * `nodeMonitorGracePeriodMs` (`nodeStartupGracePeriodMs` for a Node that never posted a Ready
 * condition), sets Ready, MemoryPressure, DiskPressure and PIDPressure to `Unknown`
 * (`NodeStatusUnknown`, "Kubelet stopped posting node status."; `NodeStatusNeverUpdated`,
 * "Kubelet never posted node status." for a condition never posted), marks the Node's pods
 * not Ready and records `NodeNotReady`. It keeps the condition taints (`not-ready`,
 * `unreachable`, `memory-pressure`, ... with effect NoSchedule) in step with the conditions on
 * every Node change, and adds the `not-ready` / `unreachable` NoExecute taints at upstream's
 * pace (`--node-eviction-rate` per zone, none while every zone is fully disrupted), removing
 * them once the Node is Ready again.
 *
 * Not done here: the taint eviction controller (pods not tolerating a NoExecute taint are never
 * deleted; upstream deletes them after their `tolerationSeconds`, 300 s by default through the
 * DefaultTolerationSeconds admission), the beta os/arch label reconciliation, and metrics.
 *
 * @module
 */

import { type Clock, type Logger, noopLogger, type Timer } from '@nodeagent/core';
import { CoalescedPass } from './coalesced-pass.js';
import {
  type NodeLifecycleControllerOptions,
  type NodeLifecycleSettings,
  nodeLifecycleSettings,
} from './node-lifecycle-options.js';
import { NodeControllerRecorder } from './node-lifecycle-records.js';
import {
  computeZoneState,
  hasTaint,
  LABEL_EXCLUDE_DISRUPTION,
  type NodeCondition,
  type NodeTaint,
  nodeCondition,
  noScheduleTaintDiff,
  RateLimitedTimedQueue,
  swapTaints,
  TAINT_NODE_NOT_READY,
  TAINT_NODE_UNREACHABLE,
  type ZoneState,
  zoneKey,
} from './node-lifecycle-taints.js';
import { isPlainObject, type KubeObject } from './object.js';
import type { ObjectStore, StoreChange } from './store.js';

type Rec = Record<string, unknown>;

/** Upstream `scheduler.NodeEvictionPeriod`: how often the NoExecute tainting pass runs. */
const NODE_EVICTION_PERIOD_MS = 100;
/** The Lease namespace the kubelet renews its heartbeat in. */
const NODE_LEASE_NAMESPACE = 'kube-node-lease';
const PRESSURE_CONDITIONS = ['Ready', 'MemoryPressure', 'DiskPressure', 'PIDPressure'] as const;
const UNREACHABLE_NO_EXECUTE: NodeTaint = { key: TAINT_NODE_UNREACHABLE, effect: 'NoExecute' };
const NOT_READY_NO_EXECUTE: NodeTaint = { key: TAINT_NODE_NOT_READY, effect: 'NoExecute' };

/** What the controller last saw of a Node (upstream `nodeHealthData`). */
interface NodeHealth {
  /** When the controller last saw a heartbeat, on its own clock (ms). */
  probeTimestampMs: number;
  readyTransitionTimestampMs: number;
  status: Rec;
  lease: KubeObject | undefined;
}

function rec(v: unknown): Rec {
  return isPlainObject(v) ? v : {};
}

function isoSeconds(ms: number): string {
  return new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z');
}

function timeMs(v: unknown): number | undefined {
  if (typeof v !== 'string') return undefined;
  const t = Date.parse(v);
  return Number.isNaN(t) ? undefined : t;
}

/** A MicroTime as microseconds since the epoch (Date.parse keeps only milliseconds). */
function microTime(v: unknown): number | undefined {
  const ms = timeMs(v);
  if (ms === undefined || typeof v !== 'string') return undefined;
  const frac = /\.(\d+)/.exec(v)?.[1] ?? '';
  return Math.floor(ms / 1000) * 1_000_000 + Number(frac.padEnd(6, '0').slice(0, 6));
}

function sameTime(a: unknown, b: unknown): boolean {
  return timeMs(a) === timeMs(b);
}

function conditionsEqual(a: NodeCondition | undefined, b: NodeCondition | undefined): boolean {
  if (a === undefined || b === undefined) return a === b;
  return (
    a.type === b.type &&
    a.status === b.status &&
    (a.reason ?? '') === (b.reason ?? '') &&
    (a.message ?? '') === (b.message ?? '') &&
    sameTime(a.lastHeartbeatTime, b.lastHeartbeatTime) &&
    sameTime(a.lastTransitionTime, b.lastTransitionTime)
  );
}

function statusCondition(status: Rec, type: string): NodeCondition | undefined {
  const conds = status.conditions;
  return (Array.isArray(conds) ? conds : []).find((c) => rec(c).type === type) as NodeCondition | undefined;
}

/** The node lifecycle controller; see the module documentation. */
export class NodeLifecycleController {
  readonly #store: ObjectStore;
  readonly #clock: Clock;
  readonly #log: Logger;
  readonly #records: NodeControllerRecorder;
  readonly #s: NodeLifecycleSettings;
  readonly #known = new Map<string, KubeObject>();
  readonly #health = new Map<string, NodeHealth>();
  readonly #zoneStates = new Map<string, ZoneState>();
  readonly #tainters = new Map<string, RateLimitedTimedQueue>();
  readonly #nodeQueue = new Set<string>();
  readonly #podQueue = new Set<string>();
  #timers: Timer[] = [];
  #unsubscribe: (() => void) | undefined;
  readonly #pass = new CoalescedPass(() => {
    if (!this.#unsubscribe) return;
    const nodes = [...this.#nodeQueue];
    this.#nodeQueue.clear();
    for (const n of nodes) this.#guard('NoSchedule tainting', () => this.#doNoScheduleTaintingPass(n));
    const pods = [...this.#podQueue];
    this.#podQueue.clear();
    for (const p of pods) this.#guard('pod', () => this.#processPod(p));
  });

  /**
   * Creates a stopped controller; {@link NodeLifecycleController.start} starts it.
   * @throws InvalidOptionsError for an option out of range
   */
  constructor(options: NodeLifecycleControllerOptions) {
    this.#store = options.store;
    this.#clock = options.clock;
    this.#log = options.logger ?? noopLogger;
    this.#records = new NodeControllerRecorder(this.#store, this.#clock, this.#log);
    this.#s = nodeLifecycleSettings(options);
  }

  /** The settings in use, defaults applied. */
  get settings(): Readonly<NodeLifecycleSettings> {
    return this.#s;
  }

  /** Watches Node and Pod changes and starts the monitor and NoExecute tainting timers. */
  start(): void {
    if (this.#unsubscribe) return;
    this.#unsubscribe = this.#store.onChange((c) => this.#onChange(c));
    for (const n of this.#store.list('nodes')) this.#nodeQueue.add(n.metadata?.name ?? '');
    this.#kick();
    // As upstream's wait.Until: a first pass at once, then one every period.
    this.#guard('monitor', () => this.monitorNodeHealth());
    this.#timers = [
      this.#clock.setInterval(
        () => this.#guard('monitor', () => this.monitorNodeHealth()),
        this.#s.nodeMonitorPeriodMs,
      ),
      this.#clock.setInterval(
        () => this.#guard('tainting', () => this.doNoExecuteTaintingPass()),
        NODE_EVICTION_PERIOD_MS,
      ),
    ];
    for (const t of this.#timers) t.unref();
  }

  /** Stops the timers and the watch. Idempotent. */
  stop(): void {
    for (const t of this.#timers) t.cancel();
    this.#timers = [];
    this.#unsubscribe?.();
    this.#unsubscribe = undefined;
    this.#pass.release();
  }

  /** Resolves once no Node or Pod change is waiting to be handled. */
  idle(): Promise<void> {
    return this.#pass.idle();
  }

  #guard(what: string, fn: () => void): void {
    try {
      fn();
    } catch (err) {
      this.#log.error({ err }, `mini-apiserver node lifecycle controller: ${what} pass failed`);
    }
  }

  #onChange(c: StoreChange): void {
    const r = c.type.resource;
    if (r === 'nodes' && c.eventType !== 'DELETED') {
      this.#nodeQueue.add(c.object().metadata?.name ?? '');
      this.#kick();
    } else if (r === 'pods' && c.eventType !== 'DELETED') {
      // upstream podUpdated: a pod newly bound to a node.
      const pod = c.object();
      const node = rec(pod.spec).nodeName;
      const before = c.previous ? rec(c.previous().spec).nodeName : undefined;
      if (typeof node === 'string' && node !== '' && node !== before) {
        this.#podQueue.add(`${pod.metadata?.namespace ?? ''}/${pod.metadata?.name ?? ''}`);
        this.#kick();
      }
    }
  }

  #kick(): void {
    this.#pass.request();
  }

  /** Upstream `doNoScheduleTaintingPass`: condition taints (NoSchedule) follow the conditions. */
  #doNoScheduleTaintingPass(name: string): void {
    const node = this.#store.tryGet('nodes', undefined, name);
    if (!node) return;
    const { add, remove } = noScheduleTaintDiff(node);
    if (add.length > 0 || remove.length > 0) this.#swapTaints(name, add, remove);
  }

  /** Upstream `processPod`: a pod bound to a Node known not Ready is marked not Ready. */
  #processPod(key: string): void {
    const [ns, name] = key.split('/') as [string, string];
    const pod = this.#store.tryGet('pods', ns, name);
    const nodeName = rec(pod?.spec).nodeName;
    if (!pod || typeof nodeName !== 'string') return;
    const health = this.#health.get(nodeName);
    if (!health || !this.#store.tryGet('nodes', undefined, nodeName)) return;
    const ready = statusCondition(health.status, 'Ready');
    if (ready && ready.status !== 'True') this.#records.markPodsNotReady([pod], nodeName);
  }

  /** One monitor pass (upstream `monitorNodeHealth`); runs every `nodeMonitorPeriodMs`. */
  monitorNodeHealth(): void {
    const nodes = this.#store.list('nodes').map((n) => structuredClone(n));
    const names = new Set(nodes.map((n) => n.metadata?.name ?? ''));
    for (const node of nodes) {
      const name = node.metadata?.name ?? '';
      if (this.#known.has(name)) {
        if (!this.#zoneStates.has(zoneKey(node))) this.#addZone(node);
        continue;
      }
      this.#records.nodeEvent(node, 'RegisteredNode', `Registered Node ${name} in Controller`);
      this.#known.set(name, node);
      this.#addZone(node);
      this.#markNodeAsReachable(name);
    }
    for (const [name, node] of this.#known) {
      if (names.has(name)) continue;
      this.#records.nodeEvent(node, 'RemovingNode', `Removing Node ${name} from Controller`);
      this.#known.delete(name);
      // Upstream keeps the health data of a deleted Node; forgetting it gives a Node
      // registered again under the same name a fresh startup grace period.
      this.#health.delete(name);
      for (const q of this.#tainters.values()) q.remove(name);
    }
    const zoneConditions = new Map<string, Array<NodeCondition | undefined>>();
    for (const node of nodes) {
      const name = node.metadata?.name ?? '';
      let result: { observed: NodeCondition; current: NodeCondition | undefined };
      try {
        result = this.#tryUpdateNodeHealth(node);
      } catch (err) {
        this.#log.warn({ err, node: name }, 'mini-apiserver node lifecycle controller: health update failed');
        continue;
      }
      const { observed, current } = result;
      if (rec(node.metadata?.labels)[LABEL_EXCLUDE_DISRUPTION] === undefined) {
        const zone = zoneKey(node);
        zoneConditions.set(zone, [...(zoneConditions.get(zone) ?? []), current]);
      }
      if (current === undefined) continue;
      this.#processTaintBasedEviction(name, observed);
      if (current.status !== 'True' && observed.status === 'True') {
        this.#records.nodeStatusChange(node, 'NodeNotReady');
        const pods = this.#store.list('pods').filter((p) => rec(p.spec).nodeName === name);
        this.#records.markPodsNotReady(pods, name);
      }
    }
    this.#handleDisruption(zoneConditions, nodes);
  }

  /**
   * Upstream `tryUpdateNodeHealth`: records when the controller last saw a heartbeat and
   * posts Unknown conditions once the grace period passed without one.
   */
  #tryUpdateNodeHealth(node: KubeObject): { observed: NodeCondition; current: NodeCondition | undefined } {
    const name = node.metadata?.name ?? '';
    const now = this.#clock.now();
    const status = rec(node.status);
    const created = node.metadata?.creationTimestamp;
    const createdMs = timeMs(created) ?? now;
    let health = this.#health.get(name);
    let current = nodeCondition(node, 'Ready');
    let observed: NodeCondition;
    let gracePeriodMs: number;
    if (current === undefined) {
      // Never posted: a fake Unknown condition from the creation time.
      observed = {
        type: 'Ready',
        status: 'Unknown',
        lastHeartbeatTime: created ?? null,
        lastTransitionTime: created ?? null,
      };
      gracePeriodMs = this.#s.nodeStartupGracePeriodMs;
      if (health) health.status = status;
      else
        health = {
          status,
          probeTimestampMs: createdMs,
          readyTransitionTimestampMs: createdMs,
          lease: undefined,
        };
    } else {
      observed = { ...current };
      gracePeriodMs = this.#s.nodeMonitorGracePeriodMs;
    }
    const saved = health ? statusCondition(health.status, 'Ready') : undefined;
    const savedLease = health?.lease;
    const fresh = (transitionMs: number): NodeHealth => ({
      status,
      probeTimestampMs: now,
      readyTransitionTimestampMs: transitionMs,
      lease: undefined,
    });
    if (health === undefined || (saved === undefined) !== (current === undefined)) {
      health = fresh(now);
    } else if (saved && current && !sameTime(saved.lastHeartbeatTime, current.lastHeartbeatTime)) {
      health = fresh(
        sameTime(saved.lastTransitionTime, current.lastTransitionTime)
          ? health.readyTransitionTimestampMs
          : now,
      );
    }
    // A renewed Lease is a heartbeat too, whether or not the kubelet ever posted a status.
    const lease = this.#store.tryGet('leases', NODE_LEASE_NAMESPACE, name);
    const renew = microTime(rec(lease?.spec).renewTime);
    const savedRenew = microTime(rec(savedLease?.spec).renewTime);
    if (lease && (savedLease === undefined || (savedRenew ?? -1) < (renew ?? -1))) {
      health.lease = lease;
      health.probeTimestampMs = now;
    }
    this.#health.set(name, health);
    if (now > health.probeTimestampMs + gracePeriodMs) {
      const nowIso = isoSeconds(now);
      const conds = Array.isArray(status.conditions) ? [...(status.conditions as NodeCondition[])] : [];
      for (const type of PRESSURE_CONDITIONS) {
        const i = conds.findIndex((c) => rec(c).type === type);
        const c = conds[i];
        if (c === undefined) {
          conds.push({
            type,
            status: 'Unknown',
            lastHeartbeatTime: created ?? null,
            lastTransitionTime: nowIso,
            reason: 'NodeStatusNeverUpdated',
            message: 'Kubelet never posted node status.',
          });
        } else if (c.status !== 'Unknown') {
          conds[i] = {
            ...c,
            status: 'Unknown',
            reason: 'NodeStatusUnknown',
            message: 'Kubelet stopped posting node status.',
            lastTransitionTime: nowIso,
          };
        }
      }
      current = statusCondition({ conditions: conds }, 'Ready');
      if (!conditionsEqual(current, observed)) {
        const latest = this.#store.get('nodes', undefined, name);
        latest.status = { ...rec(latest.status), conditions: conds };
        const written = this.#store.update('nodes', latest, { subresource: 'status' });
        this.#health.set(name, {
          status: rec(written.status),
          probeTimestampMs: health.probeTimestampMs,
          readyTransitionTimestampMs: now,
          lease,
        });
      }
    }
    return { observed, current };
  }

  /** Upstream `processTaintBaseEviction`, on the Ready condition seen before this pass. */
  #processTaintBasedEviction(name: string, observed: NodeCondition): void {
    const node = this.#store.tryGet('nodes', undefined, name);
    if (!node) return;
    if (observed.status === 'False') {
      if (hasTaint(node, UNREACHABLE_NO_EXECUTE))
        this.#swapTaints(name, [NOT_READY_NO_EXECUTE], [UNREACHABLE_NO_EXECUTE]);
      else this.#markNodeForTainting(node, 'False');
    } else if (observed.status === 'Unknown') {
      if (hasTaint(node, NOT_READY_NO_EXECUTE))
        this.#swapTaints(name, [UNREACHABLE_NO_EXECUTE], [NOT_READY_NO_EXECUTE]);
      else this.#markNodeForTainting(node, 'Unknown');
    } else if (observed.status === 'True') {
      this.#markNodeAsReachable(name);
    }
  }

  #markNodeForTainting(node: KubeObject, status: 'False' | 'Unknown'): void {
    const name = node.metadata?.name ?? '';
    const q = this.#tainters.get(zoneKey(node));
    if (!q) return;
    const taint = status === 'False' ? NOT_READY_NO_EXECUTE : UNREACHABLE_NO_EXECUTE;
    if (!hasTaint(node, taint)) q.remove(name);
    q.add(name, node.metadata?.uid ?? '', this.#clock.now());
  }

  /** Removes the NoExecute condition taints and forgets the Node in its zone's queue. */
  #markNodeAsReachable(name: string): boolean {
    this.#swapTaints(name, [], [UNREACHABLE_NO_EXECUTE, NOT_READY_NO_EXECUTE]);
    const node = this.#store.tryGet('nodes', undefined, name);
    return node ? (this.#tainters.get(zoneKey(node))?.remove(name) ?? false) : false;
  }

  #addZone(node: KubeObject): void {
    const zone = zoneKey(node);
    if (this.#zoneStates.has(zone)) return;
    this.#zoneStates.set(zone, 'Initial');
    this.#tainters.set(zone, new RateLimitedTimedQueue(this.#s.nodeEvictionRate, this.#clock.now()));
  }

  /** Upstream `doNoExecuteTaintingPass`: taints queued Nodes as their zone's limiter allows. */
  doNoExecuteTaintingPass(): void {
    const now = this.#clock.now();
    for (const q of this.#tainters.values()) {
      if (q.length === 0) continue;
      q.try(now, (v) => {
        const node = this.#store.tryGet('nodes', undefined, v.value);
        if (!node) return [true];
        const ready = nodeCondition(node, 'Ready');
        if (!ready) return [false, 50];
        if (ready.status === 'False')
          return [this.#swapTaints(v.value, [NOT_READY_NO_EXECUTE], [UNREACHABLE_NO_EXECUTE])];
        if (ready.status === 'Unknown')
          return [this.#swapTaints(v.value, [UNREACHABLE_NO_EXECUTE], [NOT_READY_NO_EXECUTE])];
        return [true];
      });
    }
  }

  /** Upstream `handleDisruption`: zone states decide the NoExecute tainting rate. */
  #handleDisruption(
    zoneConditions: Map<string, Array<NodeCondition | undefined>>,
    nodes: KubeObject[],
  ): void {
    const now = this.#clock.now();
    const newStates = new Map<string, ZoneState>();
    let allAreFullyDisrupted = true;
    for (const [zone, conds] of zoneConditions) {
      const { state } = computeZoneState(conds, this.#s.unhealthyZoneThreshold);
      if (state !== 'FullDisruption') allAreFullyDisrupted = false;
      newStates.set(zone, state);
      if (!this.#zoneStates.has(zone)) this.#zoneStates.set(zone, 'Initial');
    }
    let allWasFullyDisrupted = true;
    for (const [zone, state] of [...this.#zoneStates]) {
      if (!zoneConditions.has(zone)) {
        this.#zoneStates.delete(zone);
        continue;
      }
      if (state !== 'FullDisruption') {
        allWasFullyDisrupted = false;
        break;
      }
    }
    if (allAreFullyDisrupted && allWasFullyDisrupted) return;
    if (allAreFullyDisrupted) {
      // Every Node is down: more likely the control plane's network than the Nodes, so no
      // NoExecute taint stays and none is added until a Node is Ready again.
      for (const n of nodes) this.#markNodeAsReachable(n.metadata?.name ?? '');
      for (const zone of this.#zoneStates.keys()) {
        this.#tainters.get(zone)?.swapLimiter(0, now);
        this.#zoneStates.set(zone, 'FullDisruption');
      }
      return;
    }
    if (allWasFullyDisrupted) {
      // Back from full disruption: every Node gets a fresh grace period.
      for (const n of nodes) {
        const h = this.#health.get(n.metadata?.name ?? '');
        if (h) {
          h.probeTimestampMs = now;
          h.readyTransitionTimestampMs = now;
        }
      }
      for (const zone of this.#zoneStates.keys()) {
        const state = newStates.get(zone) ?? 'Normal';
        this.#setLimiterInZone(zone, zoneConditions.get(zone)?.length ?? 0, state);
        this.#zoneStates.set(zone, state);
      }
      return;
    }
    for (const [zone, state] of [...this.#zoneStates]) {
      const next = newStates.get(zone);
      if (next === undefined || next === state) continue;
      this.#setLimiterInZone(zone, zoneConditions.get(zone)?.length ?? 0, next);
      this.#zoneStates.set(zone, next);
    }
  }

  #setLimiterInZone(zone: string, size: number, state: ZoneState): void {
    const q = this.#tainters.get(zone);
    const now = this.#clock.now();
    if (state === 'Normal' || state === 'FullDisruption') q?.swapLimiter(this.#s.nodeEvictionRate, now);
    else if (state === 'PartialDisruption')
      q?.swapLimiter(size > this.#s.largeClusterSizeThreshold ? this.#s.secondaryNodeEvictionRate : 0, now);
  }

  /** Adds and removes taints on the stored Node; true when it is as wanted (or gone). */
  #swapTaints(name: string, add: readonly NodeTaint[], remove: readonly NodeTaint[]): boolean {
    const node = this.#store.tryGet('nodes', undefined, name);
    if (!node) return false;
    const taints = swapTaints(node, add, remove, isoSeconds(this.#clock.now()));
    if (taints === undefined) return true;
    const spec = { ...rec(node.spec) };
    if (taints.length > 0) spec.taints = taints;
    else delete spec.taints;
    node.spec = spec;
    try {
      this.#store.update('nodes', node);
      return true;
    } catch (err) {
      this.#log.warn({ err, node: name }, 'mini-apiserver node lifecycle controller: taint update failed');
      return false;
    }
  }
}
