/**
 * The pieces of kube-controller-manager's node lifecycle controller that are not about time:
 * which taints a Node's conditions call for, the zone a Node counts in, how a zone's health
 * is judged, and the rate-limited queue that paces NoExecute taints per zone
 * (upstream `pkg/controller/nodelifecycle`, `pkg/controller/nodelifecycle/scheduler`).
 *
 * @module
 */
import { realClock, TokenBucketRateLimiter } from '@nodeagent/core';
import { isPlainObject, type KubeObject } from './object.js';

type Rec = Record<string, unknown>;

/** `node.kubernetes.io/not-ready`: the Node's Ready condition is False. */
export const TAINT_NODE_NOT_READY = 'node.kubernetes.io/not-ready';
/** `node.kubernetes.io/unreachable`: the Node's Ready condition is Unknown (no heartbeat). */
export const TAINT_NODE_UNREACHABLE = 'node.kubernetes.io/unreachable';
/** `node.kubernetes.io/unschedulable`: `spec.unschedulable` is set. */
export const TAINT_NODE_UNSCHEDULABLE = 'node.kubernetes.io/unschedulable';

/** A Node taint as stored in `spec.taints`. */
export interface NodeTaint {
  /** Taint key. */
  readonly key: string;
  /** Taint value (often absent). */
  readonly value?: string;
  /** `NoSchedule`, `PreferNoSchedule` or `NoExecute`. */
  readonly effect: string;
  /** RFC 3339 time the taint was added (set by the controller). */
  readonly timeAdded?: string;
}

/** A Node condition as stored in `status.conditions`. */
export interface NodeCondition {
  /** `Ready`, `MemoryPressure`, ... */
  type: string;
  /** `True`, `False` or `Unknown`. */
  status: string;
  /** RFC 3339 time of the last heartbeat the kubelet posted for this condition. */
  lastHeartbeatTime?: string | null;
  /** RFC 3339 time the status last changed. */
  lastTransitionTime?: string | null;
  /** Machine-readable reason. */
  reason?: string;
  /** Human-readable message. */
  message?: string;
}

/** Which condition status calls for which taint key (upstream `nodeConditionToTaintKeyStatusMap`). */
const CONDITION_TAINTS: Readonly<Record<string, Readonly<Record<string, string>>>> = {
  Ready: { False: TAINT_NODE_NOT_READY, Unknown: TAINT_NODE_UNREACHABLE },
  MemoryPressure: { True: 'node.kubernetes.io/memory-pressure' },
  DiskPressure: { True: 'node.kubernetes.io/disk-pressure' },
  NetworkUnavailable: { True: 'node.kubernetes.io/network-unavailable' },
  PIDPressure: { True: 'node.kubernetes.io/pid-pressure' },
};

/** Taint keys the controller owns (upstream `taintKeyToNodeConditionMap`). */
const CONDITION_TAINT_KEYS = new Set(Object.values(CONDITION_TAINTS).flatMap((m) => Object.values(m)));

function rec(v: unknown): Rec {
  return isPlainObject(v) ? v : {};
}

/** The Node's conditions (a copy of the array; the objects are the stored ones). */
export function nodeConditions(node: KubeObject): NodeCondition[] {
  const conds = rec(node.status).conditions;
  return Array.isArray(conds) ? (conds.filter(isPlainObject) as unknown as NodeCondition[]) : [];
}

/** The condition of `type`, if the Node has one. */
export function nodeCondition(node: KubeObject, type: string): NodeCondition | undefined {
  return nodeConditions(node).find((c) => c.type === type);
}

/** The Node's taints, malformed entries dropped. */
export function nodeTaints(node: KubeObject): NodeTaint[] {
  const taints = rec(node.spec).taints;
  return (Array.isArray(taints) ? taints : [])
    .filter(isPlainObject)
    .filter((t) => typeof t.key === 'string' && typeof t.effect === 'string') as unknown as NodeTaint[];
}

/** Same key and effect (upstream `Taint.MatchTaint`). */
export function matchTaint(a: NodeTaint, b: NodeTaint): boolean {
  return a.key === b.key && a.effect === b.effect;
}

