/**
 * Runs postStart / preStop handlers (upstream `lifecycle/handlers.go`): `exec` through CRI
 * `ExecSync`, `httpGet` with Node's http(s) client against the pod IP, `sleep` on the clock.
 *
 * @module
 */
import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import type { V1Container, V1LifecycleHandler } from '@kubernetes/client-node';
import { type Clock, definedFields } from '@nodeagent/core';
import type { RuntimeServiceApi } from '@nodeagent/cri';

/** A lifecycle handler failed; the message carries the command output or HTTP error. */
export class LifecycleHookError extends Error {
  override readonly name = 'LifecycleHookError';
}

/** What running a lifecycle handler (postStart, preStop) needs. */
export interface HandlerRunnerDeps {
  /** Exec goes through CRI. */
  readonly runtime: Pick<RuntimeServiceApi, 'execSync'>;
  /** Sleep handlers wait on it. */
  readonly clock: Clock;
  /** HTTP GET used by `httpGet` handlers; resolves with the status code. @default node http(s) */
  readonly httpGet?: (
    url: string,
    headers: Readonly<Record<string, string>>,
    signal?: AbortSignal,
  ) => Promise<number>;
}

/** The User-Agent of lifecycle HTTP requests. */
export const LIFECYCLE_USER_AGENT = 'kube-lifecycle/1.36';

/** Node http(s) GET that discards the body; resolves with the status code. */
export function nodeHttpGet(
  url: string,
  headers: Readonly<Record<string, string>>,
  signal?: AbortSignal,
): Promise<number> {
  return new Promise((resolve, reject) => {
    const u = new URL(url);
    const make = u.protocol === 'https:' ? httpsRequest : httpRequest;
    const req = make(
      u,
      {
        method: 'GET',
        headers: { ...headers },
        rejectUnauthorized: false,
        agent: false,
        ...(signal ? { signal } : {}),
      },
      (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode ?? 0));
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end();
  });
}

function resolvePort(port: number | string, container: V1Container): number {
  if (typeof port === 'number') return port;
  const named = container.ports?.find((p) => p.name === port);
  if (named !== undefined) return named.containerPort;
  const n = Number(port);
  if (Number.isInteger(n) && n > 0 && n < 65536) return n;
  throw new LifecycleHookError(`couldn't find port: ${port} in ${container.name}`);
}

/**
 * Runs one handler for a container. Resolves with the output (exec) or `''`.
 * @throws LifecycleHookError when the command exits non-zero, the request fails, or the handler is invalid
 */
export async function runLifecycleHandler(
  deps: HandlerRunnerDeps,
  containerId: string,
  container: V1Container,
  handler: V1LifecycleHandler,
  podIp: string,
  signal?: AbortSignal,
): Promise<string> {
  if (handler.exec != null) {
    const cmd = handler.exec.command ?? [];
    const res = await deps.runtime.execSync({ containerId, cmd, timeout: 0n }, definedFields({ signal }));
    const output = Buffer.concat([res.stdout, res.stderr]).toString('utf8');
    if (res.exitCode !== 0) {
      throw new LifecycleHookError(`command '${cmd.join(' ')}' exited with ${res.exitCode}: ${output}`);
    }
    return output;
  }
  if (handler.httpGet != null) {
    const h = handler.httpGet;
    const host = h.host || podIp;
    if (host === '')
      throw new LifecycleHookError('failed to find networking container or pod IP for httpGet handler');
    const port = resolvePort(h.port, container);
    const scheme = (h.scheme ?? 'HTTP').toLowerCase();
    const hostPart = host.includes(':') ? `[${host}]` : host;
    let path = h.path ?? '';
    if (path !== '' && !path.startsWith('/')) path = `/${path}`;
    const url = `${scheme}://${hostPart}:${port}${path}`;
    const headers: Record<string, string> = { 'User-Agent': LIFECYCLE_USER_AGENT, Accept: '*/*' };
    for (const x of h.httpHeaders ?? []) headers[x.name] = x.value;
    const get = deps.httpGet ?? nodeHttpGet;
    try {
      await get(url, headers, signal);
    } catch (err) {
      throw new LifecycleHookError(
        `http lifecycle hook ${url} failed: ${err instanceof Error ? err.message : String(err)}`,
      );
    }
    return '';
  }
  if (handler.sleep != null) {
    await deps.clock.sleep(handler.sleep.seconds * 1000, signal);
    return '';
  }
  throw new LifecycleHookError(`invalid handler: ${JSON.stringify(handler)}`);
}
