/**
 * The HTTP request handler: authentication, injected faults, discovery, and the REST verbs
 * (get, list, watch, create, update, patch, delete, deletecollection) on every resource.
 *
 * @module
 * @internal
 */
import { type IncomingMessage, type ServerResponse, STATUS_CODES } from 'node:http';
import type { Duplex } from 'node:stream';
import type { Clock, Logger } from '@nodeagent/core';
import {
  ALWAYS_ALLOW,
  AUTHORIZATION_GROUP,
  type Authorizer,
  readAccessReview,
  review,
} from './access-review.js';
import { ANONYMOUS_USER, type Authenticator } from './auth.js';
import { decodeObject } from './core-protobuf.js';
import {
  apiGroup,
  apiGroupList,
  apiResourceList,
  apiVersions,
  openApiV3Document,
  openApiV3Index,
  VERSION_INFO,
} from './discovery.js';
import { dryRunRequested } from './dry-run.js';
import {
  ApiStatusError,
  badRequest,
  failureStatus,
  forbidden as forbiddenStatus,
  invalid,
  methodNotAllowed,
  pathNotFound,
  type StatusBody,
  type StatusCause,
  tooLargeResourceVersion,
  unsupportedMediaType,
} from './errors.js';
import { serveEventsV1 } from './events-v1.js';
import type { Faults } from './faults.js';
import { parseFieldSelector } from './fields.js';
import { impersonatedUser } from './impersonation.js';
import { parseLabelSelector } from './labels.js';
import { listPage, writeListPage } from './list.js';
import { parseNodeProxyPath, serveNodeProxy } from './node-proxy.js';
import { isPlainObject, type KubeObject } from './object.js';
import { checkFields, fieldValidationOf, openApiV2 } from './openapi.js';
import { PATCH_MEDIA_TYPES, patchTypeOf } from './patch.js';
import {
  type KubeletClientOptions,
  NODE_PROXIED_POD_SUBRESOURCES,
  type PodStreamObserver,
  proxyPodStream,
  servePodLog,
} from './pod-node-proxy.js';
import { PROTOBUF_MEDIA_TYPE } from './protobuf-reader.js';
import { isTrueParam } from './query-params.js';
import { forbiddenMessage, type UserInfo } from './rbac.js';
import { rbacEscalationAdmit } from './rbac-escalation.js';
import { checkBodyMediaType, mediaTypeOf, readBody, readRawBody } from './request-body.js';
import { decodedPath, goQuery, hasBody, hasMalformedEscape, startRequestTimer } from './request-edges.js';
import { requestInfo } from './request-info.js';
import { parseRoute, type ResourceRoute } from './routes.js';
import { authorizationReviewFor } from './rules-review.js';
import { bindPod } from './scheduler.js';
import { admitPod } from './serviceaccount-admission.js';
import type { ServiceAccountTokens } from './serviceaccount-token.js';
import type { AdmitFunc, ObjectStore } from './store.js';
import { hasTable, includeObjectParam, tableVersion, toTable, watchTableJson } from './table-output.js';
import { tokenReview } from './token-review.js';
import { type WatchStart, WatchStream } from './watch-stream.js';

/** A request the server handled, kept for test assertions. */
export interface RequestRecord {
  readonly method: string;
  /** Path without query. */
  readonly path: string;
  /** Query parameters. */
  readonly query: Readonly<Record<string, string>>;
  /** Whether it was a watch. */
  readonly watch: boolean;
  /**
   * The authenticated user (token user or client certificate common name); undefined for
   * anonymous requests and for requests that failed authentication.
   */
  readonly user?: string;
  /** The HTTP status when the request was refused with 401. */
  readonly rejected?: 401;
  /** The `Upgrade` header (lower case) of an upgrade request (`websocket`, `spdy/3.1`). */
  readonly upgrade?: string;
}