/** Whether the Node carries a taint matching `t` (key and effect). */
export function hasTaint(node: KubeObject, t: NodeTaint): boolean {
  return nodeTaints(node).some((x) => matchTaint(x, t));
}

/**
 * The NoSchedule taints the Node's conditions and `spec.unschedulable` call for, and those
 * it carries that it should not (upstream `doNoScheduleTaintingPass`: only NoSchedule taints
 * of the controller's keys are compared).
 */
export function noScheduleTaintDiff(node: KubeObject): { add: NodeTaint[]; remove: NodeTaint[] } {
  const want: NodeTaint[] = [];
  for (const c of nodeConditions(node)) {
    const key = CONDITION_TAINTS[c.type]?.[c.status];
    if (key !== undefined) want.push({ key, effect: 'NoSchedule' });
  }
  if (rec(node.spec).unschedulable === true)
    want.push({ key: TAINT_NODE_UNSCHEDULABLE, effect: 'NoSchedule' });
  const have = nodeTaints(node).filter(
    (t) =>
      t.effect === 'NoSchedule' && (t.key === TAINT_NODE_UNSCHEDULABLE || CONDITION_TAINT_KEYS.has(t.key)),
  );
  return {
    add: want.filter((w) => !have.some((h) => matchTaint(w, h))),
    remove: have.filter((h) => !want.some((w) => matchTaint(w, h))),
  };
}

/**
 * `spec.taints` after adding `add` (stamped `timeAdded`, replacing a taint of the same key
 * and effect) and removing every taint matching one of `remove` (upstream
 * `SwapNodeControllerTaint`). `undefined` when nothing changes.
 */
export function swapTaints(
  node: KubeObject,
  add: readonly NodeTaint[],
  remove: readonly NodeTaint[],
  timeAdded: string,
): NodeTaint[] | undefined {
  const raw = rec(node.spec).taints;
  let taints = (Array.isArray(raw) ? raw : []) as NodeTaint[];
  let changed = false;
  for (const a of add) {
    const stamped: NodeTaint = { ...a, timeAdded };
    const i = taints.findIndex((t) => isPlainObject(t) && matchTaint(t, a));
    const old = taints[i];
    if (old !== undefined && old.value === a.value && old.timeAdded === timeAdded) continue;
    taints = i >= 0 ? taints.map((t, j) => (j === i ? stamped : t)) : [...taints, stamped];
    changed = true;
  }
  const kept = taints.filter((t) => !(isPlainObject(t) && remove.some((r) => matchTaint(t, r))));
  if (kept.length !== taints.length) changed = true;
  return changed ? kept : undefined;
}

/** Label that keeps a Node out of the zone health computation. */
export const LABEL_EXCLUDE_DISRUPTION = 'node.kubernetes.io/exclude-disruption';

/** The Node's zone key (upstream `GetZoneKey`: region and zone labels, `''` without). */
export function zoneKey(node: KubeObject): string {
  const labels = rec(node.metadata?.labels);
  const str = (k: string): string => (typeof labels[k] === 'string' ? (labels[k] as string) : '');
  const region = str('topology.kubernetes.io/region') || str('failure-domain.beta.kubernetes.io/region');
  const zone = str('topology.kubernetes.io/zone') || str('failure-domain.beta.kubernetes.io/zone');
  return region === '' && zone === '' ? '' : `${region}:\x00:${zone}`;
}

/** Health of a zone (upstream `ZoneState`). */
export type ZoneState = 'Initial' | 'Normal' | 'PartialDisruption' | 'FullDisruption';

/**
 * How many Nodes of a zone are not Ready and what that makes the zone (upstream
 * `ComputeZoneState`): no Ready Node → FullDisruption; more than 2 not Ready and at least
 * `unhealthyZoneThreshold` of them → PartialDisruption; Normal otherwise.
 */
export function computeZoneState(
  readyConditions: ReadonlyArray<NodeCondition | undefined>,
  unhealthyZoneThreshold: number,
): { unhealthy: number; state: ZoneState } {
  const ready = readyConditions.filter((c) => c?.status === 'True').length;
  const notReady = readyConditions.length - ready;
  if (ready === 0 && notReady > 0) return { unhealthy: notReady, state: 'FullDisruption' };
  if (notReady > 2 && notReady / (notReady + ready) >= unhealthyZoneThreshold)
    return { unhealthy: notReady, state: 'PartialDisruption' };
  return { unhealthy: notReady, state: 'Normal' };
}

