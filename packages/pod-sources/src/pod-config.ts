/**
 * The merge of all pod sources (upstream `PodConfig` + `podStorage`, incremental mode): each
 * source sends snapshots (`SET`) or changes; the merge keeps pods per source and UID and emits
 * `REMOVE`, `ADD`, `UPDATE`, `DELETE`, then `RECONCILE`, per source, in that order. A source is
 * seen once it delivered its first snapshot; the first snapshot with nothing to add still emits
 * an empty `ADD`, so a consumer can mark the source ready.
 *
 * @module
 */
import type { V1ObjectMeta, V1Pod } from '@kubernetes/client-node';
import { Channel, type Clock, definedFields, type Logger, noopLogger, realClock } from '@nodeagent/core';
import { PodSourceError, type PodSourceErrorHandler } from './errors.js';
import {
  CONFIG_SEEN_ANNOTATION,
  CONFIG_SOURCE_ANNOTATION,
  LOCAL_ANNOTATIONS,
  type PodUpdate,
  podFullName,
  type SourceUpdate,
} from './pod-update.js';

/** Options of {@link PodConfig}. */
export interface PodConfigOptions {
  /** Stamps `kubernetes.io/config.seen`. @default realClock */
  readonly clock?: Clock;
  /** @default noopLogger */
  readonly logger?: Logger;
  /** Told about pods dropped by the merge (two pods with one full name in a source). @default log at warn */
  readonly onError?: PodSourceErrorHandler;
}

/** A source's handle into the merge. */
export interface PodSourceSink {
  /** The source name. */
  readonly source: string;
  /** Sends a snapshot or change. */
  send(update: SourceUpdate): void;
}

function uidOf(pod: V1Pod): string {
  return pod.metadata?.uid ?? '';
}

function nonLocalAnnotations(pod: V1Pod): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(pod.metadata?.annotations ?? {}))
    if (!LOCAL_ANNOTATIONS.includes(k)) out[k] = v;
  return out;
}

function semanticKey(pod: V1Pod): string {
  return JSON.stringify([
    pod.spec,
    pod.metadata?.labels ?? {},
    pod.metadata?.deletionTimestamp ?? null,
    pod.metadata?.deletionGracePeriodSeconds ?? null,
    Object.entries(nonLocalAnnotations(pod)).sort(),
  ]);
}

interface Changes {
  readonly adds: V1Pod[];
  readonly updates: V1Pod[];
  readonly deletes: V1Pod[];
  readonly removes: V1Pod[];
  readonly reconciles: V1Pod[];
}

/** The merged pod configuration of every source. */
export class PodConfig {
  /** Merged notifications, in order; never blocks a source. */
  readonly updates = new Channel<PodUpdate>();
  readonly #pods = new Map<string, Map<string, V1Pod>>();
  /**
   * Per source and pod UID, the object last merged and the stored pod it led to: the API
   * source sends every pod on every change (as upstream's), and an object the source sends again
   * unchanged (the informer store's same reference) is not cloned and compared again.
   */
  readonly #lastIncoming = new Map<string, Map<string, { raw: V1Pod; stored: V1Pod }>>();
  /** {@link semanticKey} of stored pods, computed once per stored object. */
  readonly #keys = new WeakMap<V1Pod, string>();
  readonly #seen = new Set<string>();
  readonly #clock: Clock;
  readonly #log: Logger;
  readonly #onError: PodSourceErrorHandler;

