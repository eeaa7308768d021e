/**
 * A container's environment as the kubelet builds it (upstream `makeEnvironmentVariables`):
 * `envFrom`, then `env` in order with `$(VAR)` expansion over the variables defined before, and
 * the downward API fields the kubelet resolves itself (`fieldRef`, `resourceFieldRef`).
 *
 * @module
 */
import type { V1Container, V1EnvVar, V1Pod } from '@kubernetes/client-node';
import type { KeyValue } from '@nodeagent/cri';
import { expand } from '@nodeagent/kubecontainer';
import { ContainerConfigError } from './errors.js';
import { milliValue, quantityValue } from './quantity.js';
import { effectiveRequests } from './resources.js';

/** Looks up ConfigMaps and Secrets for `envFrom` / `configMapKeyRef` / `secretKeyRef`. */
export interface EnvSources {
  /** The ConfigMap's data, or undefined when it does not exist. */
  configMap(namespace: string, name: string): Readonly<Record<string, string>> | undefined;
  /**
   * The Secret's data (base64-decoded), or undefined when it does not exist. A string is taken
   * as text (UTF-8); bytes are passed to the runtime as they are, even when not UTF-8 (the CRI's
   * `KeyValue.value` is `bytes`, as upstream since cri-api v0.36.3).
   */
  secret(namespace: string, name: string): Readonly<Record<string, string | Uint8Array>> | undefined;
}

// Values are handled as byte strings (one char per byte, latin1), as Go handles env values:
// `$(VAR)` expansion concatenates bytes, and a Secret's non-UTF-8 bytes reach the runtime intact.
function toBytes(text: string): string {
  return Buffer.from(text, 'utf8').toString('latin1');
}

function fromBytes(bytes: string): string {
  return Buffer.from(bytes, 'latin1').toString('utf8');
}

function sourceValue(value: string | Uint8Array): string {
  return typeof value === 'string' ? toBytes(value) : Buffer.from(value).toString('latin1');
}

/** What env resolution needs to know beyond the pod. */
export interface EnvContext {
  /** Primary pod IP (`status.podIP`). */
  readonly podIp: string;
  /** All pod IPs (`status.podIPs`). */
  readonly podIps: readonly string[];
  /** Node IPs (`status.hostIP` / `status.hostIPs`). */
  readonly hostIps: readonly string[];
  /** Node allocatable CPU (millicores) and memory (bytes): the value of unset limits. */
  readonly nodeAllocatable: { readonly cpuMilli: bigint; readonly memoryBytes: bigint };
  /** ConfigMap / Secret lookups; without them such references fail (unless optional). */
  readonly envSources?: EnvSources | undefined;
}

/** Go's `%q` for the strings labels and annotations hold. */
function goQuote(value: string): string {
  return JSON.stringify(value);
}

/** A label or annotation map as the downward API prints it: sorted `key="value"` lines. */
export function formatDownwardMap(map: Readonly<Record<string, string>> | undefined): string {
  return Object.keys(map ?? {})
    .sort()
    .map((k) => `${k}=${goQuote(map?.[k] ?? '')}`)
    .join('\n');
}

const SUBSCRIPT = /^metadata\.(labels|annotations)\['(.+)'\]$/;

/** The value of a `fieldRef` path (upstream `podFieldSelectorRuntimeValue`). @throws ContainerConfigError */
export function podFieldValue(pod: V1Pod, fieldPath: string, ctx: EnvContext): string {
  const m = pod.metadata;
  switch (fieldPath) {
    case 'metadata.name':
      return m?.name ?? '';
    case 'metadata.namespace':
      return m?.namespace ?? '';
    case 'metadata.uid':
      return m?.uid ?? '';
    case 'metadata.labels':
      return formatDownwardMap(m?.labels);
    case 'metadata.annotations':
      return formatDownwardMap(m?.annotations);
    case 'spec.nodeName':
      return pod.spec?.nodeName ?? '';
    case 'spec.serviceAccountName':
      return pod.spec?.serviceAccountName ?? '';
    case 'status.hostIP':
      return ctx.hostIps[0] ?? '';
    case 'status.hostIPs':
      return ctx.hostIps.join(',');
    case 'status.podIP':
      return ctx.podIp;
    case 'status.podIPs':
      return ctx.podIps.join(',');
  }
  const sub = SUBSCRIPT.exec(fieldPath);
  if (sub !== null) {
    const map = sub[1] === 'labels' ? m?.labels : m?.annotations;
    return map?.[sub[2] ?? ''] ?? '';
  }
  throw new ContainerConfigError(`unsupported fieldPath: ${fieldPath}`);
}

function ceilDiv(a: bigint, b: bigint): bigint {
  if (b <= 0n) throw new ContainerConfigError('resourceFieldRef divisor must be positive');
  return (a + b - 1n) / b;
}

/** The value of a `resourceFieldRef` (upstream `ExtractContainerResourceValue` over merged limits). */
export function resourceFieldValue(
  container: V1Container,
  resource: string,
  divisor: string | undefined,
  ctx: EnvContext,
): string {
  const limits = container.resources?.limits ?? {};
  const requests = effectiveRequests(container);
  const div = divisor ?? '1';
  switch (resource) {
    case 'limits.cpu': {
      const milli = limits.cpu === undefined ? ctx.nodeAllocatable.cpuMilli : milliValue(limits.cpu);
      return String(ceilDiv(milli, milliValue(div)));
    }
    case 'limits.memory': {
      const bytes =
        limits.memory === undefined ? ctx.nodeAllocatable.memoryBytes : quantityValue(limits.memory);
      return String(ceilDiv(bytes, quantityValue(div)));
    }
    case 'requests.cpu':
      return String(ceilDiv(milliValue(requests.cpu ?? '0'), milliValue(div)));
    case 'requests.memory':
      return String(ceilDiv(quantityValue(requests.memory ?? '0'), quantityValue(div)));
    case 'limits.ephemeral-storage':
    case 'requests.ephemeral-storage': {
      const map = resource.startsWith('limits') ? limits : requests;
      return String(ceilDiv(quantityValue(map['ephemeral-storage'] ?? '0'), quantityValue(div)));
    }
  }
  if (/^(limits|requests)\.hugepages-/.test(resource)) {
    const [kind, name = ''] = resource.split(/\.(.*)/s);
    const map = kind === 'limits' ? limits : requests;
    return String(ceilDiv(quantityValue(map[name] ?? '0'), quantityValue(div)));
  }
  throw new ContainerConfigError(`unsupported container resource: ${resource}`);
}

