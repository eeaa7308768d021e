/**
 * An optional minimal scheduler (`--schedule`): binds each pod without `spec.nodeName`
 * (and with `schedulerName: default-scheduler`) to a node that fits, as the default
 * scheduler's filter plugins decide (NodeUnschedulable, NodeAffinity for `nodeSelector` and
 * required node affinity terms, TaintToleration for NoSchedule/NoExecute taints, a NotReady
 * node counted as tainted `node.kubernetes.io/not-ready`, NodeResourcesFit for cpu, memory
 * and pod count), through the same code as `POST pods/{name}/binding`; records `Scheduled` and
 * `FailedScheduling` events with the default scheduler's messages, and retries unschedulable
 * pods when nodes or pods change. No scoring beyond "least requested", no preemption.
 *
 * @module
 */

import { type Clock, type Logger, milliValue, noopLogger, quantityValue } from '@nodeagent/core';
import { CoalescedPass } from './coalesced-pass.js';
import { ApiStatusError, failureStatus, invalid } from './errors.js';
import { isPlainObject, type KubeObject } from './object.js';
import type { ObjectStore, StoreChange } from './store.js';

type Rec = Record<string, unknown>;

/** The scheduler name the minimal scheduler serves (`spec.schedulerName`). */
export const DEFAULT_SCHEDULER_NAME = 'default-scheduler';

function rec(v: unknown): Rec {
  return isPlainObject(v) ? v : {};
}

/**
 * Binds a pod to a node as kube-apiserver's `pods/binding` subresource does: sets
 * `spec.nodeName`, and the `PodScheduled` condition.
 * @throws ApiStatusError 404 for a missing pod, 409 for a pod already bound, 422 without a target
 */
export function bindPod(
  store: ObjectStore,
  namespace: string | undefined,
  name: string,
  target: unknown,
): KubeObject {
  if (typeof target !== 'string' || target === '') {
    throw invalid('', 'Binding', name, [
      { reason: 'FieldValueRequired', message: 'Required value', field: 'target.name' },
    ]);
  }
  const pod = store.get('pods', namespace, name);
  const spec = rec(pod.spec);
  if (typeof spec.nodeName === 'string' && spec.nodeName !== '') {
    throw new ApiStatusError(
      failureStatus(
        409,
        'Conflict',
        `Operation cannot be fulfilled on pods/binding "${name}": pod ${name} is already assigned to node "${spec.nodeName}"`,
        { name, kind: 'pods/binding' },
      ),
    );
  }
  if (pod.metadata?.deletionTimestamp !== undefined) {
    throw new ApiStatusError(
      failureStatus(
        409,
        'Conflict',
        `Operation cannot be fulfilled on pods/binding "${name}": pod ${name} is being deleted, cannot be assigned to a host`,
        { name, kind: 'pods/binding' },
      ),
    );
  }
  pod.spec = { ...spec, nodeName: target };
  return store.update('pods', pod);
}

interface Requests {
  cpuMilli: bigint;
  memory: bigint;
}

function podRequests(pod: KubeObject): Requests {
  const spec = rec(pod.spec);
  const sum = (list: unknown): Requests => {
    const r = { cpuMilli: 0n, memory: 0n };
    for (const c of Array.isArray(list) ? list : []) {
      const req = rec(rec(rec(c).resources).requests);
      r.cpuMilli += milliValue(req.cpu as string | undefined);
      r.memory += quantityValue(req.memory as string | undefined);
    }
    return r;
  };
  const main = sum(spec.containers);
  for (const c of Array.isArray(spec.initContainers) ? spec.initContainers : []) {
    const one = sum([c]);
    if (one.cpuMilli > main.cpuMilli) main.cpuMilli = one.cpuMilli;
    if (one.memory > main.memory) main.memory = one.memory;
  }
  return main;
}

interface Taint {
  key: string;
  value: string;
  effect: string;
}

function tolerated(pod: KubeObject, taint: Taint): boolean {
  const tolerations = rec(pod.spec).tolerations;
  return (Array.isArray(tolerations) ? tolerations : []).some((t) => {
    const tol = rec(t);
    if (tol.effect !== undefined && tol.effect !== '' && tol.effect !== taint.effect) return false;
    if (tol.operator === 'Exists') return tol.key === undefined || tol.key === '' || tol.key === taint.key;
    return tol.key === taint.key && (tol.value ?? '') === taint.value;
  });
}

