/**
 * ConfigMaps and Secrets for container env (`configMapKeyRef`, `secretKeyRef`, `envFrom`): the
 * runtime resolves env synchronously, so the pod sync reads the objects the pod references from
 * the API first (as the kubelet's cache-based ConfigMap/Secret managers: a GET when the pod is
 * synced) and the runtime's lookups answer from that snapshot. Objects no pod references any more
 * are dropped when the pod terminates.
 *
 * @module
 */
import type { V1ConfigMap, V1Pod, V1Secret } from '@kubernetes/client-node';
import type { EnvSources } from '@nodeagent/kuberuntime';

/** The API calls this needs (`ApiClient`'s `get`: undefined on 404). */
export interface EnvSourcesApi {
  get<T>(path: string, signal?: AbortSignal): Promise<T | undefined>;
}

type Kind = 'configmaps' | 'secrets';

/** The ConfigMaps and Secrets a pod's containers (init containers included) name in env. */
export function podEnvReferences(pod: V1Pod): { kind: Kind; name: string }[] {
  const refs = new Map<string, { kind: Kind; name: string }>();
  const add = (kind: Kind, name: string | undefined) => {
    if (name !== undefined && name !== '') refs.set(`${kind}/${name}`, { kind, name });
  };
  const spec = pod.spec;
  for (const c of [...(spec?.initContainers ?? []), ...(spec?.containers ?? [])]) {
    for (const from of c.envFrom ?? []) {
      add('configmaps', from.configMapRef?.name);
      add('secrets', from.secretRef?.name);
    }
    for (const env of c.env ?? []) {
      add('configmaps', env.valueFrom?.configMapKeyRef?.name);
      add('secrets', env.valueFrom?.secretKeyRef?.name);
    }
  }
  return [...refs.values()];
}

/** The snapshot the runtime reads, refreshed by {@link PodEnvSources.refresh} on each pod sync. */
export class PodEnvSources implements EnvSources {
  readonly #api: EnvSourcesApi;
  readonly #objects = new Map<string, Record<string, string | Uint8Array> | undefined>();
  readonly #byPod = new Map<string, string[]>();

  /** @param api reads ConfigMaps and Secrets. */
  constructor(api: EnvSourcesApi) {
    this.#api = api;
  }

  /**
   * Reads every ConfigMap and Secret `pod` references in env (a missing one is remembered as
   * missing). @throws the API error of a read that failed otherwise (the sync is retried)
   */
  async refresh(pod: V1Pod, signal?: AbortSignal): Promise<void> {
    const ns = pod.metadata?.namespace ?? '';
    const keys: string[] = [];
    for (const { kind, name } of podEnvReferences(pod)) {
      const key = `${kind}/${ns}/${name}`;
      keys.push(key);
      const path = `/api/v1/namespaces/${encodeURIComponent(ns)}/${kind}/${encodeURIComponent(name)}`;
      if (kind === 'configmaps') {
        const cm = await this.#api.get<V1ConfigMap>(path, signal);
        // Env reads `data` only (binaryData is for volumes), as the kubelet's.
        this.#objects.set(key, cm === undefined ? undefined : { ...cm.data });
      } else {
        const secret = await this.#api.get<V1Secret>(path, signal);
        this.#objects.set(key, secret === undefined ? undefined : binary(secret.data));
      }
    }
    this.#byPod.set(pod.metadata?.uid ?? '', keys);
  }

  /** Forgets the pod's references; objects no other pod references are dropped. */
  release(uid: string): void {
    this.#byPod.delete(uid);
    const inUse = new Set([...this.#byPod.values()].flat());
    for (const key of [...this.#objects.keys()]) if (!inUse.has(key)) this.#objects.delete(key);
  }

  /** The ConfigMap's data, as last read; undefined when missing or never read. */
  configMap(namespace: string, name: string): Readonly<Record<string, string>> | undefined {
    return this.#objects.get(`configmaps/${namespace}/${name}`) as Record<string, string> | undefined;
  }

  /** The Secret's decoded data, as last read; undefined when missing or never read. */
  secret(namespace: string, name: string): Readonly<Record<string, string | Uint8Array>> | undefined {
    return this.#objects.get(`secrets/${namespace}/${name}`);
  }
}

function binary(data: Record<string, string> | undefined): Record<string, Uint8Array> {
  const out: Record<string, Uint8Array> = {};
  for (const [k, v] of Object.entries(data ?? {})) out[k] = Buffer.from(v, 'base64');
  return out;
}