/** What the handler needs from the server. */
export interface HandlerContext {
  readonly store: ObjectStore;
  readonly faults: Faults;
  readonly clock: Clock;
  readonly log: Logger;
  readonly auth: Authenticator;
  /** Decides every authenticated request (undefined: AlwaysAllow without the check). */
  readonly authorizer: Authorizer | undefined;
  readonly bookmarkIntervalMs: number;
  readonly watchTimeoutSeconds: () => number;
  readonly serverAddress: () => string;
  readonly watches: Set<WatchStream>;
  readonly watchBuffer: {
    readonly maxEvents: number;
    readonly maxBytes: number;
    readonly onOverflow: () => void;
  };
  readonly record: (r: RequestRecord) => void;
  /** Largest request body accepted (413 past it). */
  readonly maxRequestBodyBytes: number;
  /** Time a non-watch request may take before it is answered 504 (0 = never). */
  readonly requestTimeoutMs: number;
  /** Issues and verifies service account tokens. */
  readonly serviceAccountTokens: ServiceAccountTokens;
  /** Whether new pods go through the ServiceAccount admission plugin. */
  readonly serviceAccountAdmission: boolean;
  /** How pod subresources reach kubelets (pod-node-proxy.ts). */
  readonly kubeletClient?: KubeletClientOptions | undefined;
  /** Told the outcome of each translated/tunnelled streaming session. */
  readonly onPodStream?: PodStreamObserver | undefined;
}

/** Reads a create/update body: JSON, or the protobuf kubectl's typed clients send for some kinds. */
async function readObjectBody(req: IncomingMessage, limitBytes: number): Promise<unknown> {
  checkBodyMediaType(req.headers['content-type']);
  if (mediaTypeOf(req.headers['content-type']) === PROTOBUF_MEDIA_TYPE) {
    return decodeObject(await readRawBody(req, limitBytes));
  }
  return readBody(req, limitBytes);
}

function sendJson(res: ServerResponse, code: number, body: unknown): void {
  // A request that timed out was answered already (504); its late result is dropped.
  if (res.headersSent) return;
  const text = JSON.stringify(body);
  res.writeHead(code, { 'Content-Type': 'application/json', 'Cache-Control': 'no-cache, private' });
  res.end(text);
}

function sendStatus(res: ServerResponse, status: StatusBody): void {
  if (res.headersSent) {
    res.destroy();
    return;
  }
  sendJson(res, status.code, status);
}

function intParam(q: URLSearchParams, name: string): number | undefined {
  const v = q.get(name);
  if (v === null || v === '') return undefined;
  if (!/^-?[0-9]+$/.test(v)) throw badRequest(`invalid value for ${name}: "${v}"`);
  return Number(v);
}

/** Makes `res` cut the connection when the handler answers (fault injection). */
function cutInsteadOfAnswering(req: IncomingMessage, res: ServerResponse): void {
  const cut = (): ServerResponse => {
    req.socket.destroy();
    return res;
  };
  res.writeHead = cut as unknown as ServerResponse['writeHead'];
  res.write = (() => cut() !== undefined) as unknown as ServerResponse['write'];
  res.end = cut as unknown as ServerResponse['end'];
}

