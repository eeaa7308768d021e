/**
 * A scripted Kubernetes-like HTTP server for protocol tests: each list or watch request
 * is answered by the next scripted step, so a test controls the exact fault sequence
 * (drops mid-stream, 410s, 500s, stalls, malformed lines, split chunks).
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { KubeConfig } from '@kubernetes/client-node';

export interface RecordedRequest {
  readonly kind: 'list' | 'watch';
  readonly path: string;
  readonly query: URLSearchParams;
  readonly headers: http.IncomingHttpHeaders;
  /** `clock.now()` when the request arrived, if the server has a {@link ScriptedServer.clock}. */
  readonly at?: number;
}

/** An open watch response the test writes to. */
export class WatchConn {
  constructor(
    readonly req: RecordedRequest,
    private readonly res: http.ServerResponse,
  ) {}
  get closed(): boolean {
    return this.res.destroyed || this.res.writableEnded;
  }
  /** Sends the 200 headers of the stream (done implicitly by send/raw). */
  open(): void {
    if (this.res.headersSent) return;
    this.res.writeHead(200, { 'Content-Type': 'application/json', 'Transfer-Encoding': 'chunked' });
    this.res.flushHeaders();
  }
  /** Answers the watch request with an HTTP error and a Status body. */
  httpError(code: number, reason: string): void {
    this.res.writeHead(code, { 'Content-Type': 'application/json' });
    this.res.end(JSON.stringify(status(code, reason)));
  }
  /** Writes one event as a line. */
  send(type: string, object: unknown): void {
    this.raw(`${JSON.stringify({ type, object })}\n`);
  }
  /** Writes raw bytes (partial lines, malformed data). */
  raw(data: string | Buffer): void {
    this.open();
    if (!this.closed) this.res.write(data);
  }
  /** Ends the response cleanly (server-side timeout). */
  end(): void {
    this.open();
    if (!this.closed) this.res.end();
  }
  /** Drops the TCP connection abruptly, mid-stream. */
  drop(): void {
    this.res.socket?.destroy();
  }
}

export type ListStep = (req: RecordedRequest, res: http.ServerResponse) => void;
export type WatchStep = (conn: WatchConn) => void;

export function pod(name: string, rv: number, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, namespace: 'default', uid: `uid-${name}`, resourceVersion: String(rv) },
    spec: { nodeName: 'node-1' },
    ...extra,
  };
}

export function status(code: number, reason: string, message = reason): Record<string, unknown> {
  return { kind: 'Status', apiVersion: 'v1', status: 'Failure', message, reason, code };
}

export class ScriptedServer {
  readonly requests: RecordedRequest[] = [];
  /** Answered to lists when no step is scripted. */
  items: Record<string, unknown>[] = [];
  listRV = '1';
  /** Time source for {@link RecordedRequest.at} (e.g. the informer's FakeClock). */
  clock: { now(): number } | undefined;
  /** Answers every list when no step is scripted (instead of `items`), e.g. a permanent failure. */
  listDefault: ListStep | undefined;
  /** Answers every watch when no step is scripted (instead of an open, silent stream). */
  watchDefault: WatchStep | undefined;
  private readonly listSteps: ListStep[] = [];
  private readonly watchSteps: WatchStep[] = [];
  private readonly server = http.createServer((req, res) => this.handle(req, res));
  private readonly conns: WatchConn[] = [];
  private readonly sockets = new Set<import('node:net').Socket>();
  private waiters: (() => void)[] = [];
  url = '';

  async start(): Promise<this> {
    this.server.on('connection', (s) => {
      this.sockets.add(s);
      s.on('close', () => this.sockets.delete(s));
    });
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
    return this;
  }

  kubeConfig(token?: string): KubeConfig {
    const kc = new KubeConfig();
    kc.loadFromOptions({
      clusters: [{ name: 'c', server: this.url, skipTLSVerify: false }],
      users: [token ? { name: 'u', token } : { name: 'u' }],
      contexts: [{ name: 'ctx', cluster: 'c', user: 'u' }],
      currentContext: 'ctx',
    });
    return kc;
  }

  /** Scripts the next list response(s). */
  onList(...steps: ListStep[]): this {
    this.listSteps.push(...steps);
    return this;
  }

  /** Scripts the next watch response(s). */
  onWatch(...steps: WatchStep[]): this {
    this.watchSteps.push(...steps);
    return this;
  }

  /** The n-th (0-based) watch connection, once it arrived. */
  async watchConn(n: number, advance?: () => Promise<void>): Promise<WatchConn> {
    await this.until(() => this.conns.length > n, advance);
    return this.conns[n] as WatchConn;
  }

  /** Watch responses not yet ended or cut. */
  get openWatchCount(): number {
    return this.conns.filter((c) => !c.closed).length;
  }

  get watchCount(): number {
    return this.conns.length;
  }

  requestsOf(kind: 'list' | 'watch'): RecordedRequest[] {
    return this.requests.filter((r) => r.kind === kind);
  }

  /** Waits (in real time, optionally advancing a fake clock between checks) until `cond`. */
  async until(cond: () => boolean, advance?: () => Promise<void>, timeoutMs = 5000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (!cond()) {
      if (Date.now() > deadline) throw new Error(`timed out waiting; requests: ${this.describe()}`);
      if (advance) await advance();
      await new Promise<void>((resolve) => {
        const t = setTimeout(resolve, 5);
        this.waiters.push(() => {
          clearTimeout(t);
          resolve();
        });
      });
    }
  }

  describe(): string {
    return this.requests.map((r) => `${r.kind}?${r.query.toString()}`).join(' | ');
  }

  async close(): Promise<void> {
    for (const c of this.conns) c.drop();
    for (const s of this.sockets) s.destroy();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private handle(req: http.IncomingMessage, res: http.ServerResponse): void {
    const url = new URL(req.url ?? '/', 'http://x');
    const kind = url.searchParams.get('watch') ? 'watch' : 'list';
    const rec: RecordedRequest = {
      kind,
      path: url.pathname,
      query: url.searchParams,
      headers: req.headers,
      ...(this.clock ? { at: this.clock.now() } : {}),
    };
    this.requests.push(rec);
    const waiters = this.waiters;
    this.waiters = [];
    for (const w of waiters) w();
    if (kind === 'list') {
      const step =
        this.listSteps.shift() ??
        this.listDefault ??
        listItems(
          () => this.items,
          () => this.listRV,
        );
      step(rec, res);
      return;
    }
    const conn = new WatchConn(rec, res);
    this.conns.push(conn);
    const step = this.watchSteps.shift() ?? this.watchDefault;
    if (step) step(conn);
    else conn.open();
  }
}

/** A list step answering 200 with items. */
export function listItems(items: () => Record<string, unknown>[], rv: () => string, cont?: string): ListStep {
  return (_req, res) => {
    res.writeHead(200, { 'Content-Type': 'application/json' });
    res.end(
      JSON.stringify({
        kind: 'PodList',
        apiVersion: 'v1',
        metadata: { resourceVersion: rv(), ...(cont ? { continue: cont } : {}) },
        items: items(),
      }),
    );
  };
}

/** A step answering with an error Status. */
export function fail(code: number, reason: string): ListStep {
  return (_req, res) => {
    res.writeHead(code, { 'Content-Type': 'application/json' });
    res.end(JSON.stringify(status(code, reason)));
  };
}

/** A watch step answering with an HTTP error. */
export function watchHttpError(code: number, reason: string): WatchStep {
  return (conn) => conn.httpError(code, reason);
}

/** A watch step that opens the stream and sends nothing (a stalled watch). */
export const stall: WatchStep = (conn) => conn.open();