function lookupSource(
  kind: 'configmap' | 'secret',
  ctx: EnvContext,
  namespace: string,
  name: string,
): Readonly<Record<string, string | Uint8Array>> | undefined {
  const sources = ctx.envSources;
  if (sources === undefined) return undefined;
  return kind === 'configmap' ? sources.configMap(namespace, name) : sources.secret(namespace, name);
}

function envVarValue(
  pod: V1Pod,
  container: V1Container,
  env: V1EnvVar,
  ctx: EnvContext,
  defined: Map<string, string>,
): string | undefined {
  if (env.value !== undefined && env.value !== '')
    return expand(toBytes(env.value), (n) => defined.get(fromBytes(n)));
  const from = env.valueFrom;
  if (from == null) return '';
  if (from.fieldRef != null) return toBytes(podFieldValue(pod, from.fieldRef.fieldPath, ctx));
  if (from.resourceFieldRef != null) {
    const ref = from.resourceFieldRef;
    const target =
      ref.containerName === undefined || ref.containerName === ''
        ? container
        : [...(pod.spec?.containers ?? []), ...(pod.spec?.initContainers ?? [])].find(
            (c) => c.name === ref.containerName,
          );
    if (target === undefined)
      throw new ContainerConfigError(`container ${ref.containerName} not found in pod`);
    return toBytes(resourceFieldValue(target, ref.resource, ref.divisor, ctx));
  }
  const namespace = pod.metadata?.namespace ?? '';
  const keyRef = from.configMapKeyRef ?? from.secretKeyRef;
  if (keyRef != null) {
    const kind = from.configMapKeyRef != null ? 'configmap' : 'secret';
    const label = kind === 'configmap' ? 'ConfigMap' : 'Secret';
    const data = lookupSource(kind, ctx, namespace, keyRef.name ?? '');
    if (data === undefined) {
      if (keyRef.optional === true) return undefined;
      throw new ContainerConfigError(`${kind} "${keyRef.name ?? ''}" not found`);
    }
    const value = data[keyRef.key];
    if (value === undefined) {
      if (keyRef.optional === true) return undefined;
      throw new ContainerConfigError(
        `couldn't find key ${keyRef.key} in ${label} ${namespace}/${keyRef.name ?? ''}`,
      );
    }
    return sourceValue(value);
  }
  return '';
}

/**
 * The container's environment, in definition order (later definitions override earlier ones);
 * values as bytes (UTF-8 text, or a Secret's raw bytes). @throws ContainerConfigError
 */
export function makeEnvironmentVariables(pod: V1Pod, container: V1Container, ctx: EnvContext): KeyValue[] {
  const defined = new Map<string, string>();
  const namespace = pod.metadata?.namespace ?? '';
  for (const from of container.envFrom ?? []) {
    const ref = from.configMapRef ?? from.secretRef;
    if (ref == null) continue;
    const kind = from.configMapRef != null ? 'configmap' : 'secret';
    const data = lookupSource(kind, ctx, namespace, ref.name ?? '');
    if (data === undefined) {
      if (ref.optional === true) continue;
      throw new ContainerConfigError(`${kind} "${ref.name ?? ''}" not found`);
    }
    for (const [k, v] of Object.entries(data)) defined.set(`${from.prefix ?? ''}${k}`, sourceValue(v));
  }
  for (const env of container.env ?? []) {
    const value = envVarValue(pod, container, env, ctx, defined);
    if (value !== undefined) defined.set(env.name, value);
  }
  return [...defined].map(([key, value]) => ({ key, value: Buffer.from(value, 'latin1') }));
}

/** The environment as name → byte string (one char per byte) for `$(VAR)` expansion. @internal */
export function envByteMap(envs: readonly KeyValue[]): Map<string, string> {
  return new Map(envs.map((e) => [e.key, Buffer.from(e.value).toString('latin1')]));
}

/**
 * `$(VAR)` expansion of `text` over an {@link envByteMap}, as Go does it on bytes; the result
 * as UTF-8 text (bytes that are not UTF-8 become U+FFFD). @internal
 */
export function expandWithEnv(
  text: string,
  env: ReadonlyMap<string, string>,
  onLookup?: (name: string, value: string | undefined) => void,
): string {
  return fromBytes(
    expand(toBytes(text), (n) => {
      const name = fromBytes(n);
      const value = env.get(name);
      onLookup?.(name, value);
      return value;
    }),
  );
}

/** Expands `$(VAR)` in command and args with the final environment (upstream `ExpandContainerCommandAndArgs`). */
export function expandCommandAndArgs(
  container: V1Container,
  envs: readonly KeyValue[],
): { command: string[]; args: string[] } {
  const map = envByteMap(envs);
  return {
    command: (container.command ?? []).map((c) => expandWithEnv(c, map)),
    args: (container.args ?? []).map((a) => expandWithEnv(a, map)),
  };
}