/** Handles one HTTP request end to end; never throws. */
export async function handleRequest(
  ctx: HandlerContext,
  req: IncomingMessage,
  res: ServerResponse,
): Promise<void> {
  const url = new URL(req.url ?? '/', 'http://localhost');
  if (hasMalformedEscape(url.pathname)) {
    // Go's net/http refuses such a request line before any kube-apiserver filter runs.
    res.writeHead(400, { 'Content-Type': 'text/plain; charset=utf-8', Connection: 'close' });
    res.end('400 Bad Request');
    return;
  }
  const method = (req.method ?? 'GET').toUpperCase();
  const q = goQuery(url.search);
  const route = parseRoute(url.pathname);
  const watch =
    route.kind === 'resource' && method === 'GET' && (isTrueParam(q.get('watch')) || route.legacyWatch);
  const timer =
    watch || ctx.requestTimeoutMs <= 0 || parseNodeProxyPath(url.pathname) !== undefined
      ? undefined
      : startRequestTimer(ctx.clock, ctx.requestTimeoutMs, req, res);
  try {
    const query = Object.fromEntries(q);
    if (route.kind === 'health') {
      ctx.record({ method, path: url.pathname, query, watch });
      res.writeHead(200, { 'Content-Type': 'text/plain; charset=utf-8' });
      res.end('ok');
      return;
    }
    let authenticated: UserInfo | undefined;
    try {
      authenticated = ctx.auth.authenticate(req);
    } catch (err) {
      ctx.record({ method, path: url.pathname, query, watch, rejected: 401 });
      throw err;
    }
    ctx.record(
      authenticated === undefined
        ? { method, path: url.pathname, query, watch }
        : { method, path: url.pathname, query, watch, user: authenticated.name },
    );
    const user = impersonatedUser(req, authenticated ?? ANONYMOUS_USER, ctx.authorizer); // impersonation.ts
    const info = requestInfo(method, decodedPath(url.pathname), q);
    if (ctx.authorizer) {
      const decision = ctx.authorizer.authorize(user, info);
      if (!decision.allowed) {
        throw forbiddenStatus(
          info.apiGroup,
          info.resource,
          info.name,
          forbiddenMessage(user, info, decision.reason),
        );
      }
    }
    if (ctx.faults.latencyMs > 0) await ctx.clock.sleep(ctx.faults.latencyMs);
    const injected = ctx.faults.takeFailure({ method, path: url.pathname, watch });
    if (injected) {
      sendStatus(res, injected);
      return;
    }
    const drop = ctx.faults.takeDrop({ method, path: url.pathname, watch });
    if (drop === 'before') {
      req.socket.destroy();
      return;
    }
    if (drop === 'after') cutInsteadOfAnswering(req, res);
    if (
      info.isResourceRequest &&
      info.apiGroup === AUTHORIZATION_GROUP &&
      info.apiVersion === 'v1' &&
      info.namespace === '' &&
      info.name === '' &&
      (info.resource === 'subjectaccessreviews' || info.resource === 'selfsubjectaccessreviews')
    ) {
      if (method !== 'POST') throw methodNotAllowed();
      const body = await readAccessReview(req, ctx.maxRequestBodyBytes);
      return sendJson(res, 201, review(info.resource, body, user, ctx.authorizer ?? ALWAYS_ALLOW));
    }
    // --- SelfSubjectRulesReview, LocalSubjectAccessReview (rules-review.ts) ---
    const answerReview = authorizationReviewFor(info, user, ctx.authorizer, ctx.store);
    if (answerReview) {
      if (method !== 'POST') throw methodNotAllowed();
      return sendJson(res, 201, answerReview(await readAccessReview(req, ctx.maxRequestBodyBytes)));
    }
    // --- end ---
    if (
      info.isResourceRequest &&
      info.apiGroup === 'authentication.k8s.io' &&
      info.apiVersion === 'v1' &&
      info.namespace === '' &&
      info.name === '' &&
      info.resource === 'tokenreviews'
    ) {
      if (method !== 'POST') throw methodNotAllowed();
      const body = await readObjectBody(req, ctx.maxRequestBodyBytes);
      if (!isPlainObject(body)) throw badRequest('the request body must be a JSON object');
      return sendJson(res, 201, tokenReview(body, ctx.auth, ctx.serviceAccountTokens));
    }
    if (url.pathname === '/.well-known/openid-configuration' || url.pathname === '/openid/v1/jwks') {
      if (method !== 'GET') throw methodNotAllowed();
      const jwks = url.pathname === '/openid/v1/jwks';
      const text = JSON.stringify(
        jwks ? ctx.serviceAccountTokens.jwks() : ctx.serviceAccountTokens.openIdConfiguration(),
      );
      res.writeHead(200, {
        'Content-Type': jwks ? 'application/jwk-set+json' : 'application/json',
        'Cache-Control': 'public, max-age=3600',
      });
      res.end(text);
      return;
    }
    // --- nodes/{name}/proxy/{path} (node-proxy.ts) ---
    const nodeProxy = parseNodeProxyPath(url.pathname);
    if (nodeProxy !== undefined) {
      await serveNodeProxy(ctx.store, ctx.kubeletClient, nodeProxy, url.search, req, res);
      return;
    }
    // --- end nodes proxy ---
    // --- events.k8s.io/v1 (events-v1.ts) ---
    if (await serveEventsV1(ctx.store, method, url.pathname, q, req, res, ctx.maxRequestBodyBytes)) return;
    // --- end events.k8s.io/v1 ---
    switch (route.kind) {
      case 'version':
        return sendJson(res, 200, VERSION_INFO);
      case 'api':
        return sendJson(res, 200, apiVersions(ctx.serverAddress()));
      case 'apis':
        return sendJson(res, 200, apiGroupList());
      case 'group': {
        const doc = apiGroup(route.group ?? '');
        if (!doc) throw pathNotFound();
        return sendJson(res, 200, doc);
      }
      case 'resources': {
        const doc = apiResourceList(route.group ?? '', route.version ?? '');
        if (!doc) throw pathNotFound();
        return sendJson(res, 200, doc);
      }
      case 'openapi': {
        if (url.pathname === '/openapi/v2') return sendJson(res, 200, openApiV2());
        const rest = url.pathname.replace(/^\/openapi\/v3\/?/, '');
        if (!url.pathname.startsWith('/openapi/v3')) throw pathNotFound();
        const doc = rest === '' ? openApiV3Index() : openApiV3Document(rest);
        if (!doc) throw pathNotFound();
        return sendJson(res, 200, doc);
      }
      case 'unknown':
        throw pathNotFound();
      case 'resource':
        await handleResource(ctx, route, method, q, watch, req, res, {
          // RBAC escalation prevention (rbac-escalation.ts)
          admit: rbacEscalationAdmit(ctx.authorizer, ctx.store, user, info),
        });
        return;
    }
  } catch (err) {
    if (err instanceof ApiStatusError) {
      sendStatus(res, err.status);
      return;
    }
    ctx.log.error({ err }, 'mini-apiserver: internal error');
    sendStatus(
      res,
      failureStatus(500, 'InternalError', `Internal error occurred: ${(err as Error).message}`),
    );
  } finally {
    timer?.cancel();
  }
}

