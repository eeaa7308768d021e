// An in-memory StatusApi for fake-time tests: objects by path, resourceVersion conflicts on PUT,
// strategic/merge patches applied with the mini API server's patch code, and injectable failures.
import { applyMergePatch, applyStrategicMergePatch } from '@nodeagent/mini-apiserver';
import { type ApiCall, HttpError, RecordingApi } from './fetch-api.js';

type Obj = {
  metadata?: { name?: string; uid?: string; resourceVersion?: string; labels?: Record<string, string> };
} & Record<string, unknown>;

/** A StatusApi over a map of objects keyed by path. */
export class ObjectStoreApi extends RecordingApi {
  readonly objects = new Map<string, Obj>();
  /** Codes to fail the next calls with, per verb. */
  readonly failNext: Partial<Record<ApiCall['verb'], number[]>> = {};
  #rv = 1;

  constructor() {
    super((call) => this.#handle(call));
  }

  #handle(call: ApiCall): unknown {
    const code = this.failNext[call.verb]?.shift();
    if (code !== undefined) throw new HttpError(code, `injected ${code} on ${call.verb} ${call.path}`);
    const path = call.path.replace(/\/status$/, '');
    switch (call.verb) {
      case 'get':
        return structuredClone(this.objects.get(path));
      case 'create': {
        const obj = structuredClone(call.body as Obj);
        const key = `${call.path}/${obj.metadata?.name}`;
        if (this.objects.has(key)) throw new HttpError(409, `${key} already exists`);
        obj.metadata = {
          ...obj.metadata,
          uid: `uid-${obj.metadata?.name}`,
          resourceVersion: String(this.#rv++),
        };
        this.objects.set(key, obj);
        return structuredClone(obj);
      }
      case 'replace': {
        const obj = structuredClone(call.body as Obj);
        const cur = this.objects.get(path);
        if (cur === undefined) throw new HttpError(404, `${path} not found`);
        if (obj.metadata?.resourceVersion !== cur.metadata?.resourceVersion)
          throw new HttpError(409, 'conflict');
        obj.metadata = { ...obj.metadata, resourceVersion: String(this.#rv++) };
        this.objects.set(path, obj);
        return structuredClone(obj);
      }
      case 'patch': {
        const cur = this.objects.get(path);
        if (cur === undefined) throw new HttpError(404, `${path} not found`);
        const next = (
          call.kind === 'merge' ? applyMergePatch(cur, call.body) : applyStrategicMergePatch(cur, call.body)
        ) as Obj;
        next.metadata = { ...next.metadata, resourceVersion: String(this.#rv++) };
        this.objects.set(path, next);
        return structuredClone(next);
      }
      case 'delete':
        this.objects.delete(path);
        return {};
    }
  }
}