/** Tokens a zone's NoExecute tainter may hold (upstream `EvictionRateLimiterBurst`). */
const EVICTION_RATE_LIMITER_BURST = 1;

/**
 * The zone's limiter: client-go's token bucket (core's `TokenBucketRateLimiter`, starting
 * full with burst 1); `qps <= 0` never accepts (upstream `NewFakeNeverRateLimiter`). `qps`
 * is kept as given, for {@link RateLimitedTimedQueue.swapLimiter}'s comparison.
 */
class ZoneLimiter {
  readonly #bucket: TokenBucketRateLimiter;
  constructor(readonly qps: number) {
    this.#bucket =
      qps > 0
        ? new TokenBucketRateLimiter(qps, EVICTION_RATE_LIMITER_BURST, realClock)
        : new TokenBucketRateLimiter(0, 0, realClock);
  }

  tryAccept(nowMs: number): boolean {
    return this.#bucket.tryAcceptAt(nowMs);
  }
}

/** One queued Node (upstream `TimedValue`). */
export interface TimedValue {
  /** The Node name. */
  readonly value: string;
  /** The Node uid when queued. */
  readonly uid: string;
  /** When it may be processed next, ms since the epoch. */
  processAtMs: number;
}

/**
 * Upstream `RateLimitedTimedQueue`: a unique queue of Node names ordered by `processAtMs`,
 * drained by {@link RateLimitedTimedQueue.try} under a token bucket. A name stays "known"
 * after it was processed, so it is not queued again until {@link RateLimitedTimedQueue.remove}.
 */
export class RateLimitedTimedQueue {
  readonly #queue: TimedValue[] = [];
  readonly #set = new Set<string>();
  #limiter: ZoneLimiter;

  /**
   * A queue limited to `qps` (burst 1).
   * @param _nowMs unused: the bucket starts full, so when it was made does not matter.
   */
  constructor(qps: number, _nowMs: number) {
    this.#limiter = new ZoneLimiter(qps);
  }

  /** Queues `value` unless it is known; true when it was added. */
  add(value: string, uid: string, nowMs: number): boolean {
    if (this.#set.has(value)) return false;
    this.#set.add(value);
    this.#queue.push({ value, uid, processAtMs: nowMs });
    this.#queue.sort((a, b) => a.processAtMs - b.processAtMs);
    return true;
  }

  /** Forgets `value` (queued or known); true when it was known. */
  remove(value: string): boolean {
    const i = this.#queue.findIndex((v) => v.value === value);
    if (i >= 0) this.#queue.splice(i, 1);
    return this.#set.delete(value);
  }

  /** Number of queued values. */
  get length(): number {
    return this.#queue.length;
  }

  /**
   * Processes queued values in order while the limiter gives tokens and they are due:
   * `fn` returns `[true]` when done (the value stays known), `[false, retryMs]` to retry later.
   */
  try(nowMs: number, fn: (v: TimedValue) => [boolean, number?]): void {
    for (let head = this.#queue[0]; head !== undefined; head = this.#queue[0]) {
      if (!this.#limiter.tryAccept(nowMs)) break;
      if (nowMs < head.processAtMs) break;
      const [ok, waitMs = 0] = fn(head);
      this.#queue.shift();
      if (!ok) {
        head.processAtMs = nowMs + waitMs + 1;
        this.#queue.push(head);
        this.#queue.sort((a, b) => a.processAtMs - b.processAtMs);
      }
    }
  }

  /** Replaces the limiter with one of `qps` (upstream `SwapLimiter`); same qps → unchanged. */
  swapLimiter(qps: number, nowMs: number): void {
    if (this.#limiter.qps === qps) return;
    const next = new ZoneLimiter(qps);
    // As upstream: a drained limiter hands a drained one over (burst 1).
    if (qps > 0 && !this.#limiter.tryAccept(nowMs)) next.tryAccept(nowMs);
    this.#limiter = next;
  }
}