async function handleResource(
  ctx: HandlerContext,
  route: ResourceRoute,
  method: string,
  q: URLSearchParams,
  watch: boolean,
  req: IncomingMessage,
  res: ServerResponse,
  { admit }: { readonly admit?: AdmitFunc | undefined } = {},
): Promise<void> {
  const { type, namespace, name, subresource } = route;
  const store = ctx.store;
  // --- pod subresources served by the pod's kubelet (pod-node-proxy.ts) ---
  if (
    type.resource === 'pods' &&
    name !== undefined &&
    subresource !== undefined &&
    NODE_PROXIED_POD_SUBRESOURCES.has(subresource)
  ) {
    if (subresource !== 'log') throw badRequest('Upgrade request required');
    if (method !== 'GET') throw methodNotAllowed();
    await servePodLog(store, ctx.kubeletClient, namespace ?? '', name, q, res);
    return;
  }
  // --- end pod subresources ---
  // dryRun=All (dry-run.ts): the store validates and defaults the write but keeps nothing.
  const dry = method === 'DELETE' ? false : dryRunRequested(method, q);
  const write = <T>(fn: () => T): T => (dry ? store.dryRun(fn) : fn());
  if (
    subresource !== undefined &&
    subresource !== 'status' &&
    !(subresource === 'binding' && type.resource === 'pods') &&
    !(subresource === 'token' && type.resource === 'serviceaccounts')
  ) {
    throw pathNotFound();
  }
  if (subresource === 'status' && !type.hasStatus) throw pathNotFound();
  if (watch) {
    startWatch(ctx, route, q, res, hasTable(type) ? tableVersion(req.headers.accept) : undefined);
    return;
  }
  if (name === undefined) {
    if (subresource !== undefined) throw pathNotFound();
    switch (method) {
      case 'GET': {
        const labels = parseLabelSelector(q.get('labelSelector'));
        const fields = parseFieldSelector(type, q.get('fieldSelector'));
        const page = listPage(
          store.table(type),
          {
            namespace,
            labels,
            fields,
            limit: intParam(q, 'limit'),
            continueToken: q.get('continue') || undefined,
            resourceVersion: q.get('resourceVersion') ?? undefined,
            resourceVersionMatch: q.get('resourceVersionMatch') || undefined,
            hasSelectors: labels.requirements.length > 0 || fields.requirements.length > 0,
          },
          store.currentRv,
        );
        const asTable = hasTable(type) ? tableVersion(req.headers.accept) : undefined;
        if (asTable) {
          const meta: Record<string, unknown> = { resourceVersion: String(page.rv) };
          if (page.continueToken !== undefined) meta.continue = page.continueToken;
          if (page.remainingItemCount !== undefined) meta.remainingItemCount = page.remainingItemCount;
          const objects = page.items.map((e) => JSON.parse(e.json) as KubeObject);
          return sendJson(
            res,
            200,
            toTable(type, asTable, objects, meta, ctx.clock.now(), includeObjectParam(q)),
          );
        }
        writeListPage(res, type, page);
        return;
      }
      case 'POST': {
        const body = await readObjectBody(req, ctx.maxRequestBodyBytes);
        if (!isPlainObject(body)) throw badRequest('the request body must be a JSON object');
        warn(res, checkFields(type, body, fieldValidationOf(method, q)));
        const obj = withNamespace(body as KubeObject, namespace, type.namespaced);
        if (type.resource === 'pods' && ctx.serviceAccountAdmission) {
          const ns = obj.metadata?.namespace;
          if (typeof ns === 'string' && ns !== '' && store.tryGet('namespaces', undefined, ns)) {
            admitPod(store, ns, obj, { mountServiceAccountToken: true });
          }
        }
        return sendJson(
          res,
          201,
          write(() => store.create(type.resource, obj, { keepStatus: false, admit: true, check: admit })),
        );
      }
      case 'DELETE': {
        if (hasBody(req)) checkBodyMediaType(req.headers['content-type']);
        const body = await readBody(req, ctx.maxRequestBodyBytes);
        const opts = deleteOptions(body, q);
        const dryDelete = dryRunRequested(method, q, body);
        const labels = parseLabelSelector(q.get('labelSelector'));
        const fields = parseFieldSelector(type, q.get('fieldSelector'));
        const items: KubeObject[] = [];
        for (const e of store.table(type).currentSnapshot()) {
          if (namespace !== undefined && e.namespace !== namespace) continue;
          if (!labels.matches(e.labels) || !fields.matches(e.fields)) continue;
          const del = () => store.delete(type.resource, e.namespace, e.name, opts).object;
          items.push(dryDelete ? store.dryRun(del) : del());
        }
        return sendJson(res, 200, {
          kind: type.listKind,
          apiVersion: type.apiVersion,
          metadata: { resourceVersion: store.resourceVersion },
          items,
        });
      }
      default:
        throw methodNotAllowed();
    }
  }
  switch (method) {
    case 'GET': {
      if (subresource === 'binding' || subresource === 'token') throw methodNotAllowed();
      const obj = store.get(type.resource, namespace, name);
      const asTable =
        hasTable(type) && subresource === undefined ? tableVersion(req.headers.accept) : undefined;
      if (asTable) {
        const meta = { resourceVersion: obj.metadata?.resourceVersion ?? '' };
        return sendJson(
          res,
          200,
          toTable(type, asTable, [obj], meta, ctx.clock.now(), includeObjectParam(q)),
        );
      }
      return sendJson(res, 200, obj);
    }
    case 'PUT': {
      if (subresource === 'binding' || subresource === 'token') throw methodNotAllowed();
      const body = await readObjectBody(req, ctx.maxRequestBodyBytes);
      if (!isPlainObject(body)) throw badRequest('the request body must be a JSON object');
      warn(res, checkFields(type, body, fieldValidationOf(method, q)));
      const obj = withNamespace(body as KubeObject, namespace, type.namespaced);
      const bodyName = obj.metadata?.name;
      if (bodyName !== undefined && bodyName !== name) {
        throw badRequest(`the name of the object (${bodyName}) does not match the name on the URL (${name})`);
      }
      obj.metadata = { ...(obj.metadata ?? {}), name };
      const opts =
        subresource === 'status'
          ? { subresource: 'status' as const, admit: true }
          : { admit: true, check: admit };
      return sendJson(
        res,
        200,
        write(() => store.update(type.resource, obj, opts)),
      );
    }
    case 'PATCH': {
      if (subresource === 'binding' || subresource === 'token') throw methodNotAllowed();
      const ct = req.headers['content-type'];
      const patchType = patchTypeOf(ct);
      if (!patchType) throw unsupportedMediaType(PATCH_MEDIA_TYPES);
      const body = await readBody(req, ctx.maxRequestBodyBytes);
      const opts =
        subresource === 'status'
          ? { subresource: 'status' as const, admit: true }
          : { admit: true, check: admit };
      const directive = fieldValidationOf(method, q);
      if (directive === 'Strict') {
        // Strict: refuse before anything is stored (the dry run computes the patched object).
        checkFields(
          type,
          store.dryRun(() => store.patch(type.resource, namespace, name, patchType, body, opts)),
          directive,
        );
      }
      const patched = write(() => store.patch(type.resource, namespace, name, patchType, body, opts));
      if (directive === 'Warn') warn(res, checkFields(type, patched, directive));
      return sendJson(res, 200, patched);
    }
    case 'POST': {
      if (subresource === 'token') {
        const body = await readObjectBody(req, ctx.maxRequestBodyBytes);
        if (body !== undefined && !isPlainObject(body)) {
          throw badRequest('the request body must be a JSON object');
        }
        return sendJson(res, 201, ctx.serviceAccountTokens.createToken(namespace ?? '', name, body));
      }
      if (subresource !== 'binding') throw methodNotAllowed();
      checkBodyMediaType(req.headers['content-type']);
      const body = await readBody(req, ctx.maxRequestBodyBytes);
      const target = isPlainObject(body) && isPlainObject(body.target) ? body.target.name : undefined;
      write(() => bindPod(store, namespace, name, target));
      return sendJson(res, 201, {
        kind: 'Status',
        apiVersion: 'v1',
        metadata: {},
        status: 'Success',
        code: 201,
      });
    }
    case 'DELETE': {
      if (subresource !== undefined) throw methodNotAllowed();
      if (hasBody(req)) checkBodyMediaType(req.headers['content-type']);
      const body = await readBody(req, ctx.maxRequestBodyBytes);
      const opts = deleteOptions(body, q);
      const del = () => store.delete(type.resource, namespace, name, opts);
      const result = dryRunRequested(method, q, body) ? store.dryRun(del) : del();
      if (['pods', 'services', 'namespaces'].includes(type.resource) || !result.deleted) {
        return sendJson(res, 200, result.object);
      }
      const details: Record<string, string> = {
        name,
        kind: type.resource,
        uid: result.object.metadata?.uid ?? '',
      };
      if (type.group !== '') details.group = type.group;
      return sendJson(res, 200, {
        kind: 'Status',
        apiVersion: 'v1',
        metadata: {},
        status: 'Success',
        details,
      });
    }
    default:
      throw methodNotAllowed();
  }
}

