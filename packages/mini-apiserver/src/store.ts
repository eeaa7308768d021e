/**
 * The in-memory object store: one global resourceVersion counter (as etcd's revision),
 * server-maintained metadata, optimistic concurrency, status subresources, graceful pod
 * deletion, finalizers, and change notification for watches and controllers.
 *
 * @module
 */

import { randomUUID } from 'node:crypto';
import { type Clock, InvalidOptionsError } from '@nodeagent/core';
import { prepareConfigObject } from './config-validation.js';
import { dryRunObject } from './dry-run.js';
import {
  alreadyExists,
  badRequest,
  conflict,
  MODIFIED_MESSAGE,
  notFound,
  requestTooLarge,
} from './errors.js';
import { fieldsOf } from './fields.js';
import { isPlainObject, type KubeObject } from './object.js';
import { applyPatch, type PatchType } from './patch.js';
import { MAX_STORED_NESTING_DEPTH, valueNestingDepth } from './request-body.js';
import { findResourceType, RESOURCE_TYPES, type ResourceType } from './resources.js';
import { ResourceTable, type StoreEntry, type StoreEvent, type StoreEventType } from './table.js';
import { validateObject } from './validation.js';

/** Options for {@link ObjectStore}. */
export interface ObjectStoreOptions {
  /** Source of `creationTimestamp` / `deletionTimestamp`. */
  readonly clock: Clock;
  /**
   * Events kept per resource type for watches from an older resourceVersion; a watch or
   * continue token older than the window gets 410 Expired.
   * @default 10000
   */
  readonly historySize?: number;
  /**
   * Bytes of serialized objects the watch history of all resource types may hold together.
   * Past it the oldest events are forgotten first, whatever their type, as etcd compaction
   * forgets old revisions: a watch or continue token from before the oldest event kept gets
   * 410 Expired, and a client (a reflector) relists. Minimum: 0 (keep no history: only
   * watches from the current resourceVersion succeed).
   * @default 67108864 (64 MiB)
   */
  readonly historyMaxBytes?: number;
  /**
   * Largest object the store accepts, in bytes of its JSON (etcd's default
   * `--max-request-bytes`, 1.5 MiB). A larger create or update fails as kube-apiserver
   * fails when etcd refuses the write: 500 `etcdserver: request is too large`.
   * @default 1572864
   */
  readonly maxObjectBytes?: number;
  /**
   * Create missing namespaces on the fly instead of answering 404 NotFound.
   * @default false
   */
  readonly autoCreateNamespaces?: boolean;
  /**
   * Called on every create and update before validation, as kube-apiserver's defaulting and
   * allocation (`old`: the stored version of an update); may change `obj` and throw an
   * ApiStatusError. The server sets it to its `ApiDefaulting`.
   */
  readonly admit?: (resource: string, obj: KubeObject, old: KubeObject | undefined) => void;
}

/** Options of a write through the store API. */
export interface WriteOptions {
  /** Write the `status` subresource (only `status` changes are kept). */
  readonly subresource?: 'status';
  /**
   * Run the `admit` hook (API defaulting and allocation), as for a request from a client. The
   * store API leaves objects as given by default, for seeding tests (like writing to etcd).
   * @default false
   */
  readonly admit?: boolean;
  /** An extra admission step run on the new object (and the stored one) before validation; throws to refuse (RBAC escalation checks). */
  readonly check?: AdmitFunc | undefined;
}

/** An admission step of a write: throws (an ApiStatusError) to refuse `obj`. */
export type AdmitFunc = (obj: KubeObject, old: KubeObject | undefined) => void;

/** Options of {@link ObjectStore.create}. */
export interface CreateOptions {
  /**
   * Keep the `status` given in the object. The HTTP API resets it like the real server
   * (a new pod is `Pending`); the store API keeps it by default, for seeding tests.
   * @default true
   */
  readonly keepStatus?: boolean;
  /** Run the `admit` hook, as {@link WriteOptions.admit}. @default false */
  readonly admit?: boolean;
  /** An extra admission step run on the new object (and the stored one) before validation; throws to refuse (RBAC escalation checks). */
  readonly check?: AdmitFunc | undefined;
}

