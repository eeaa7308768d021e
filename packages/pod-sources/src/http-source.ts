/**
 * The static pod URL (`--manifest-url`, upstream `config/http.go`): GET every
 * `checkIntervalMs` (20 s) with the configured headers; the body is a Pod or a PodList, sent
 * as a snapshot. An unchanged body is not decoded again. A non-200 answer, an unreachable URL
 * or an unusable body is reported and changes nothing; an empty body is an empty snapshot.
 *
 * @module
 */
import {
  type Clock,
  type Lifecycle,
  type Logger,
  noopLogger,
  realClock,
  StartOnce,
  type Timer,
} from '@nodeagent/core';
import { PodSourceError, type PodSourceErrorHandler } from './errors.js';
import { decodeManifest, MAX_MANIFEST_BYTES } from './manifest-decoder.js';
import type { PodSourceSink } from './pod-config.js';
import { HTTP_SOURCE } from './pod-update.js';

/** Options of {@link HttpSource}. */
export interface HttpSourceOptions {
  /** The manifest URL. */
  readonly url: string;
  /** Request headers (`--manifest-url-header`), a header may repeat. @default none */
  readonly headers?: readonly (readonly [string, string])[];
  /** This node's name (pod name suffix). */
  readonly nodeName: string;
  /** Where the snapshots go (`podConfig.channel('http')`). */
  readonly sink: PodSourceSink;
  /** Poll period, ms (`httpCheckFrequency`). Minimum: 1. @default 20_000 */
  readonly checkIntervalMs?: number;
  /** Request timeout, ms. @default 10_000 */
  readonly timeoutMs?: number;
  /** Told about each failed poll. @default log at warn */
  readonly onError?: PodSourceErrorHandler;
  /** @default realClock */
  readonly clock?: Clock;
  /** @default noopLogger */
  readonly logger?: Logger;
}

/** Polls a URL for static pods. */
export class HttpSource implements Lifecycle {
  readonly #options: HttpSourceOptions;
  readonly #once = new StartOnce('HttpSource');
  readonly #log: Logger;
  readonly #onError: PodSourceErrorHandler;
  #timer: Timer | undefined;
  #last: string | undefined;
  #polling: Promise<void> | undefined;
  readonly #stopping = new AbortController();

  /** @param options see {@link HttpSourceOptions}. */
  constructor(options: HttpSourceOptions) {
    this.#options = options;
    this.#log = (options.logger ?? noopLogger).child({ component: 'http-source', url: options.url });
    this.#onError =
      options.onError ?? ((err) => this.#log.warn({ url: err.location, code: err.code }, err.message));
  }

  /** Polls once, then every period until stopped. */
  start(signal?: AbortSignal): Promise<void> {
    return this.#once.run(
      signal,
      async () => {
        await this.poll();
        const clock = this.#options.clock ?? realClock;
        this.#timer = clock.setInterval(() => void this.poll(), this.#options.checkIntervalMs ?? 20_000);
      },
      () => this.stop(),
    );
  }

  /** Stops polling. Idempotent. */
  async stop(): Promise<void> {
    this.#stopping.abort();
    this.#timer?.cancel();
    this.#timer = undefined;
    await this.#polling;
  }

  /** One poll now (a poll in flight is awaited instead). */
  poll(): Promise<void> {
    this.#polling ??= this.#poll().finally(() => {
      this.#polling = undefined;
    });
    return this.#polling;
  }

  async #poll(): Promise<void> {
    const { url } = this.#options;
    const fail = (code: PodSourceError['code'], reason: string) =>
      this.#onError(new PodSourceError(code, HTTP_SOURCE, url, reason));
    let body: string;
    try {
      const headers = new Headers();
      for (const [k, v] of this.#options.headers ?? []) headers.append(k, v);
      const signal = AbortSignal.any([
        this.#stopping.signal,
        AbortSignal.timeout(this.#options.timeoutMs ?? 10_000),
      ]);
      const res = await fetch(url, { headers, signal });
      if (res.status !== 200) {
        await res.body?.cancel();
        return fail('HttpStatus', `${res.status} ${res.statusText}`.trim());
      }
      body = await res.text();
    } catch (err) {
      if (this.#stopping.signal.aborted) return;
      return fail('Unreadable', (err as Error).message);
    }
    if (Buffer.byteLength(body) > MAX_MANIFEST_BYTES) {
      return fail('TooLarge', `body is larger than ${MAX_MANIFEST_BYTES} bytes`);
    }
    if (body.length === 0) {
      // Still a snapshot, so the source counts as seen.
      this.#options.sink.send({ op: 'SET', pods: [] });
      return fail('EmptyBody', `zero-length data received from ${url}`);
    }
    if (body === this.#last) return;
    this.#last = body;
    try {
      const pods = decodeManifest(
        body,
        { nodeName: this.#options.nodeName, source: 'http', location: url },
        true,
      );
      this.#options.sink.send({ op: 'SET', pods });
    } catch (err) {
      if (err instanceof PodSourceError) this.#onError(err);
      else fail('Undecodable', (err as Error).message);
    }
  }
}