/** Sets the `Warning` headers of a response (fieldValidation=Warn). */
function warn(res: ServerResponse, warnings: string[]): void {
  if (warnings.length > 0 && !res.headersSent) res.setHeader('Warning', warnings);
}

function withNamespace(obj: KubeObject, namespace: string | undefined, namespaced: boolean): KubeObject {
  if (!namespaced) return obj;
  const meta: Record<string, unknown> = isPlainObject(obj.metadata) ? { ...obj.metadata } : {};
  if (meta.namespace === undefined || meta.namespace === '') {
    if (namespace !== undefined) meta.namespace = namespace;
  } else if (namespace !== undefined && meta.namespace !== namespace) {
    throw badRequest('the namespace of the provided object does not match the namespace sent on the request');
  }
  return { ...obj, metadata: meta };
}

function deleteOptions(
  body: unknown,
  q: URLSearchParams,
): { gracePeriodSeconds?: number; preconditions?: { uid?: string; resourceVersion?: string } } {
  const out: { gracePeriodSeconds?: number; preconditions?: { uid?: string; resourceVersion?: string } } = {};
  const b = isPlainObject(body) ? body : {};
  const g =
    typeof b.gracePeriodSeconds === 'number' ? b.gracePeriodSeconds : intParam(q, 'gracePeriodSeconds');
  if (g !== undefined) out.gracePeriodSeconds = g;
  if (isPlainObject(b.preconditions)) {
    const p: { uid?: string; resourceVersion?: string } = {};
    if (typeof b.preconditions.uid === 'string') p.uid = b.preconditions.uid;
    if (typeof b.preconditions.resourceVersion === 'string')
      p.resourceVersion = b.preconditions.resourceVersion;
    out.preconditions = p;
  }
  return out;
}

