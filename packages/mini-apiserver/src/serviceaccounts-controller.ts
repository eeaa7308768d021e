/**
 * What kube-controller-manager keeps in every namespace for pods' service account tokens:
 * the `default` ServiceAccount (the `serviceaccount` controller) and the `kube-root-ca.crt`
 * ConfigMap with the cluster CA (the `root-ca-cert-publisher`). Both are created for every
 * namespace that exists and every new one, and put back when deleted or (the ConfigMap)
 * changed.
 *
 * @module
 */
import type { Logger } from '@nodeagent/core';
import { isPlainObject, type KubeObject } from './object.js';
import { DEFAULT_SERVICE_ACCOUNT_NAME, ROOT_CA_CONFIG_MAP } from './serviceaccount-admission.js';
import type { ObjectStore, StoreChange } from './store.js';

/** The description annotation the root CA publisher sets on `kube-root-ca.crt`. */
export const ROOT_CA_DESCRIPTION =
  'Contains a CA bundle that can be used to verify the kube-apiserver when using internal endpoints such as the internal service IP or kubernetes.default.svc. No other usage is guaranteed across distributions of Kubernetes clusters.';

const DESCRIPTION_ANNOTATION = 'kubernetes.io/description';

/** Keeps the `default` ServiceAccount and `kube-root-ca.crt` ConfigMap in every namespace. */
export class ServiceAccountsController {
  readonly #store: ObjectStore;
  readonly #ca: string;
  readonly #log: Logger;
  #unsubscribe: (() => void) | undefined;

  /**
   * @param store the server's store
   * @param caPem the CA published as `ca.crt` (`''` for a plain-HTTP server, which has none)
   * @param log where failures to write are reported (they are retried on the next change)
   */
  constructor(store: ObjectStore, caPem: string, log: Logger) {
    this.#store = store;
    this.#ca = caPem;
    this.#log = log;
  }

  /** Fills the namespaces that exist and follows changes. */
  start(): void {
    if (this.#unsubscribe) return;
    this.#unsubscribe = this.#store.onChange((c) => this.#onChange(c));
    for (const ns of this.#store.list('namespaces')) this.#sync(String(ns.metadata?.name));
  }

  /** Stops following changes. */
  stop(): void {
    this.#unsubscribe?.();
    this.#unsubscribe = undefined;
  }

  #onChange(c: StoreChange): void {
    const resource = c.type.resource;
    if (resource === 'namespaces') {
      if (c.eventType === 'ADDED') this.#sync(String(c.object().metadata?.name));
      return;
    }
    if (resource !== 'serviceaccounts' && resource !== 'configmaps') return;
    const obj = c.object();
    const name = obj.metadata?.name;
    if (
      resource === 'serviceaccounts' &&
      (name !== DEFAULT_SERVICE_ACCOUNT_NAME || c.eventType !== 'DELETED')
    ) {
      return;
    }
    if (resource === 'configmaps' && (name !== ROOT_CA_CONFIG_MAP || c.eventType === 'ADDED')) return;
    // Deferred: a namespace being deleted removes its objects before itself.
    const ns = String(obj.metadata?.namespace);
    queueMicrotask(() => this.#sync(ns));
  }

  #sync(namespace: string): void {
    try {
      this.#ensure(namespace);
    } catch (err) {
      this.#log.warn(
        { err, namespace },
        'mini-apiserver: could not sync the service account objects of a namespace',
      );
    }
  }

  #ensure(namespace: string): void {
    const ns = this.#store.tryGet('namespaces', undefined, namespace);
    if (
      !ns ||
      ns.metadata?.deletionTimestamp !== undefined ||
      (ns as Record<string, unknown> & { status?: { phase?: unknown } }).status?.phase === 'Terminating'
    )
      return;
    const store = this.#store;
    if (!store.tryGet('serviceaccounts', namespace, DEFAULT_SERVICE_ACCOUNT_NAME)) {
      store.create('serviceaccounts', { metadata: { name: DEFAULT_SERVICE_ACCOUNT_NAME, namespace } });
    }
    const cm = store.tryGet('configmaps', namespace, ROOT_CA_CONFIG_MAP);
    if (!cm) {
      store.create('configmaps', {
        metadata: {
          name: ROOT_CA_CONFIG_MAP,
          namespace,
          annotations: { [DESCRIPTION_ANNOTATION]: ROOT_CA_DESCRIPTION },
        },
        data: { 'ca.crt': this.#ca },
      } as KubeObject);
      return;
    }
    const data = (cm as Record<string, unknown>).data;
    const current = isPlainObject(data) ? data : {};
    const annotations = isPlainObject(cm.metadata?.annotations) ? cm.metadata.annotations : {};
    if (
      Object.keys(current).length === 1 &&
      current['ca.crt'] === this.#ca &&
      annotations[DESCRIPTION_ANNOTATION] === ROOT_CA_DESCRIPTION
    ) {
      return;
    }
    store.update('configmaps', {
      ...cm,
      metadata: {
        ...cm.metadata,
        annotations: { ...annotations, [DESCRIPTION_ANNOTATION]: ROOT_CA_DESCRIPTION },
      },
      data: { 'ca.crt': this.#ca },
    } as KubeObject);
  }
}