function matchExpression(labels: Rec, e: Rec): boolean {
  const v = labels[String(e.key)];
  const values = Array.isArray(e.values) ? e.values.map(String) : [];
  switch (e.operator) {
    case 'In':
      return typeof v === 'string' && values.includes(v);
    case 'NotIn':
      return typeof v !== 'string' || !values.includes(v);
    case 'Exists':
      return typeof v === 'string';
    case 'DoesNotExist':
      return typeof v !== 'string';
    case 'Gt':
    case 'Lt': {
      if (typeof v !== 'string' || values.length !== 1) return false;
      const a = Number(v);
      const b = Number(values[0]);
      return e.operator === 'Gt' ? a > b : a < b;
    }
    default:
      return false;
  }
}

function matchesNodeAffinity(pod: KubeObject, node: KubeObject): boolean {
  const labels = rec(node.metadata?.labels);
  const sel = rec(rec(pod.spec).nodeSelector);
  for (const [k, v] of Object.entries(sel)) if (labels[k] !== v) return false;
  const required = rec(
    rec(rec(rec(pod.spec).affinity).nodeAffinity).requiredDuringSchedulingIgnoredDuringExecution,
  );
  const terms = Array.isArray(required.nodeSelectorTerms) ? required.nodeSelectorTerms : undefined;
  if (terms === undefined) return true;
  const fields: Rec = { 'metadata.name': node.metadata?.name };
  return terms.some((t) => {
    const term = rec(t);
    const exprs = Array.isArray(term.matchExpressions) ? term.matchExpressions : [];
    const fexprs = Array.isArray(term.matchFields) ? term.matchFields : [];
    if (exprs.length === 0 && fexprs.length === 0) return false;
    return (
      exprs.every((e) => matchExpression(labels, rec(e))) &&
      fexprs.every((e) => matchExpression(fields, rec(e)))
    );
  });
}

function nodeReady(node: KubeObject): boolean {
  const conds = rec(node.status).conditions;
  return (Array.isArray(conds) ? conds : []).some((c) => rec(c).type === 'Ready' && rec(c).status === 'True');
}

/** Why one node does not fit, and whether preemption could help (resources only). */
export interface Misfit {
  /** The filter reasons, e.g. `Insufficient cpu`. */
  readonly reasons: string[];
  /** Whether evicting pods could make the node fit (resource reasons only). */
  readonly resolvable: boolean;
}

/** Options of {@link MiniScheduler}. */
export interface MiniSchedulerOptions {
  /** Where pods, nodes and events live. */
  readonly store: ObjectStore;
  /** Source of event times. */
  readonly clock: Clock;
  /** Logger. */
  readonly logger?: Logger;
  /** `reportingInstance` of the events. @default 'default-scheduler-mini-apiserver' */
  readonly instance?: string;
}