function forbidden(field: string, message: string): StatusCause {
  return { reason: 'FieldValueForbidden', message: `Forbidden: ${message}`, field };
}

function startWatch(
  ctx: HandlerContext,
  route: ResourceRoute,
  q: URLSearchParams,
  res: ServerResponse,
  asTable?: 'v1' | 'v1beta1',
): void {
  const { type, namespace } = route;
  const includeObject = asTable ? includeObjectParam(q) : 'Metadata';
  const table = ctx.store.table(type);
  let fieldSelector = q.get('fieldSelector');
  if (route.name !== undefined) {
    fieldSelector = fieldSelector
      ? `${fieldSelector},metadata.name=${route.name}`
      : `metadata.name=${route.name}`;
  }
  const labels = parseLabelSelector(q.get('labelSelector'));
  const fields = parseFieldSelector(type, fieldSelector);
  const bookmarks = isTrueParam(q.get('allowWatchBookmarks'));
  const sendInitialRaw = q.get('sendInitialEvents');
  const rvMatch = q.get('resourceVersionMatch') ?? '';
  const rvParam = q.get('resourceVersion') ?? '';
  const causes: StatusCause[] = [];
  if (sendInitialRaw !== null) {
    if (rvMatch !== 'NotOlderThan') {
      causes.push(
        forbidden(
          'resourceVersionMatch',
          'sendInitialEvents requires setting resourceVersionMatch to NotOlderThan',
        ),
      );
    }
    if (!bookmarks)
      causes.push(
        forbidden('allowWatchBookmarks', 'sendInitialEvents requires setting allowWatchBookmarks to true'),
      );
  } else if (rvMatch !== '') {
    causes.push(
      forbidden(
        'resourceVersionMatch',
        'resourceVersionMatch is forbidden for watch unless sendInitialEvents is provided',
      ),
    );
  }
  if (causes.length > 0) throw invalid('meta.k8s.io', 'ListOptions', '', causes);
  if (rvParam !== '' && !/^[0-9]+$/.test(rvParam)) throw badRequest(`invalid resource version "${rvParam}"`);
  const rv = rvParam === '' ? undefined : Number(rvParam);
  const current = ctx.store.currentRv;
  let start: WatchStart;
  if (sendInitialRaw !== null && isTrueParam(sendInitialRaw)) {
    if (rv !== undefined && rv > current) throw tooLargeResourceVersion(rv, current);
    start = { kind: 'state', endBookmark: true };
  } else if (rv === undefined || rv === 0) {
    start = sendInitialRaw !== null ? { kind: 'from', rv: current } : { kind: 'state', endBookmark: false };
  } else {
    start = { kind: 'from', rv };
  }
  const timeoutParam = intParam(q, 'timeoutSeconds');
  const stream = new WatchStream({
    res,
    type,
    table,
    namespace: type.namespaced ? namespace : undefined,
    labels,
    fields,
    bookmarks,
    bookmarkIntervalMs: ctx.bookmarkIntervalMs,
    timeoutSeconds: timeoutParam !== undefined && timeoutParam > 0 ? timeoutParam : ctx.watchTimeoutSeconds(),
    clock: ctx.clock,
    currentRv: () => ctx.store.currentRv,
    onClose: (w) => ctx.watches.delete(w),
    maxBufferedEvents: ctx.watchBuffer.maxEvents,
    maxBufferedBytes: ctx.watchBuffer.maxBytes,
    onOverflow: ctx.watchBuffer.onOverflow,
    // `kubectl get -w`: each event's object is a one-row Table (table-output.ts).
    transform: asTable
      ? (json) => watchTableJson(type, asTable, json, ctx.clock.now(), includeObject)
      : undefined,
  });
  ctx.watches.add(stream);
  if (start.kind === 'from') {
    const history = table.eventsSince(start.rv);
    if (!history) {
      stream.fail(
        failureStatus(410, 'Expired', `too old resource version: ${start.rv} (${table.compactedRv + 1})`),
      );
      return;
    }
    stream.start(start, undefined, history);
  } else {
    stream.start(start, table.currentSnapshot(), undefined);
  }
  if (ctx.faults.takeStall()) stream.stall();
}

