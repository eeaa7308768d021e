// biome-ignore-all lint/suspicious/noExplicitAny: assertions read raw API JSON
import {
  type KubeObject,
  type MiniApiServer,
  type MiniApiServerOptions,
  startMiniApiServer,
} from '../src/index.js';

/** Polls `cond` every `stepMs` until it holds or `timeoutMs` passed (the caller asserts afterwards). */
export async function waitUntil(cond: () => boolean, timeoutMs = 5_000, stepMs = 5): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!cond() && Date.now() < deadline) await new Promise((r) => setTimeout(r, stepMs));
}

/** Starts a server and registers nothing: callers stop it in afterEach. */
export async function start(options: MiniApiServerOptions = {}): Promise<MiniApiServer> {
  return startMiniApiServer(options);
}

/** A minimal valid pod. */
export function pod(
  name: string,
  extra: { ns?: string; labels?: Record<string, string>; nodeName?: string; status?: unknown } = {},
): KubeObject {
  const spec: Record<string, unknown> = { containers: [{ name: 'app', image: 'busybox' }] };
  if (extra.nodeName !== undefined) spec.nodeName = extra.nodeName;
  const obj: KubeObject = {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, namespace: extra.ns ?? 'default', ...(extra.labels ? { labels: extra.labels } : {}) },
    spec,
  };
  if (extra.status !== undefined) obj.status = extra.status;
  return obj;
}

/** JSON request against the server; returns status code and parsed body. */
export async function call(
  server: MiniApiServer,
  method: string,
  path: string,
  body?: unknown,
  contentType = 'application/json',
): Promise<{ code: number; body: any; headers: Headers }> {
  const init: RequestInit = { method, headers: { 'content-type': contentType } };
  if (body !== undefined) init.body = JSON.stringify(body);
  const res = await fetch(server.url + path, init);
  const text = await res.text();
  return { code: res.status, body: text === '' ? undefined : JSON.parse(text), headers: res.headers };
}

/** An open watch that collects decoded events. */
export interface WatchHandle {
  readonly events: Array<{ type: string; object: any }>;
  readonly status: number;
  /** Resolves when at least `n` events arrived (rejects after `timeoutMs`). */
  waitFor(n: number, timeoutMs?: number): Promise<Array<{ type: string; object: any }>>;
  /** Resolves when the server ended the stream (done=true) or the connection failed (done=false). */
  readonly ended: Promise<boolean>;
  close(): void;
}

/** Opens a watch (path includes the query). */
export async function openWatch(server: MiniApiServer, pathAndQuery: string): Promise<WatchHandle> {
  const ac = new AbortController();
  const res = await fetch(server.url + pathAndQuery, { signal: ac.signal });
  const events: Array<{ type: string; object: any }> = [];
  let notify: (() => void) | undefined;
  const ended = (async () => {
    if (!res.body) return true;
    const decoder = new TextDecoder();
    let buf = '';
    try {
      for await (const chunk of res.body) {
        buf += decoder.decode(chunk as Uint8Array, { stream: true });
        let nl = buf.indexOf('\n');
        while (nl >= 0) {
          const line = buf.slice(0, nl);
          buf = buf.slice(nl + 1);
          if (line.trim() !== '') events.push(JSON.parse(line));
          nl = buf.indexOf('\n');
        }
        notify?.();
      }
      return true;
    } catch {
      return false;
    } finally {
      notify?.();
    }
  })();
  let finished = false;
  void ended.then(() => {
    finished = true;
  });
  return {
    events,
    status: res.status,
    ended,
    close: () => ac.abort(),
    waitFor(n, timeoutMs = 5000) {
      return new Promise((resolve, reject) => {
        const timer = setTimeout(
          () =>
            reject(
              new Error(
                `timed out waiting for ${n} events, got ${JSON.stringify(events.map((e) => e.type))}`,
              ),
            ),
          timeoutMs,
        );
        const check = (): void => {
          if (events.length >= n) {
            clearTimeout(timer);
            resolve(events);
          } else if (finished) {
            clearTimeout(timer);
            reject(new Error(`stream ended with ${events.length} events`));
          } else notify = check;
        };
        check();
      });
    },
  };
}

/** JSON request with a bearer token; returns status code and parsed body. */
export async function callAs(
  server: MiniApiServer,
  token: string,
  method: string,
  path: string,
  body?: unknown,
): Promise<{ code: number; body: any }> {
  const init: RequestInit = {
    method,
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
  };
  if (body !== undefined) init.body = JSON.stringify(body);
  const res = await fetch(server.url + path, init);
  const text = await res.text();
  return { code: res.status, body: text === '' ? undefined : JSON.parse(text) };
}

/** The RBAC API group. */
export const RBAC_GROUP = 'rbac.authorization.k8s.io';
const RBAC = `${RBAC_GROUP}/v1`;

/** A binding's subject: a user name (as kubectl writes it), or the subject itself. */
export type TestSubject = string | { kind: string; name: string; apiGroup?: string; namespace?: string };

const subject = (s: TestSubject) =>
  typeof s === 'string' ? { apiGroup: RBAC_GROUP, kind: 'User', name: s } : s;

const RBAC_RESOURCE: Record<string, string> = {
  ClusterRole: 'clusterroles',
  ClusterRoleBinding: 'clusterrolebindings',
  Role: 'roles',
  RoleBinding: 'rolebindings',
};

/** Stores these Roles, ClusterRoles and their bindings straight into `server`'s store, by kind. */
export function seedRbac(server: MiniApiServer, ...objects: KubeObject[]): void {
  for (const obj of objects) {
    const resource = RBAC_RESOURCE[obj.kind ?? ''];
    if (!resource) throw new Error(`seedRbac: ${obj.kind} is not an RBAC kind`);
    server.store.create(resource, obj);
  }
}

/** A ClusterRole with these rules (and `extra` top-level fields). */
export function clusterRole(name: string, rules: unknown[], extra: Record<string, unknown> = {}): KubeObject {
  return { apiVersion: RBAC, kind: 'ClusterRole', metadata: { name }, rules, ...extra };
}

/** A Role in `ns` with these rules. */
export function role(ns: string, name: string, rules: unknown[]): KubeObject {
  return { apiVersion: RBAC, kind: 'Role', metadata: { name, namespace: ns }, rules };
}

/** A ClusterRoleBinding of ClusterRole `roleName` to `subjects`. */
export function clusterRoleBinding(name: string, roleName: string, ...subjects: TestSubject[]): KubeObject {
  return {
    apiVersion: RBAC,
    kind: 'ClusterRoleBinding',
    metadata: { name },
    roleRef: { apiGroup: RBAC_GROUP, kind: 'ClusterRole', name: roleName },
    subjects: subjects.map(subject),
  };
}

/** A RoleBinding in `ns` of the `roleKind` (Role or ClusterRole) `roleName` to `subjects`. */
export function roleBinding(
  ns: string,
  name: string,
  roleKind: 'Role' | 'ClusterRole',
  roleName: string,
  ...subjects: TestSubject[]
): KubeObject {
  return {
    apiVersion: RBAC,
    kind: 'RoleBinding',
    metadata: { name, namespace: ns },
    roleRef: { apiGroup: RBAC_GROUP, kind: roleKind, name: roleName },
    subjects: subjects.map(subject),
  };
}