/** The minimal scheduler; see the module documentation. */
export class MiniScheduler {
  readonly #store: ObjectStore;
  readonly #clock: Clock;
  readonly #log: Logger;
  readonly #instance: string;
  readonly #lastFailure = new Map<string, string>();
  #unsubscribe: (() => void) | undefined;
  #seq = 0;
  readonly #pass = new CoalescedPass(() => {
    try {
      if (this.#unsubscribe) this.scheduleAll();
    } catch (err) {
      this.#log.error({ err }, 'mini-apiserver scheduler: pass failed');
    }
  });

  /** Creates a stopped scheduler; {@link MiniScheduler.start} starts it. */
  constructor(options: MiniSchedulerOptions) {
    this.#store = options.store;
    this.#clock = options.clock;
    this.#log = options.logger ?? noopLogger;
    this.#instance = options.instance ?? `${DEFAULT_SCHEDULER_NAME}-mini-apiserver`;
  }

  /** Starts watching the store and schedules the pods waiting already. */
  start(): void {
    if (this.#unsubscribe) return;
    this.#unsubscribe = this.#store.onChange((c) => this.#onChange(c));
    this.#kick();
  }

  /** Stops scheduling. Idempotent. */
  stop(): void {
    this.#unsubscribe?.();
    this.#unsubscribe = undefined;
    this.#pass.release();
  }

  /** Resolves once no scheduling pass is queued. */
  idle(): Promise<void> {
    return this.#pass.idle();
  }

  #onChange(c: StoreChange): void {
    const r = c.type.resource;
    if (r === 'nodes' || r === 'pods') this.#kick();
  }

  #kick(): void {
    this.#pass.request();
  }

  /** One pass over every pod waiting for a node (also run on every pod or node change). */
  scheduleAll(): void {
    for (const pod of this.#store.list('pods')) {
      const spec = rec(pod.spec);
      if (typeof spec.nodeName === 'string' && spec.nodeName !== '') continue;
      if ((spec.schedulerName ?? DEFAULT_SCHEDULER_NAME) !== DEFAULT_SCHEDULER_NAME) continue;
      if (pod.metadata?.deletionTimestamp !== undefined) continue;
      this.#scheduleOne(pod);
    }
    const live = new Set(this.#store.list('pods').map((p) => p.metadata?.uid ?? ''));
    for (const uid of this.#lastFailure.keys()) if (!live.has(uid)) this.#lastFailure.delete(uid);
  }

  #scheduleOne(pod: KubeObject): void {
    const nodes = this.#store.list('nodes');
    const used = new Map<string, { cpuMilli: bigint; memory: bigint; pods: number }>();
    for (const p of this.#store.list('pods')) {
      const n = rec(p.spec).nodeName;
      const phase = rec(p.status).phase;
      if (typeof n !== 'string' || n === '' || phase === 'Succeeded' || phase === 'Failed') continue;
      const u = used.get(n) ?? { cpuMilli: 0n, memory: 0n, pods: 0 };
      const r = podRequests(p);
      u.cpuMilli += r.cpuMilli;
      u.memory += r.memory;
      u.pods += 1;
      used.set(n, u);
    }
    const want = podRequests(pod);
    const fits: Array<{ name: string; score: number }> = [];
    const misfits: Misfit[] = [];
    for (const node of nodes) {
      const name = node.metadata?.name ?? '';
      const m = this.#filter(pod, node, want, used.get(name));
      if (m === undefined) {
        const alloc = rec(rec(node.status).allocatable);
        const u = used.get(name);
        const cpu = Number(milliValue(alloc.cpu as string | undefined)) || 1;
        const score = Number((u?.cpuMilli ?? 0n) + want.cpuMilli) / cpu;
        fits.push({ name, score });
      } else misfits.push(m);
    }
    const ns = pod.metadata?.namespace ?? '';
    const podName = pod.metadata?.name ?? '';
    const uid = pod.metadata?.uid ?? '';
    if (fits.length === 0) {
      const message = failureMessage(nodes.length, misfits);
      if (this.#lastFailure.get(uid) === message) return;
      this.#lastFailure.set(uid, message);
      this.#setUnschedulable(pod, message);
      this.#event(pod, 'Warning', 'FailedScheduling', 'Scheduling', message);
      return;
    }
    fits.sort((a, b) => a.score - b.score || a.name.localeCompare(b.name));
    const target = fits[0]?.name as string;
    try {
      bindPod(this.#store, ns, podName, target);
    } catch (err) {
      this.#log.warn({ err, pod: `${ns}/${podName}` }, 'mini-apiserver scheduler: binding failed');
      return;
    }
    this.#lastFailure.delete(uid);
    this.#event(pod, 'Normal', 'Scheduled', 'Binding', `Successfully assigned ${ns}/${podName} to ${target}`);
  }

  #filter(
    pod: KubeObject,
    node: KubeObject,
    want: Requests,
    used: { cpuMilli: bigint; memory: bigint; pods: number } | undefined,
  ): Misfit | undefined {
    const spec = rec(node.spec);
    if (spec.unschedulable === true) {
      const t = { key: 'node.kubernetes.io/unschedulable', value: '', effect: 'NoSchedule' };
      if (!tolerated(pod, t)) return { reasons: ['node(s) were unschedulable'], resolvable: false };
    }
    if (!matchesNodeAffinity(pod, node))
      return { reasons: ["node(s) didn't match Pod's node affinity/selector"], resolvable: false };
    const taints: Taint[] = (Array.isArray(spec.taints) ? spec.taints : []).map((t) => ({
      key: String(rec(t).key ?? ''),
      value: String(rec(t).value ?? ''),
      effect: String(rec(t).effect ?? ''),
    }));
    // The node lifecycle controller taints a node that is not Ready; counted here too, so the
    // rule holds with `nodeLifecycleController` off and before its taint lands.
    if (!nodeReady(node) && !taints.some((t) => t.key === 'node.kubernetes.io/not-ready'))
      taints.push({ key: 'node.kubernetes.io/not-ready', value: '', effect: 'NoSchedule' });
    for (const t of taints) {
      if (t.effect !== 'NoSchedule' && t.effect !== 'NoExecute') continue;
      if (!tolerated(pod, t))
        return { reasons: [`node(s) had untolerated taint {${t.key}: ${t.value}}`], resolvable: false };
    }
    const alloc = rec(rec(node.status).allocatable);
    const reasons: string[] = [];
    const u = used ?? { cpuMilli: 0n, memory: 0n, pods: 0 };
    const maxPods = alloc.pods === undefined ? undefined : quantityValue(alloc.pods as string);
    if (maxPods !== undefined && BigInt(u.pods + 1) > maxPods) reasons.push('Too many pods');
    if (want.cpuMilli > 0n && u.cpuMilli + want.cpuMilli > milliValue(alloc.cpu as string | undefined))
      reasons.push('Insufficient cpu');
    if (want.memory > 0n && u.memory + want.memory > quantityValue(alloc.memory as string | undefined))
      reasons.push('Insufficient memory');
    return reasons.length > 0 ? { reasons, resolvable: true } : undefined;
  }

  #setUnschedulable(pod: KubeObject, message: string): void {
    try {
      const cur = this.#store.get('pods', pod.metadata?.namespace, pod.metadata?.name ?? '');
      const status = rec(cur.status);
      const conds = (Array.isArray(status.conditions) ? status.conditions : []).filter(
        (c) => rec(c).type !== 'PodScheduled',
      );
      conds.push({
        type: 'PodScheduled',
        status: 'False',
        lastProbeTime: null,
        lastTransitionTime: isoSeconds(new Date(this.#clock.now())),
        reason: 'Unschedulable',
        message,
      });
      cur.status = { ...status, conditions: conds };
      this.#store.update('pods', cur, { subresource: 'status' });
    } catch (err) {
      this.#log.warn({ err }, 'mini-apiserver scheduler: pod status update failed');
    }
  }

  #event(pod: KubeObject, type: string, reason: string, action: string, message: string): void {
    const now = new Date(this.#clock.now());
    try {
      this.#store.create('events', {
        metadata: {
          name: `${pod.metadata?.name}.${(BigInt(now.getTime()) * 1000000n + BigInt(this.#seq++)).toString(16)}`,
          namespace: pod.metadata?.namespace ?? 'default',
        },
        involvedObject: {
          kind: 'Pod',
          namespace: pod.metadata?.namespace,
          name: pod.metadata?.name,
          uid: pod.metadata?.uid,
          apiVersion: 'v1',
          resourceVersion: pod.metadata?.resourceVersion,
        },
        reason,
        message,
        source: {},
        firstTimestamp: null,
        lastTimestamp: null,
        type,
        eventTime: now.toISOString().replace('Z', '000Z'),
        action,
        reportingComponent: DEFAULT_SCHEDULER_NAME,
        reportingInstance: this.#instance,
      });
    } catch (err) {
      this.#log.warn({ err }, 'mini-apiserver scheduler: event not recorded');
    }
  }
}

function isoSeconds(d: Date): string {
  return d.toISOString().replace(/\.\d{3}Z$/, 'Z');
}

/**
 * The default scheduler's FailedScheduling message: counts of each reason sorted by text,
 * then what preemption found (each preemption reason ends with its own period, so the message
 * ends with `..` as kube-scheduler's does).
 */
export function failureMessage(total: number, misfits: readonly Misfit[]): string {
  if (total === 0) return 'no nodes available to schedule pods';
  const counts = new Map<string, number>();
  for (const m of misfits) for (const r of m.reasons) counts.set(r, (counts.get(r) ?? 0) + 1);
  const parts = [...counts.entries()].map(([r, n]) => `${n} ${r}`).sort();
  const unresolvable = misfits.filter((m) => !m.resolvable).length;
  const resolvable = misfits.length - unresolvable;
  const pre: string[] = [];
  if (resolvable > 0) pre.push(`${resolvable} No preemption victims found for incoming pod.`);
  if (unresolvable > 0) pre.push(`${unresolvable} Preemption is not helpful for scheduling.`);
  return `0/${total} nodes are available: ${parts.join(', ')}. preemption: 0/${total} nodes are available: ${pre.sort().join(', ')}.`;
}