/**
 * Handles an HTTP upgrade (`pods/exec`, `pods/attach`, `pods/portforward` over SPDY or
 * WebSocket): authentication and authorization as any request, then the splice to the
 * pod's kubelet; anything else is refused with a Status. Never throws.
 */
export async function handleUpgrade(
  ctx: HandlerContext,
  req: IncomingMessage,
  socket: Duplex,
  head: Buffer,
): Promise<void> {
  socket.on('error', () => socket.destroy());
  const refuse = (status: StatusBody): void => {
    const body = JSON.stringify(status);
    socket.end(
      `HTTP/1.1 ${status.code} ${STATUS_CODES[status.code] ?? status.reason}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
    );
  };
  try {
    const url = new URL(req.url ?? '/', 'http://localhost');
    const method = (req.method ?? 'GET').toUpperCase();
    const q = goQuery(url.search);
    const authenticated = ctx.auth.authenticate(req);
    ctx.record({
      method,
      path: url.pathname,
      query: Object.fromEntries(q),
      watch: false,
      ...(authenticated !== undefined ? { user: authenticated.name } : {}),
      upgrade: String(req.headers.upgrade ?? '').toLowerCase(),
    });
    const user = impersonatedUser(req, authenticated ?? ANONYMOUS_USER, ctx.authorizer); // impersonation.ts
    const info = requestInfo(method, decodedPath(url.pathname), q);
    if (ctx.authorizer) {
      const decision = ctx.authorizer.authorize(user, info);
      if (!decision.allowed) {
        throw forbiddenStatus(
          info.apiGroup,
          info.resource,
          info.name,
          forbiddenMessage(user, info, decision.reason),
        );
      }
    }
    const route = parseRoute(url.pathname);
    if (
      route.kind !== 'resource' ||
      route.type.resource !== 'pods' ||
      route.name === undefined ||
      route.subresource === undefined ||
      !NODE_PROXIED_POD_SUBRESOURCES.has(route.subresource) ||
      route.subresource === 'log'
    ) {
      throw pathNotFound();
    }
    await proxyPodStream(
      ctx.store,
      ctx.kubeletClient,
      route.namespace ?? '',
      route.name,
      route.subresource,
      q,
      req,
      socket,
      head,
      ctx.onPodStream,
    );
  } catch (err) {
    if (err instanceof ApiStatusError) return refuse(err.status);
    ctx.log.error({ err }, 'mini-apiserver: upgrade failed');
    refuse(failureStatus(500, 'InternalError', `Internal error occurred: ${(err as Error).message}`));
  }
}
