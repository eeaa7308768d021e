/**
 * What the node lifecycle controller writes besides Nodes: core/v1 Events as client-go's legacy
 * recorder makes them (source `node-controller`), and pods marked not Ready
 * (upstream `pkg/controller/util/node/controller_utils.go`).
 *
 * @module
 */
import type { Clock, Logger } from '@nodeagent/core';
import { isPlainObject, type KubeObject } from './object.js';
import type { ObjectStore } from './store.js';

type Rec = Record<string, unknown>;

/** `source.component` / `reportingComponent` of the events, as upstream's recorder. */
export const NODE_CONTROLLER_COMPONENT = 'node-controller';

function rec(v: unknown): Rec {
  return isPlainObject(v) ? v : {};
}

function isoSeconds(ms: number): string {
  return new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z');
}

/** Records the node controller's events and pod readiness changes in a store. */
export class NodeControllerRecorder {
  readonly #store: ObjectStore;
  readonly #clock: Clock;
  readonly #log: Logger;
  #seq = 0;

  /** Writes to `store`, with times from `clock`; failures go to `log`. */
  constructor(store: ObjectStore, clock: Clock, log: Logger) {
    this.#store = store;
    this.#clock = clock;
    this.#log = log;
  }

  /** Upstream `MarkPodsNotReady`: Ready=False on each pod of the Node, and a `NodeNotReady` event. */
  markPodsNotReady(pods: readonly KubeObject[], nodeName: string): void {
    const now = isoSeconds(this.#clock.now());
    for (const p of pods) {
      if (rec(p.spec).nodeName !== nodeName) continue;
      const pod = structuredClone(p);
      const status = rec(pod.status);
      const conds = Array.isArray(status.conditions) ? (status.conditions as Rec[]) : [];
      const i = conds.findIndex((c) => rec(c).type === 'Ready');
      const old = conds[i];
      if (old === undefined || old.status === 'False') continue;
      const next = [...conds];
      next[i] = { ...old, status: 'False', lastTransitionTime: now };
      pod.status = { ...status, conditions: next };
      try {
        this.#store.update('pods', pod, { subresource: 'status' });
      } catch (err) {
        this.#log.warn(
          { err, pod: `${pod.metadata?.namespace}/${pod.metadata?.name}` },
          'pod not marked NotReady',
        );
        continue;
      }
      this.#event(
        {
          kind: 'Pod',
          namespace: pod.metadata?.namespace,
          name: pod.metadata?.name,
          uid: pod.metadata?.uid,
          apiVersion: 'v1',
          resourceVersion: pod.metadata?.resourceVersion,
        },
        'Warning',
        'NodeNotReady',
        'Node is not ready',
      );
    }
  }

  /** Upstream `RecordNodeEvent`. */
  nodeEvent(node: KubeObject, reason: string, text: string): void {
    const name = node.metadata?.name ?? '';
    this.#event(nodeRef(node), 'Normal', reason, `Node ${name} event: ${text}`);
  }

  /** Upstream `RecordNodeStatusChange`. */
  nodeStatusChange(node: KubeObject, newStatus: string): void {
    this.#event(
      nodeRef(node),
      'Normal',
      newStatus,
      `Node ${node.metadata?.name} status is now: ${newStatus}`,
    );
  }

  /** A core/v1 Event as client-go's legacy recorder makes it (source `node-controller`). */
  #event(ref: Rec, type: string, reason: string, message: string): void {
    const nowMs = this.#clock.now();
    const t = isoSeconds(nowMs);
    const namespace = typeof ref.namespace === 'string' && ref.namespace !== '' ? ref.namespace : 'default';
    try {
      this.#store.create('events', {
        metadata: {
          name: `${String(ref.name)}.${(BigInt(nowMs) * 1_000_000n + BigInt(this.#seq++ % 1_000_000)).toString(16)}`,
          namespace,
        },
        involvedObject: ref,
        reason,
        message,
        source: { component: NODE_CONTROLLER_COMPONENT },
        firstTimestamp: t,
        lastTimestamp: t,
        count: 1,
        type,
        eventTime: null,
        reportingComponent: NODE_CONTROLLER_COMPONENT,
        reportingInstance: '',
      });
    } catch (err) {
      this.#log.warn({ err }, 'mini-apiserver node lifecycle controller: event not recorded');
    }
  }
}

function nodeRef(node: KubeObject): Rec {
  return { kind: 'Node', name: node.metadata?.name, uid: node.metadata?.uid, apiVersion: 'v1' };
}
