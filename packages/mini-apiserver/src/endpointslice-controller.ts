/**
 * A small EndpointSlice controller: for every Service with a selector it keeps
 * `<service>-<hash5>` EndpointSlices (label `kubernetes.io/service-name`, managed by
 * `endpointslice-controller.k8s.io`) listing the selected Pods' `podIP`s with
 * ready/serving/terminating conditions, `nodeName`, `targetRef` and the Service ports
 * resolved against each Pod (numeric or named `targetPort`).
 *
 * @module
 */

import { createHash } from 'node:crypto';
import { type Lifecycle, type Logger, noopLogger, StartOnce } from '@nodeagent/core';
import { CoalescedPass } from './coalesced-pass.js';
import { matchesSelectorMap } from './labels.js';
import { isPlainObject, type KubeObject } from './object.js';
import type { ObjectStore, StoreChange } from './store.js';

/** Value of the `endpointslice.kubernetes.io/managed-by` label on slices this controller owns. */
export const MANAGED_BY = 'endpointslice-controller.k8s.io';
/** Label naming the Service of an EndpointSlice. */
export const SERVICE_NAME_LABEL = 'kubernetes.io/service-name';
const MANAGED_BY_LABEL = 'endpointslice.kubernetes.io/managed-by';
const MAX_ENDPOINTS_PER_SLICE = 100;
const NAME_CHARS = 'bcdfghjklmnpqrstvwxz2456789';

type Obj = Record<string, unknown>;

interface SlicePort {
  name: string;
  port: number;
  protocol: string;
  appProtocol?: string;
}

function rec(v: unknown): Obj {
  return isPlainObject(v) ? v : {};
}

function hash5(input: string): string {
  const digest = createHash('sha256').update(input).digest();
  let s = '';
  for (let i = 0; i < 5; i++) s += NAME_CHARS[(digest[i] as number) % NAME_CHARS.length];
  return s;
}

function podReady(pod: KubeObject): boolean {
  const conds = rec(pod.status).conditions;
  return Array.isArray(conds) && conds.some((c) => rec(c).type === 'Ready' && rec(c).status === 'True');
}

function resolvePorts(svc: KubeObject, pod: KubeObject): SlicePort[] {
  const out: SlicePort[] = [];
  const ports = rec(svc.spec).ports;
  if (!Array.isArray(ports)) return out;
  for (const raw of ports) {
    const p = rec(raw);
    const protocol = typeof p.protocol === 'string' ? p.protocol : 'TCP';
    const target = p.targetPort ?? p.port;
    let port: number | undefined;
    if (typeof target === 'number') port = target;
    else if (typeof target === 'string' && /^[0-9]+$/.test(target)) port = Number(target);
    else if (typeof target === 'string') {
      const containers = rec(pod.spec).containers;
      for (const c of Array.isArray(containers) ? containers : []) {
        const cps = rec(c).ports;
        for (const cp of Array.isArray(cps) ? cps : []) {
          const x = rec(cp);
          if (
            x.name === target &&
            (x.protocol ?? 'TCP') === protocol &&
            typeof x.containerPort === 'number'
          ) {
            port = x.containerPort;
          }
        }
      }
    }
    if (port === undefined) continue;
    const sp: SlicePort = { name: typeof p.name === 'string' ? p.name : '', port, protocol };
    if (typeof p.appProtocol === 'string') sp.appProtocol = p.appProtocol;
    out.push(sp);
  }
  return out;
}

/** Keeps EndpointSlices in sync with Services and Pods in an {@link ObjectStore}. */
export class EndpointSliceController implements Lifecycle {
  readonly #once = new StartOnce('EndpointSliceController');
  readonly #dirty = new Set<string>();
  readonly #pass = new CoalescedPass(() => this.#drain());
  #unsubscribe: (() => void) | undefined;
  /** Number of sync errors so far (each is also logged). */
  errors = 0;

  readonly #store: ObjectStore;
  readonly #log: Logger;

  /** @param store the store to watch and write to. */
  constructor(store: ObjectStore, log: Logger = noopLogger) {
    this.#store = store;
    this.#log = log;
  }