/** Options of {@link ObjectStore.delete}, as in `DeleteOptions`. */
export interface DeleteOptions {
  /** Grace period; pods default to `spec.terminationGracePeriodSeconds` (30). */
  readonly gracePeriodSeconds?: number;
  /** Delete only if the object still has this uid / resourceVersion (409 otherwise). */
  readonly preconditions?: { readonly uid?: string; readonly resourceVersion?: string };
}

/** Result of a delete: the object and whether it is gone (false while terminating). */
export interface DeleteResult {
  readonly object: KubeObject;
  readonly deleted: boolean;
}

/** A change committed to the store, as seen by {@link ObjectStore.onChange} listeners. */
export interface StoreChange {
  readonly type: ResourceType;
  readonly eventType: StoreEventType;
  /** The object after the change (for deletes: its final state). */
  readonly object: () => KubeObject;
  /** The object before the change, if any. */
  readonly previous: (() => KubeObject) | undefined;
}

const DEFAULT_NAMESPACES = ['default', 'kube-system', 'kube-public', 'kube-node-lease'];
/** Default of {@link ObjectStoreOptions.historyMaxBytes}. */
export const DEFAULT_HISTORY_MAX_BYTES = 64 * 1024 * 1024;
/** Default of {@link ObjectStoreOptions.maxObjectBytes}: etcd's default request limit. */
export const DEFAULT_MAX_OBJECT_BYTES = 1.5 * 1024 * 1024;
const GENERATE_CHARS = 'bcdfghjklmnpqrstvwxz2456789';

function isoSeconds(ms: number): string {
  return new Date(Math.floor(ms / 1000) * 1000).toISOString().replace('.000Z', 'Z');
}

function randomSuffix(n: number): string {
  let s = '';
  for (let i = 0; i < n; i++) s += GENERATE_CHARS[Math.floor(Math.random() * GENERATE_CHARS.length)];
  return s;
}

/** Everything of an object except metadata and status, for generation bumps. */
function specPart(obj: KubeObject): string {
  const { metadata: _m, status: _s, ...rest } = obj;
  return JSON.stringify(rest);
}

function keyOf(type: ResourceType, namespace: string, name: string): string {
  return type.namespaced ? `${namespace}/${name}` : name;
}

/**
 * The store behind the server; also the "store access" of tests: every method applies the
 * same rules as the HTTP API (validation, resourceVersions, conflicts, watch events).
 * Objects go in and come out as fresh plain-JSON copies.
 */
export class ObjectStore {
  #rv = 0;
  readonly #tables = new Map<string, ResourceTable>();
  readonly #listeners = new Set<(change: StoreChange) => void>();
  readonly #clock: Clock;
  readonly #autoCreateNamespaces: boolean;
  readonly #historyMaxBytes: number;
  readonly #maxObjectBytes: number;
  readonly #admit: ObjectStoreOptions['admit'];
  #historyBytes = 0;

