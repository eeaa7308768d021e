// A StatusApi over fetch for the tests (the mini API server is anonymous plain HTTP), and an
// in-memory recorder double for the unit tests.
import type { PatchKind, StatusApi } from '../../src/index.js';

/** An API error with the HTTP status in `code`, as StatusApi requires. */
export class HttpError extends Error {
  constructor(
    readonly code: number,
    message: string,
  ) {
    super(message);
  }
}

const CONTENT: Record<PatchKind, string> = {
  merge: 'application/merge-patch+json',
  strategic: 'application/strategic-merge-patch+json',
};

/** JSON over fetch to `baseUrl`. */
export function fetchApi(baseUrl: string): StatusApi {
  const call = async <T>(
    method: string,
    path: string,
    body?: unknown,
    contentType = 'application/json',
  ): Promise<T> => {
    const res = await fetch(`${baseUrl}${path}`, {
      method,
      headers: { 'content-type': contentType, accept: 'application/json' },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    const text = await res.text();
    if (!res.ok) throw new HttpError(res.status, `${method} ${path}: ${res.status} ${text.slice(0, 200)}`);
    return (text === '' ? undefined : JSON.parse(text)) as T;
  };
  return {
    get: async <T>(path: string) => {
      try {
        return await call<T>('GET', path);
      } catch (err) {
        if (err instanceof HttpError && err.code === 404) return undefined;
        throw err;
      }
    },
    create: (path, body) => call('POST', path, body),
    replace: (path, body) => call('PUT', path, body),
    patch: (path, kind, patch) => call('PATCH', path, patch, CONTENT[kind]),
    delete: (path, options = {}) =>
      call('DELETE', path, { kind: 'DeleteOptions', apiVersion: 'v1', ...options }),
  };
}

/** One call a {@link RecordingApi} saw. */
export interface ApiCall {
  readonly verb: 'get' | 'create' | 'replace' | 'patch' | 'delete';
  readonly path: string;
  readonly body?: unknown;
  readonly kind?: PatchKind;
}

/** Answers from a handler per call, recording every call. */
export class RecordingApi implements StatusApi {
  readonly calls: ApiCall[] = [];
  constructor(readonly handler: (call: ApiCall) => unknown) {}

  #run<T>(call: ApiCall): Promise<T> {
    this.calls.push(call);
    try {
      return Promise.resolve(this.handler(call) as T);
    } catch (err) {
      return Promise.reject(err);
    }
  }
  get<T>(path: string): Promise<T | undefined> {
    return this.#run<T | undefined>({ verb: 'get', path });
  }
  create<T>(path: string, body: T): Promise<T> {
    return this.#run({ verb: 'create', path, body });
  }
  replace<T>(path: string, body: T): Promise<T> {
    return this.#run({ verb: 'replace', path, body });
  }
  patch<T>(path: string, kind: PatchKind, body: unknown): Promise<T> {
    return this.#run({ verb: 'patch', path, body, kind });
  }
  delete(path: string, options?: Record<string, unknown>): Promise<unknown> {
    return this.#run({ verb: 'delete', path, body: options });
  }
  writes(): ApiCall[] {
    return this.calls.filter((c) => c.verb !== 'get');
  }
}