  /**
   * Subscribes to store changes and queues every existing Service (the `Lifecycle` of
   * `@nodeagent/core`: a second call rejects; `signal` has nothing to bound, the start is
   * immediate).
   */
  start(signal?: AbortSignal): Promise<void> {
    return this.#once.run(
      signal,
      async () => this.#subscribe(),
      () => this.stop(),
    );
  }

  #subscribe(): void {
    this.#unsubscribe = this.#store.onChange((c) => this.#onChange(c));
    for (const svc of this.#store.list('services'))
      this.#enqueue(svc.metadata?.namespace ?? '', svc.metadata?.name ?? '');
  }

  /** Stops reacting to changes. Idempotent; safe before `start`. */
  async stop(): Promise<void> {
    this.#unsubscribe?.();
    this.#unsubscribe = undefined;
    this.#dirty.clear();
    this.#pass.release();
  }

  /** Resolves once every queued Service has been synced. */
  idle(): Promise<void> {
    return this.#pass.idle();
  }

  #onChange(c: StoreChange): void {
    if (c.type.resource === 'services') {
      const o = c.object();
      this.#enqueue(o.metadata?.namespace ?? '', o.metadata?.name ?? '');
    } else if (c.type.resource === 'pods') {
      const cur = c.object();
      const prev = c.previous?.();
      const ns = cur.metadata?.namespace ?? '';
      for (const svc of this.#store.list('services', ns)) {
        const sel = rec(svc.spec).selector as Record<string, string> | undefined;
        if (
          matchesSelectorMap(sel, cur.metadata?.labels) ||
          (prev && matchesSelectorMap(sel, prev.metadata?.labels))
        ) {
          this.#enqueue(ns, svc.metadata?.name ?? '');
        }
      }
    } else if (c.type.resource === 'endpointslices' && c.eventType === 'DELETED') {
      const labels = c.object().metadata?.labels ?? {};
      const svcName = labels[SERVICE_NAME_LABEL];
      if (labels[MANAGED_BY_LABEL] === MANAGED_BY && svcName)
        this.#enqueue(c.object().metadata?.namespace ?? '', svcName);
    }
  }

  #enqueue(ns: string, name: string): void {
    this.#dirty.add(`${ns}/${name}`);
    this.#pass.request();
  }

  #drain(): void {
    const keys = [...this.#dirty];
    this.#dirty.clear();
    for (const key of keys) {
      const slash = key.indexOf('/');
      try {
        this.syncService(key.slice(0, slash), key.slice(slash + 1));
      } catch (err) {
        this.errors++;
        this.#log.warn({ err, service: key }, 'endpointslice sync failed');
      }
    }
  }

  /** Recomputes the slices of one Service now. */
  syncService(namespace: string, name: string): void {
    const existing = this.#store
      .list('endpointslices', namespace)
      .filter(
        (s) =>
          s.metadata?.labels?.[SERVICE_NAME_LABEL] === name &&
          s.metadata?.labels?.[MANAGED_BY_LABEL] === MANAGED_BY,
      );
    const svc = this.#store.tryGet('services', namespace, name);
    const selector = svc ? (rec(svc.spec).selector as Record<string, string> | undefined) : undefined;
    const desired =
      svc && selector && Object.keys(selector).length > 0 ? this.#desiredSlices(svc, selector) : [];
    const byName = new Map(existing.map((s) => [s.metadata?.name ?? '', s]));
    for (const want of desired) {
      const wantName = want.metadata?.name ?? '';
      const have = byName.get(wantName);
      byName.delete(wantName);
      if (!have) {
        this.#store.create('endpointslices', want);
        continue;
      }
      const same =
        JSON.stringify([have.endpoints, have.ports, have.metadata?.labels]) ===
        JSON.stringify([want.endpoints, want.ports, want.metadata?.labels]);
      if (!same) {
        this.#store.update('endpointslices', {
          ...have,
          endpoints: want.endpoints,
          ports: want.ports,
          metadata: { ...have.metadata, labels: want.metadata?.labels ?? {} },
        });
      }
    }
    for (const stale of byName.keys()) this.#store.delete('endpointslices', namespace, stale);
  }

  #desiredSlices(svc: KubeObject, selector: Record<string, string>): KubeObject[] {
    const meta = svc.metadata ?? {};
    const ns = meta.namespace ?? '';
    const svcName = meta.name ?? '';
    const groups = new Map<string, { ports: SlicePort[]; endpoints: Obj[] }>();
    const pods = this.#store.list('pods', ns).filter((p) => matchesSelectorMap(selector, p.metadata?.labels));
    for (const pod of pods) {
      const status = rec(pod.status);
      const ip = status.podIP;
      if (typeof ip !== 'string' || ip === '' || ip.includes(':')) continue;
      if (status.phase === 'Succeeded' || status.phase === 'Failed') continue;
      const terminating = pod.metadata?.deletionTimestamp !== undefined;
      const ready = podReady(pod);
      const ports = resolvePorts(svc, pod);
      const key = JSON.stringify(ports);
      const group = groups.get(key) ?? { ports, endpoints: [] };
      groups.set(key, group);
      const ep: Obj = {
        addresses: [ip],
        conditions: { ready: ready && !terminating, serving: ready, terminating },
        targetRef: { kind: 'Pod', namespace: ns, name: pod.metadata?.name, uid: pod.metadata?.uid },
      };
      const nodeName = rec(pod.spec).nodeName;
      if (typeof nodeName === 'string' && nodeName !== '') ep.nodeName = nodeName;
      group.endpoints.push(ep);
    }
    if (groups.size === 0) groups.set('placeholder', { ports: [], endpoints: [] });
    const labels: Record<string, string> = {
      ...(meta.labels ?? {}),
      [SERVICE_NAME_LABEL]: svcName,
      [MANAGED_BY_LABEL]: MANAGED_BY,
    };
    const owner = {
      apiVersion: 'v1',
      kind: 'Service',
      name: svcName,
      uid: meta.uid,
      controller: true,
      blockOwnerDeletion: true,
    };
    const out: KubeObject[] = [];
    const base = `${svcName}-`.slice(0, 58);
    for (const [key, group] of [...groups.entries()].sort(([a], [b]) => (a < b ? -1 : 1))) {
      for (let i = 0; i < Math.max(1, group.endpoints.length); i += MAX_ENDPOINTS_PER_SLICE) {
        out.push({
          apiVersion: 'discovery.k8s.io/v1',
          kind: 'EndpointSlice',
          metadata: {
            name: base + hash5(`${meta.uid}/${key}/${i}`),
            namespace: ns,
            labels,
            ownerReferences: [owner],
          },
          addressType: 'IPv4',
          endpoints: group.endpoints.slice(i, i + MAX_ENDPOINTS_PER_SLICE),
          ports: group.ports,
        });
      }
    }
    return out;
  }
}