  /** Creates a store with the four default namespaces. */
  constructor(options: ObjectStoreOptions) {
    this.#clock = options.clock;
    this.#admit = options.admit;
    this.#autoCreateNamespaces = options.autoCreateNamespaces ?? false;
    this.#historyMaxBytes = options.historyMaxBytes ?? DEFAULT_HISTORY_MAX_BYTES;
    this.#maxObjectBytes = options.maxObjectBytes ?? DEFAULT_MAX_OBJECT_BYTES;
    if (!(this.#historyMaxBytes >= 0))
      throw new InvalidOptionsError(
        'ObjectStore',
        `historyMaxBytes must be >= 0, got ${this.#historyMaxBytes}`,
      );
    if (!(this.#maxObjectBytes > 0))
      throw new InvalidOptionsError('ObjectStore', `maxObjectBytes must be > 0, got ${this.#maxObjectBytes}`);
    for (const t of RESOURCE_TYPES)
      this.#tables.set(t.resource, new ResourceTable(t, options.historySize ?? 10_000, 0));
    for (const ns of DEFAULT_NAMESPACES) this.create('namespaces', { metadata: { name: ns } });
  }

  /** The current (latest) resourceVersion, as a string like the API's. */
  get resourceVersion(): string {
    return String(this.#rv);
  }

  /** @internal The current resourceVersion as a number. */
  get currentRv(): number {
    return this.#rv;
  }

  /** @internal The table of a resource type. */
  table(type: ResourceType): ResourceTable {
    return this.#tables.get(type.resource) as ResourceTable;
  }

  /** Resolves a resource name (`pods`, `leases`, `endpointslices.discovery.k8s.io`). */
  typeOf(resource: string): ResourceType {
    const t = findResourceType(resource);
    if (!t) throw new TypeError(`mini-apiserver: unknown resource "${resource}"`);
    return t;
  }

  /** Subscribes to every committed change (used by controllers); returns an unsubscribe function. */
  onChange(listener: (change: StoreChange) => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  /**
   * Forgets all watch history: watches and continue tokens from any resourceVersion handed
   * out so far get 410. The revision counter moves on by one (as if an unrelated write
   * happened) so that a fresh list returns an RV a watch can start from.
   */
  compact(): void {
    const rv = ++this.#rv;
    for (const t of this.#tables.values()) t.compact(rv);
    this.#historyBytes = 0;
  }

  /** Bytes of serialized objects the watch history holds now (at most `historyMaxBytes`). */
  get historyBytes(): number {
    return this.#historyBytes;
  }

  /** Reads one object; `undefined` when absent. */
  tryGet(resource: string, namespace: string | undefined, name: string): KubeObject | undefined {
    const type = this.typeOf(resource);
    const e = this.table(type).entries.get(keyOf(type, namespace ?? '', name));
    return e ? (JSON.parse(e.json) as KubeObject) : undefined;
  }

  /**
   * Reads one object.
   * @throws ApiStatusError 404 NotFound.
   */
  get(resource: string, namespace: string | undefined, name: string): KubeObject {
    const obj = this.tryGet(resource, namespace, name);
    if (!obj) throw notFound(this.typeOf(resource), name);
    return obj;
  }

  /** All objects of a type (optionally in one namespace), in key order. */
  list(resource: string, namespace?: string): KubeObject[] {
    const type = this.typeOf(resource);
    const snap = this.table(type).currentSnapshot();
    const out: KubeObject[] = [];
    for (const e of snap)
      if (namespace === undefined || e.namespace === namespace) out.push(JSON.parse(e.json));
    return out;
  }

  /** Number of objects of a type. */
  count(resource: string): number {
    return this.table(this.typeOf(resource)).entries.size;
  }

  /**
   * Creates an object (name from `metadata.name` or `generateName`).
   * @throws ApiStatusError 409 AlreadyExists, 422 Invalid, 404 for a missing namespace.
   */
  create(resource: string, input: KubeObject, options: CreateOptions = {}): KubeObject {
    const type = this.typeOf(resource);
    const obj = this.#normalizeKind(type, structuredClone(input));
    const meta = obj.metadata ?? {};
    obj.metadata = meta;
    if (
      (meta.name === undefined || meta.name === '') &&
      typeof meta.generateName === 'string' &&
      meta.generateName
    ) {
      meta.name = meta.generateName + randomSuffix(5);
    }
    if (!type.namespaced) delete meta.namespace;
    options.check?.(obj, undefined);
    prepareConfigObject(type.resource, obj);
    if (options.admit === true) this.#admit?.(type.resource, obj, undefined);
    const bad = validateObject(type, obj);
    if (bad) throw bad;
    const name = meta.name as string;
    const ns = type.namespaced ? (meta.namespace as string) : '';
    if (type.namespaced) this.#requireNamespace(ns);
    const table = this.table(type);
    const key = keyOf(type, ns, name);
    if (table.entries.has(key)) throw alreadyExists(type, name);
    meta.uid = randomUUID();
    meta.creationTimestamp = isoSeconds(this.#clock.now());
    if (obj.spec !== undefined) meta.generation = 1;
    delete meta.resourceVersion;
    delete meta.deletionTimestamp;
    delete meta.deletionGracePeriodSeconds;
    if (options.keepStatus === false) this.#resetStatusOnCreate(type, obj);
    if (type.resource === 'namespaces') {
      obj.spec = { finalizers: ['kubernetes'], ...(isPlainObject(obj.spec) ? obj.spec : {}) };
      obj.status = { phase: 'Active' };
    }
    return this.#commit(type, 'ADDED', obj, undefined);
  }

  /**
   * Replaces an object (PUT). A non-empty `metadata.resourceVersion` must match the stored
   * one (409 Conflict otherwise); an empty one is an unconditional update.
   */
  update(resource: string, input: KubeObject, options: WriteOptions = {}): KubeObject {
    const type = this.typeOf(resource);
    const obj = this.#normalizeKind(type, structuredClone(input));
    const meta = obj.metadata ?? {};
    const name = typeof meta.name === 'string' ? meta.name : '';
    const ns = type.namespaced ? (typeof meta.namespace === 'string' ? meta.namespace : '') : '';
    const prev = this.table(type).entries.get(keyOf(type, ns, name));
    if (!prev) {
      if (name === '') throw validateObject(type, obj) ?? notFound(type, name);
      throw notFound(type, name);
    }
    const rv = meta.resourceVersion;
    if (rv !== undefined && rv !== '' && rv !== String(prev.rv)) throw conflict(type, name, MODIFIED_MESSAGE);
    if (meta.uid !== undefined && meta.uid !== '' && meta.uid !== prev.uid) {
      throw conflict(
        type,
        name,
        `Precondition failed: UID in precondition: ${meta.uid}, UID in object meta: ${prev.uid}`,
      );
    }
    return this.#replace(type, prev, obj, options.subresource, options.admit === true, options.check);
  }

  /**
   * Patches an object (`merge`, `strategic` or `json` patch), with the same concurrency rule
   * as update for a `metadata.resourceVersion` inside the patch.
   */
  patch(
    resource: string,
    namespace: string | undefined,
    name: string,
    patchType: PatchType,
    patch: unknown,
    options: WriteOptions = {},
  ): KubeObject {
    const type = this.typeOf(resource);
    const prev = this.table(type).entries.get(keyOf(type, namespace ?? '', name));
    if (!prev) throw notFound(type, name);
    const current = JSON.parse(prev.json) as KubeObject;
    const patched = applyPatch(patchType, current, patch);
    if (!isPlainObject(patched)) throw badRequest('the patch did not produce an object');
    if (valueNestingDepth(patched) > MAX_STORED_NESTING_DEPTH) {
      throw badRequest(
        `the patched object is nested deeper than ${MAX_STORED_NESTING_DEPTH}; mini-apiserver handles objects nested at most ${MAX_STORED_NESTING_DEPTH} deep`,
      );
    }
    const obj = patched as KubeObject;
    const meta = (isPlainObject(obj.metadata) ? obj.metadata : {}) as NonNullable<KubeObject['metadata']>;
    obj.metadata = meta;
    if (meta.name !== name || (type.namespaced && meta.namespace !== namespace)) {
      throw badRequest('metadata.name and metadata.namespace cannot be changed by a patch');
    }
    if (meta.resourceVersion !== undefined && meta.resourceVersion !== String(prev.rv)) {
      throw conflict(type, name, MODIFIED_MESSAGE);
    }
    if (meta.uid !== prev.uid) {
      throw conflict(
        type,
        name,
        `Precondition failed: UID in precondition: ${String(meta.uid)}, UID in object meta: ${prev.uid}`,
      );
    }
    return this.#replace(
      type,
      prev,
      this.#normalizeKind(type, obj),
      options.subresource,
      options.admit === true,
      options.check,
    );
  }

  /**
   * Deletes an object. A pod bound to a node with a grace period > 0 only gets
   * `deletionTimestamp` + `deletionGracePeriodSeconds` (the node removes it with a
   * zero-grace delete); an object with finalizers stays until they are removed.
   */
  delete(
    resource: string,
    namespace: string | undefined,
    name: string,
    options: DeleteOptions = {},
  ): DeleteResult {
    const type = this.typeOf(resource);
    const prev = this.table(type).entries.get(keyOf(type, namespace ?? '', name));
    if (!prev) throw notFound(type, name);
    const pre = options.preconditions;
    if (pre?.uid !== undefined && pre.uid !== prev.uid) {
      throw conflict(
        type,
        name,
        `Precondition failed: UID in precondition: ${pre.uid}, UID in object meta: ${prev.uid}`,
      );
    }
    if (pre?.resourceVersion !== undefined && pre.resourceVersion !== String(prev.rv)) {
      throw conflict(
        type,
        name,
        `Precondition failed: ResourceVersion in precondition: ${pre.resourceVersion}, ResourceVersion in object meta: ${prev.rv}`,
      );
    }
    const obj = JSON.parse(prev.json) as KubeObject;
    const meta = obj.metadata as NonNullable<KubeObject['metadata']>;
    const grace = this.#graceSeconds(type, obj, options.gracePeriodSeconds);
    const finalizers = Array.isArray(meta.finalizers) && meta.finalizers.length > 0;
    if (grace > 0 || finalizers) {
      const already = meta.deletionTimestamp !== undefined;
      const currentGrace = meta.deletionGracePeriodSeconds ?? Number.POSITIVE_INFINITY;
      if (already && grace >= currentGrace) return { object: obj, deleted: false };
      if (grace > 0 || !already || currentGrace !== 0) {
        meta.deletionTimestamp = isoSeconds(this.#clock.now() + grace * 1000);
        meta.deletionGracePeriodSeconds = grace;
        meta.generation = (meta.generation ?? 0) + 1;
        const updated = this.#commit(type, 'MODIFIED', obj, prev);
        if (grace > 0 || finalizers) return { object: updated, deleted: false };
      }
    }
    if (type.resource === 'namespaces') this.#deleteNamespaceContents(name);
    const current = this.table(type).entries.get(prev.key) as StoreEntry;
    const finalObj = JSON.parse(current.json) as KubeObject;
    return { object: this.#commit(type, 'DELETED', finalObj, current), deleted: true };
  }

  /**
   * Runs `write` as a dry run (`dryRun=All`): validation and defaulting happen, nothing is
   * stored, no resourceVersion is used and no watch event is sent; the write returns the
   * object as it would be.
   */
  dryRun<T>(write: () => T): T {
    const was = this.#dryRun;
    this.#dryRun = true;
    try {
      return write();
    } finally {
      this.#dryRun = was;
    }
  }

  #dryRun = false;

  #graceSeconds(type: ResourceType, obj: KubeObject, requested: number | undefined): number {
    if (type.resource !== 'pods') return 0;
    const spec = isPlainObject(obj.spec) ? obj.spec : {};
    const status = isPlainObject(obj.status) ? obj.status : {};
    if (typeof spec.nodeName !== 'string' || spec.nodeName === '') return 0;
    if (status.phase === 'Succeeded' || status.phase === 'Failed') return 0;
    const dflt =
      typeof spec.terminationGracePeriodSeconds === 'number' ? spec.terminationGracePeriodSeconds : 30;
    const g = requested ?? obj.metadata?.deletionGracePeriodSeconds ?? dflt;
    return Math.max(0, Math.floor(g));
  }

  #deleteNamespaceContents(ns: string): void {
    for (const t of RESOURCE_TYPES) {
      if (!t.namespaced) continue;
      const table = this.table(t);
      for (const e of [...table.entries.values()]) {
        if (e.namespace === ns) this.#commit(t, 'DELETED', JSON.parse(e.json), e);
      }
    }
  }

  #requireNamespace(ns: string): void {
    const nsTable = this.table(this.typeOf('namespaces'));
    if (nsTable.entries.has(ns)) return;
    if (this.#autoCreateNamespaces) {
      this.create('namespaces', { metadata: { name: ns } });
      return;
    }
    throw notFound(this.typeOf('namespaces'), ns);
  }

  #resetStatusOnCreate(type: ResourceType, obj: KubeObject): void {
    if (type.resource === 'pods') obj.status = { phase: 'Pending' };
    else if (type.resource === 'services') obj.status = { loadBalancer: {} };
  }

  #normalizeKind(type: ResourceType, obj: KubeObject): KubeObject {
    if (obj.kind !== undefined && obj.kind !== type.kind) {
      throw badRequest(
        `the object provided is unrecognized (must be of type ${type.kind}): kind "${String(obj.kind)}"`,
      );
    }
    if (obj.apiVersion !== undefined && obj.apiVersion !== type.apiVersion) {
      throw badRequest(
        `the API version in the data (${String(obj.apiVersion)}) does not match the expected API version (${type.apiVersion})`,
      );
    }
    if (obj.metadata !== undefined && !isPlainObject(obj.metadata))
      throw badRequest('metadata must be an object');
    const { kind: _k, apiVersion: _a, ...rest } = obj;
    return { kind: type.kind, apiVersion: type.apiVersion, ...rest };
  }

  #replace(
    type: ResourceType,
    prev: StoreEntry,
    obj: KubeObject,
    subresource: 'status' | undefined,
    admit: boolean,
    check?: AdmitFunc,
  ): KubeObject {
    const old = JSON.parse(prev.json) as KubeObject;
    const oldMeta = old.metadata as NonNullable<KubeObject['metadata']>;
    let next: KubeObject;
    if (subresource === 'status') {
      next = { ...old, status: obj.status };
      if (obj.status === undefined) delete next.status;
    } else {
      next = obj;
      if (type.hasStatus) {
        if (old.status === undefined) delete next.status;
        else next.status = old.status;
      }
    }
    const meta = (isPlainObject(next.metadata) ? { ...next.metadata } : {}) as NonNullable<
      KubeObject['metadata']
    >;
    next.metadata = meta;
    meta.name = oldMeta.name as string;
    if (type.namespaced) meta.namespace = oldMeta.namespace as string;
    else delete meta.namespace;
    meta.uid = oldMeta.uid as string;
    meta.creationTimestamp = oldMeta.creationTimestamp as string;
    for (const k of ['deletionTimestamp', 'deletionGracePeriodSeconds', 'generation'] as const) {
      if (oldMeta[k] === undefined) delete meta[k];
      else (meta as Record<string, unknown>)[k] = oldMeta[k];
    }
    delete meta.resourceVersion;
    check?.(next, old);
    prepareConfigObject(type.resource, next);
    if (admit) this.#admit?.(type.resource, next, old);
    const bad = validateObject(type, next, old);
    if (bad) throw bad;
    if (next.spec !== undefined && specPart(next) !== specPart(old))
      meta.generation = (oldMeta.generation ?? 0) + 1;
    const finalizers = Array.isArray(meta.finalizers) && meta.finalizers.length > 0;
    if (meta.deletionTimestamp !== undefined && !finalizers && (meta.deletionGracePeriodSeconds ?? 0) === 0) {
      return this.#commit(type, 'DELETED', next, prev);
    }
    return this.#commit(type, 'MODIFIED', next, prev);
  }

  /** Forgets the globally oldest events until the history fits `historyMaxBytes`. */
  #trimHistory(): void {
    while (this.#historyBytes > this.#historyMaxBytes) {
      let oldest: ResourceTable | undefined;
      for (const t of this.#tables.values()) {
        const rv = t.oldestHistoryRv;
        if (rv !== undefined && (oldest === undefined || rv < (oldest.oldestHistoryRv as number))) oldest = t;
      }
      if (oldest === undefined) return;
      const before = oldest.historyBytes;
      oldest.dropOldest();
      this.#historyBytes -= before - oldest.historyBytes;
    }
  }

  /** Assigns the next resourceVersion, stores the entry, records history, notifies. */
  #commit(
    type: ResourceType,
    eventType: StoreEventType,
    obj: KubeObject,
    prev: StoreEntry | undefined,
  ): KubeObject {
    // --- dry run (dry-run.ts) ---
    if (this.#dryRun) {
      if (eventType !== 'DELETED' && Buffer.byteLength(JSON.stringify(obj)) > this.#maxObjectBytes) {
        throw requestTooLarge();
      }
      return dryRunObject(obj, prev?.rv);
    }
    // --- end dry run ---
    const rv = this.#rv + 1;
    const meta = obj.metadata as NonNullable<KubeObject['metadata']>;
    meta.resourceVersion = String(rv);
    const json = JSON.stringify(obj);
    if (eventType !== 'DELETED' && Buffer.byteLength(json) > this.#maxObjectBytes) throw requestTooLarge();
    this.#rv = rv;
    const name = meta.name as string;
    const namespace = type.namespaced ? (meta.namespace as string) : '';
    const entry: StoreEntry = {
      key: keyOf(type, namespace, name),
      namespace,
      name,
      uid: meta.uid as string,
      rv,
      json,
      labels: isPlainObject(meta.labels) ? (meta.labels as Record<string, string>) : {},
      fields: fieldsOf(type, obj),
    };
    const event: StoreEvent = { type: eventType, rv, entry, prev };
    const table = this.table(type);
    const before = table.historyBytes;
    table.commit(event);
    this.#historyBytes += table.historyBytes - before;
    this.#trimHistory();
    if (this.#listeners.size > 0) {
      const change: StoreChange = {
        type,
        eventType,
        object: () => JSON.parse(json) as KubeObject,
        previous: prev ? () => JSON.parse(prev.json) as KubeObject : undefined,
      };
      for (const l of this.#listeners) l(change);
    }
    return JSON.parse(json) as KubeObject;
  }
}