  /** @param options see {@link PodConfigOptions}. */
  constructor(options: PodConfigOptions = {}) {
    this.#clock = options.clock ?? realClock;
    this.#log = (options.logger ?? noopLogger).child({ component: 'pod-config' });
    this.#onError =
      options.onError ?? ((err) => this.#log.warn({ source: err.source, pod: err.location }, err.message));
  }

  /** Registers a source (idempotent) and returns where it sends its pods. */
  channel(source: string): PodSourceSink {
    if (!this.#pods.has(source)) this.#pods.set(source, new Map());
    return { source, send: (update) => this.merge(source, update) };
  }

  /** The registered sources. */
  sources(): string[] {
    return [...this.#pods.keys()];
  }

  /** Whether every registered source (or every one listed) delivered its first snapshot. */
  seenAllSources(sources: readonly string[] = this.sources()): boolean {
    return sources.every((s) => this.#seen.has(s));
  }

  /** The pods of every source (or of one), as last merged. */
  pods(source?: string): V1Pod[] {
    const maps = source === undefined ? [...this.#pods.values()] : [this.#pods.get(source) ?? new Map()];
    return maps.flatMap((m) => [...m.values()]);
  }

  /** The pod with this UID as last merged, from whichever source has it (no list is built). */
  pod(uid: string): V1Pod | undefined {
    for (const pods of this.#pods.values()) {
      const pod = pods.get(uid);
      if (pod !== undefined) return pod;
    }
    return undefined;
  }

  /** Merges one update of `source` and sends the resulting notifications. */
  merge(source: string, update: SourceUpdate): void {
    const seenBefore = this.#seen.has(source);
    const changes = this.#merge(source, update);
    const firstSet = !seenBefore && this.#seen.has(source);
    const send = (op: PodUpdate['op'], pods: V1Pod[]) => {
      if (pods.length > 0) this.updates.send({ op, pods, source });
    };
    send('REMOVE', changes.removes);
    send('ADD', changes.adds);
    send('UPDATE', changes.updates);
    send('DELETE', changes.deletes);
    if (
      firstSet &&
      changes.adds.length === 0 &&
      changes.updates.length === 0 &&
      changes.deletes.length === 0
    ) {
      this.updates.send({ op: 'ADD', pods: [], source });
    }
    send('RECONCILE', changes.reconciles);
  }

  #merge(source: string, update: SourceUpdate): Changes {
    const changes: Changes = { adds: [], updates: [], deletes: [], removes: [], reconciles: [] };
    const old = this.#pods.get(source) ?? new Map<string, V1Pod>();
    this.#pods.set(source, old);
    switch (update.op) {
      case 'ADD':
      case 'UPDATE':
      case 'DELETE':
        this.#upsert(source, update.pods, old, old, changes);
        break;
      case 'REMOVE':
        for (const pod of update.pods) {
          const existing = old.get(uidOf(pod));
          if (existing === undefined) continue;
          old.delete(uidOf(pod));
          changes.removes.push(existing);
        }
        break;
      case 'SET': {
        this.#seen.add(source);
        const next = new Map<string, V1Pod>();
        this.#upsert(source, update.pods, old, next, changes);
        for (const [uid, existing] of old) if (!next.has(uid)) changes.removes.push(existing);
        this.#pods.set(source, next);
        break;
      }
    }
    return changes;
  }

  #upsert(
    source: string,
    incoming: readonly V1Pod[],
    old: Map<string, V1Pod>,
    into: Map<string, V1Pod>,
    changes: Changes,
  ): void {
    const names = new Set<string>();
    let last = this.#lastIncoming.get(source);
    if (last === undefined) {
      last = new Map();
      this.#lastIncoming.set(source, last);
    }
    const seenUids = new Set<string>();
    for (const raw of incoming) {
      const fullName = podFullName(raw);
      if (names.has(fullName)) {
        this.#onError(
          new PodSourceError(
            'DuplicateName',
            source,
            fullName,
            `duplicate pod name ${JSON.stringify(raw.metadata?.name ?? '')}, ignoring`,
          ),
        );
        continue;
      }
      names.add(fullName);
      const rawUid = uidOf(raw);
      seenUids.add(rawUid);
      const previous = last.get(rawUid);
      // The very object merged last time, and its result still stored: nothing changed.
      if (previous !== undefined && previous.raw === raw && old.get(rawUid) === previous.stored) {
        into.set(rawUid, previous.stored);
        continue;
      }
      const stored = this.#upsertOne(source, raw, old, into, changes);
      last.set(rawUid, { raw, stored });
    }
    // A full snapshot replaces the source's pods: forget the objects of pods it no longer has.
    if (into !== old) for (const uid of last.keys()) if (!seenUids.has(uid)) last.delete(uid);
  }

  #semanticKey(pod: V1Pod): string {
    let key = this.#keys.get(pod);
    if (key === undefined) {
      key = semanticKey(pod);
      this.#keys.set(pod, key);
    }
    return key;
  }

  /** Merges one incoming pod; returns the pod now stored for its UID. */
  #upsertOne(
    source: string,
    raw: V1Pod,
    old: Map<string, V1Pod>,
    into: Map<string, V1Pod>,
    changes: Changes,
  ): V1Pod {
    const ref = structuredClone(raw);
    ref.metadata ??= {};
    const meta = ref.metadata;
    meta.annotations = { ...(meta.annotations ?? {}), [CONFIG_SOURCE_ANNOTATION]: source };
    const uid = uidOf(ref);
    const existing = old.get(uid);
    if (existing === undefined) {
      meta.annotations[CONFIG_SEEN_ANNOTATION] = new Date(this.#clock.now()).toISOString();
      into.set(uid, ref);
      changes.adds.push(ref);
      return ref;
    }
    if (this.#semanticKey(existing) === semanticKey(ref)) {
      if (JSON.stringify(existing.status ?? null) === JSON.stringify(ref.status ?? null)) {
        into.set(uid, existing);
        return existing;
      }
      const reconciled = { ...existing, status: ref.status ?? {} };
      into.set(uid, reconciled);
      changes.reconciles.push(reconciled);
      return reconciled;
    }
    // Copy what changed onto the stored pod; the agent's own annotations stay.
    const local: Record<string, string> = {};
    for (const k of LOCAL_ANNOTATIONS) {
      const v = existing.metadata?.annotations?.[k];
      if (v !== undefined) local[k] = v;
    }
    const metadata: Record<string, unknown> = {
      ...existing.metadata,
      annotations: { ...nonLocalAnnotations(ref), ...local },
    };
    for (const key of ['labels', 'deletionTimestamp', 'deletionGracePeriodSeconds', 'generation'] as const) {
      if (meta[key] === undefined) delete metadata[key];
      else metadata[key] = meta[key];
    }
    const merged: V1Pod = {
      ...existing,
      metadata: metadata as V1ObjectMeta,
      ...definedFields({ spec: ref.spec, status: ref.status }),
    };
    into.set(uid, merged);
    if (meta.deletionTimestamp !== undefined && meta.deletionTimestamp !== null) changes.deletes.push(merged);
    else changes.updates.push(merged);
    return merged;
  }
}
