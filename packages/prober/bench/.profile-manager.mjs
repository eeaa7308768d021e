// packages/prober/bench/profile-manager.ts
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';

// packages/core/src/clock.ts
function abortReason(signal) {
  const reason = signal.reason;
  if (reason instanceof Error) return reason;
  const err = new Error(reason === void 0 ? 'The operation was aborted' : String(reason));
  err.name = 'AbortError';
  return err;
}
function sleepOn(clock, delayMs, signal) {
  if (signal?.aborted) return Promise.reject(abortReason(signal));
  return new Promise((resolve, reject) => {
    const onAbort = () => {
      timer.cancel();
      reject(abortReason(signal));
    };
    const timer = clock.setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, delayMs);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}
var MAX_NODE_DELAY_MS = 2147483647;
var RealTimer = class {
  constructor(fn, delayMs, repeat) {
    this.fn = fn;
    this.delayMs = delayMs;
    this.repeat = repeat;
    this.arm(delayMs);
  }
  fn;
  delayMs;
  repeat;
  handle;
  unrefed = false;
  cancelled = false;
  cancel() {
    this.cancelled = true;
    if (this.handle !== void 0) clearTimeout(this.handle);
    this.handle = void 0;
  }
  unref() {
    this.unrefed = true;
    this.handle?.unref();
    return this;
  }
  arm(remainingMs) {
    const chunk = Math.min(remainingMs, MAX_NODE_DELAY_MS);
    this.handle = setTimeout(() => {
      if (this.cancelled) return;
      if (remainingMs > chunk) return this.arm(remainingMs - chunk);
      if (this.repeat) this.arm(this.delayMs);
      else this.handle = void 0;
      this.fn();
    }, chunk);
    if (this.unrefed) this.handle.unref();
  }
};
var realClock = {
  now: () => Date.now(),
  setTimeout: (fn, delayMs) => new RealTimer(fn, Math.max(0, delayMs) || 0, false),
  setInterval: (fn, periodMs) => new RealTimer(fn, Math.max(1, periodMs) || 1, true),
  sleep(delayMs, signal) {
    return sleepOn(realClock, delayMs, signal);
  },
};

// packages/core/src/options-error.ts
var InvalidOptionsError = class extends Error {
  /**
   * @param component what refused the options (a class or function name such as `'WorkQueue'`).
   * @param message what is wrong and what would be valid.
   */
  constructor(component, message2) {
    super(message2);
    this.component = component;
  }
  component;
  name = 'InvalidOptionsError';
};

// packages/core/src/go-duration.ts
var NS_PER_US = 1e3;
var NS_PER_MS = 1e6;
var NS_PER_S = 1e9;
function fraction(value, prec) {
  const unit = 10 ** prec;
  const whole = Math.floor(value / unit);
  const frac = value % unit;
  if (frac === 0) return String(whole);
  const digits = String(frac).padStart(prec, '0').replace(/0+$/, '');
  return `${whole}.${digits}`;
}
function formatGoDuration(ms) {
  const totalNs = Math.round(ms * NS_PER_MS);
  if (totalNs === 0) return '0s';
  const sign = totalNs < 0 ? '-' : '';
  const ns = Math.abs(totalNs);
  if (ns < NS_PER_S) {
    if (ns < NS_PER_US) return `${sign}${ns}ns`;
    if (ns < NS_PER_MS) return `${sign}${fraction(ns, 3)}\xB5s`;
    return `${sign}${fraction(ns, 6)}ms`;
  }
  const seconds = `${fraction(ns % (60 * NS_PER_S), 9)}s`;
  const totalMinutes = Math.floor(ns / (60 * NS_PER_S));
  if (totalMinutes === 0) return `${sign}${seconds}`;
  const minutes = totalMinutes % 60;
  const hours = Math.floor(totalMinutes / 60);
  return hours === 0 ? `${sign}${minutes}m${seconds}` : `${sign}${hours}h${minutes}m${seconds}`;
}

// packages/core/src/lifecycle.ts
var AlreadyStartedError = class extends Error {
  /** @param component the piece that was started twice. */
  constructor(component) {
    super(`${component} was already started`);
    this.component = component;
  }
  component;
  name = 'AlreadyStartedError';
};
function raceAbort(promise, signal) {
  if (signal === void 0) return promise;
  if (signal.aborted) {
    promise.catch(() => {});
    return Promise.reject(abortReason(signal));
  }
  return new Promise((resolve, reject) => {
    const onAbort = () => {
      promise.catch(() => {});
      reject(abortReason(signal));
    };
    signal.addEventListener('abort', onAbort, { once: true });
    promise.then(
      (value) => {
        signal.removeEventListener('abort', onAbort);
        resolve(value);
      },
      (error) => {
        signal.removeEventListener('abort', onAbort);
        reject(error);
      },
    );
  });
}
var StartOnce = class {
  /** @param component names the piece in {@link AlreadyStartedError}. */
  constructor(component) {
    this.component = component;
  }
  component;
  #started = false;
  /** True once `run` was called. */
  get started() {
    return this.#started;
  }
  /** Starts with `start`, bounded by `signal`; runs `stop` when that fails. */
  async run(signal, start, stop) {
    if (this.#started) throw new AlreadyStartedError(this.component);
    this.#started = true;
    try {
      await raceAbort(start(), signal);
    } catch (error) {
      await stop();
      throw error;
    }
  }
};

// packages/core/src/logger.ts
var noop = () => {};
var noopLogger = {
  trace: noop,
  debug: noop,
  info: noop,
  warn: noop,
  error: noop,
  child: () => noopLogger,
};

// packages/core/src/optional.ts
function definedFields(fields) {
  const out = {};
  for (const [key2, value] of Object.entries(fields)) if (value !== void 0) out[key2] = value;
  return out;
}

// packages/core/src/metrics.ts
var MetricRegistrationError = class extends Error {
  /** @param metricName the conflicting metric name. @param reason what is wrong with it. */
  constructor(metricName, reason) {
    super(`cannot use metric ${metricName}: ${reason}`);
    this.metricName = metricName;
  }
  metricName;
  name = 'MetricRegistrationError';
};
function createMetricFactory(options) {
  const { registry, promClient } = options;
  function reuse(name, kind) {
    const found = registry.getSingleMetric(name);
    if (found === void 0) return void 0;
    if (!(found instanceof kind)) throw new MetricRegistrationError(name, 'registered as another kind');
    return found;
  }
  const unregistered = (config) => ({
    ...config,
    labelNames: [...(config.labelNames ?? [])],
    registers: [],
  });
  const registered = (metric) => {
    registry.registerMetric(metric);
    return metric;
  };
  return {
    counter: (config) =>
      reuse(config.name, promClient.Counter) ?? registered(new promClient.Counter(unregistered(config))),
    gauge: (config) =>
      reuse(config.name, promClient.Gauge) ?? registered(new promClient.Gauge(unregistered(config))),
    histogram: ({ buckets, ...config }) =>
      reuse(config.name, promClient.Histogram) ??
      registered(
        new promClient.Histogram({
          ...unregistered(config),
          ...definedFields({ buckets: buckets && [...buckets] }),
        }),
      ),
  };
}

// packages/prober/src/command-runner.ts
var ExecTimeoutError = class extends Error {
  /**
   * @param command the argv that timed out.
   * @param timeoutMs the timeout it was given.
   * @param options the underlying error.
   */
  constructor(command, timeoutMs, options = {}) {
    super(`command ${goQuote(command.join(' '))} timed out`, { cause: options.cause });
    this.command = command;
    this.timeoutMs = timeoutMs;
  }
  command;
  timeoutMs;
  name = 'ExecTimeoutError';
};
function goQuote(text) {
  let out = '"';
  for (const ch of text) {
    const code = ch.codePointAt(0) ?? 0;
    if (ch === '"' || ch === '\\') out += `\\${ch}`;
    else if (ch === '\n') out += '\\n';
    else if (ch === '	') out += '\\t';
    else if (ch === '\r') out += '\\r';
    else if (code < 32 || code === 127) out += `\\x${code.toString(16).padStart(2, '0')}`;
    else out += ch;
  }
  return `${out}"`;
}

// packages/kubecontainer/src/container-rules.ts
var MINIMUM_GRACE_PERIOD_SECONDS = 2;
function isRestartableInitContainer(container) {
  return container.restartPolicy === 'Always';
}
function terminationGracePeriodSeconds(pod, container, reason) {
  const deletion = pod.metadata?.deletionGracePeriodSeconds;
  if (deletion != null) return deletion;
  const spec = pod.spec?.terminationGracePeriodSeconds;
  if (spec == null) return MINIMUM_GRACE_PERIOD_SECONDS;
  if (reason === 'StartupProbe' && container.startupProbe?.terminationGracePeriodSeconds != null) {
    return container.startupProbe.terminationGracePeriodSeconds;
  }
  if (reason === 'LivenessProbe' && container.livenessProbe?.terminationGracePeriodSeconds != null) {
    return container.livenessProbe.terminationGracePeriodSeconds;
  }
  return spec;
}

// packages/kubecontainer/src/expansion.ts
function expand(input, lookup) {
  let out = '';
  let checkpoint = 0;
  for (let cursor = 0; cursor < input.length; cursor++) {
    if (input[cursor] !== '$' || cursor + 1 >= input.length) continue;
    out += input.slice(checkpoint, cursor);
    const next = input[cursor + 1];
    let advance = 1;
    if (next === '$') out += '$';
    else if (next === '(') {
      const close = input.indexOf(')', cursor + 2);
      if (close === -1) out += '$(';
      else {
        const name = input.slice(cursor + 2, close);
        out += lookup(name) ?? `$(${name})`;
        advance = close - cursor;
      }
    } else out += `$${next}`;
    cursor += advance;
    checkpoint = cursor + 1;
  }
  return out + input.slice(checkpoint);
}
function expandContainerCommandOnlyStatic(command, env) {
  const values = new Map((env ?? []).map((e) => [e.name, e.value ?? '']));
  const lookup = (name) => values.get(name);
  return command.map((arg) => expand(arg, lookup));
}

// packages/prober/src/probe-spec.ts
var DEFAULTS = {
  initialDelaySeconds: 0,
  periodSeconds: 10,
  timeoutSeconds: 1,
  successThreshold: 1,
  failureThreshold: 3,
};
var MINIMUMS = {
  initialDelaySeconds: 0,
  periodSeconds: 1,
  timeoutSeconds: 1,
  successThreshold: 1,
  failureThreshold: 1,
};
function probeSpec(probe2, type) {
  const problems = [];
  const timing = { ...DEFAULTS };
  for (const key2 of Object.keys(DEFAULTS)) {
    const value = probe2[key2];
    if (value === void 0 || value === null || (value === 0 && key2 !== 'initialDelaySeconds')) continue;
    if (
      typeof value !== 'number' ||
      !Number.isInteger(value) ||
      value < MINIMUMS[key2] ||
      value > 2147483647
    ) {
      problems.push(`${key2} must be an integer >= ${MINIMUMS[key2]}, got ${JSON.stringify(value)}`);
      continue;
    }
    timing[key2] = value;
  }
  if (type !== 'readiness' && timing.successThreshold !== 1) {
    problems.push(`successThreshold must be 1 for ${type} probes, got ${timing.successThreshold}`);
  }
  const grace = probe2.terminationGracePeriodSeconds;
  if (grace != null && (typeof grace !== 'number' || !Number.isInteger(grace) || grace < 1)) {
    problems.push(`terminationGracePeriodSeconds must be a positive integer, got ${JSON.stringify(grace)}`);
  }
  return { timing, invalid: problems.length === 0 ? void 0 : `invalid probe: ${problems.join('; ')}` };
}

// packages/prober/src/probe-types.ts
function probeTypeLabel(type) {
  return type === 'liveness' ? 'Liveness' : type === 'readiness' ? 'Readiness' : 'Startup';
}
function initialResult(type) {
  return type === 'readiness' ? 'failure' : type === 'liveness' ? 'success' : 'unknown';
}

// packages/prober/src/probes/probe-run.ts
var MAX_PROBE_OUTPUT_BYTES = 10 * 1024;
function cappedText(data) {
  const bytes = typeof data === 'string' ? Buffer.from(data) : data;
  return Buffer.from(bytes.subarray(0, MAX_PROBE_OUTPUT_BYTES)).toString('utf8');
}
function errored(message2, outcome = 'unknown') {
  return { outcome, output: '', error: new Error(message2) };
}

// packages/prober/src/probes/exec-probe.ts
async function execProbe(runner, containerId, cmd, timeoutMs, signal) {
  try {
    const { output, exitCode } = await runner.runInContainer(containerId, cmd, timeoutMs, signal);
    return { outcome: exitCode === 0 ? 'success' : 'failure', output: cappedText(output) };
  } catch (error) {
    if (error instanceof ExecTimeoutError) return { outcome: 'failure', output: error.message };
    return {
      outcome: 'unknown',
      output: '',
      error: error instanceof Error ? error : new Error(String(error)),
    };
  }
}

// packages/prober/src/probes/grpc-probe.ts
import { Client, credentials, Metadata, status } from '@grpc/grpc-js';

// packages/prober/src/probes/grpc-health.ts
var SERVING_STATUS_NAMES = ['UNKNOWN', 'SERVING', 'NOT_SERVING', 'SERVICE_UNKNOWN'];
var HEALTH_CHECK_PATH = '/grpc.health.v1.Health/Check';
function encodeHealthCheckRequest(service) {
  if (service === '') return Buffer.alloc(0);
  const text = Buffer.from(service, 'utf8');
  return Buffer.concat([Buffer.from([10]), varint(text.length), text]);
}
function decodeHealthCheckResponse(data) {
  let status2 = 0;
  let i = 0;
  const readVarint = () => {
    let value = 0;
    let shift = 0;
    for (;;) {
      const byte = data[i++];
      if (byte === void 0) throw new Error('truncated HealthCheckResponse');
      value += (byte & 127) * 2 ** shift;
      if ((byte & 128) === 0) return value;
      shift += 7;
    }
  };
  while (i < data.length) {
    const key2 = readVarint();
    const wire = key2 & 7;
    if (wire === 0) {
      const v = readVarint();
      if (key2 >>> 3 === 1) status2 = v;
    } else if (wire === 2) i += readVarint();
    else if (wire === 1) i += 8;
    else if (wire === 5) i += 4;
    else throw new Error(`unsupported wire type ${wire} in HealthCheckResponse`);
  }
  return status2;
}
function servingStatusName(status2) {
  return SERVING_STATUS_NAMES[status2] ?? String(status2);
}
function varint(n) {
  const bytes = [];
  let v = n;
  while (v > 127) {
    bytes.push((v & 127) | 128);
    v = Math.floor(v / 128);
  }
  bytes.push(v);
  return Buffer.from(bytes);
}

// packages/prober/src/probes/resolve-port.ts
function resolveContainerPort(port, container) {
  let value;
  if (port === void 0 || port === null) value = 0;
  else if (typeof port === 'number') value = port;
  else if (typeof port === 'string') {
    const named = (container.ports ?? []).find((p) => p.name === port);
    value = named === void 0 ? atoi(port) : Number(named.containerPort);
  } else throw new Error(`intOrString had no kind: ${JSON.stringify(port)}`);
  if (Number.isInteger(value) && value > 0 && value < 65536) return value;
  throw new Error(`invalid port number: ${value}`);
}
function atoi(text) {
  if (!/^[+-]?\d+$/.test(text))
    throw new Error(`strconv.Atoi: parsing ${JSON.stringify(text)}: invalid syntax`);
  const n = Number(text);
  if (!Number.isSafeInteger(n))
    throw new Error(`strconv.Atoi: parsing ${JSON.stringify(text)}: value out of range`);
  return n;
}
function joinHostPort(host, port) {
  return host.includes(':') ? `[${host}]:${port}` : `${host}:${port}`;
}

// packages/prober/src/probes/grpc-probe.ts
async function grpcProbe(host, port, service, timeoutMs, userAgent, signal) {
  const addr = joinHostPort(host, port);
  const timeoutText = formatGoDuration(timeoutMs);
  const deadline = Date.now() + timeoutMs;
  let client;
  try {
    client = new Client(addr, credentials.createInsecure(), {
      'grpc.primary_user_agent': userAgent,
      'grpc.enable_retries': 0,
      'grpc.max_reconnect_backoff_ms': 1e3,
      'grpc.initial_reconnect_backoff_ms': 100,
      'grpc.enable_http_proxy': 0,
    });
  } catch (error) {
    return {
      outcome: 'failure',
      output: `error: failed to connect service at ${JSON.stringify(addr)}: ${message(error)}`,
    };
  }
  let onAbort;
  try {
    const ready = await new Promise((resolve) => client.waitForReady(deadline, resolve));
    if (ready !== void 0) {
      return {
        outcome: 'failure',
        output: `timeout: failed to connect service ${JSON.stringify(addr)} within ${timeoutText}: context deadline exceeded`,
      };
    }
    if (signal?.aborted)
      return { outcome: 'failure', output: `error: health rpc probe failed: context canceled` };
    const result = await new Promise((resolve) => {
      const call = client.makeUnaryRequest(
        HEALTH_CHECK_PATH,
        (s) => encodeHealthCheckRequest(s),
        (b) => decodeHealthCheckResponse(b),
        service,
        new Metadata(),
        { deadline },
        (error, value) => resolve({ error, value }),
      );
      onAbort = () => call.cancel();
      signal?.addEventListener('abort', onAbort, { once: true });
    });
    if (result.error !== null) {
      const e = result.error;
      if (e.code === status.UNIMPLEMENTED) {
        return {
          outcome: 'failure',
          output: `error: this server does not implement the grpc health protocol (grpc.health.v1.Health): ${e.details}`,
        };
      }
      if (e.code === status.DEADLINE_EXCEEDED) {
        return { outcome: 'failure', output: `timeout: health rpc did not complete within ${timeoutText}` };
      }
      return {
        outcome: 'failure',
        output: `error: health rpc probe failed: rpc error: code = ${codeName(e.code)} desc = ${e.details}`,
      };
    }
    const servingStatus = result.value ?? 0;
    if (servingStatus !== 1) {
      return {
        outcome: 'failure',
        output: `service unhealthy (responded with ${JSON.stringify(servingStatusName(servingStatus))})`,
      };
    }
    return { outcome: 'success', output: 'service healthy' };
  } finally {
    if (onAbort !== void 0) signal?.removeEventListener('abort', onAbort);
    client.close();
  }
}
function codeName(code) {
  const names = [
    'OK',
    'Canceled',
    'Unknown',
    'InvalidArgument',
    'DeadlineExceeded',
    'NotFound',
    'AlreadyExists',
    'PermissionDenied',
    'ResourceExhausted',
    'FailedPrecondition',
    'Aborted',
    'OutOfRange',
    'Unimplemented',
    'Internal',
    'Unavailable',
    'DataLoss',
    'Unauthenticated',
  ];
  return names[code] ?? `Code(${code})`;
}
function message(error) {
  return error instanceof Error ? error.message : String(error);
}

// packages/prober/src/probes/http-probe.ts
import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { isIP } from 'node:net';

// packages/prober/src/probes/go-net-errors.ts
var SYSCALL_TEXT = {
  ECONNREFUSED: 'connect: connection refused',
  EHOSTUNREACH: 'connect: no route to host',
  ENETUNREACH: 'connect: network is unreachable',
  EADDRNOTAVAIL: 'connect: cannot assign requested address',
  EACCES: 'connect: permission denied',
  EPERM: 'connect: operation not permitted',
  ECONNRESET: 'read: connection reset by peer',
  EPIPE: 'write: broken pipe',
};
function dialErrorText(address, error) {
  const code = error?.code;
  if (code === 'ETIMEDOUT') return `dial tcp ${address}: i/o timeout`;
  if (code === 'ENOTFOUND' || code === 'EAI_AGAIN') {
    const host = address.slice(0, address.lastIndexOf(':')).replace(/^\[|\]$/g, '');
    return `dial tcp: lookup ${host}: no such host`;
  }
  const text = typeof code === 'string' ? SYSCALL_TEXT[code] : void 0;
  return `dial tcp ${address}: ${text ?? (error instanceof Error ? error.message : String(error))}`;
}
function isDialError(error) {
  const syscall = error?.syscall;
  return syscall === 'connect' || syscall === 'getaddrinfo';
}

// packages/prober/src/probes/http-probe.ts
var REDIRECT_CODES = /* @__PURE__ */ new Set([301, 302, 303, 307, 308]);
var MAX_REDIRECTS = 10;
var TimeoutSignal = class extends Error {};
var Deadline = class {
  expired = false;
  /** What to do on expiry for the step in progress. */
  onExpire;
  expire() {
    if (this.expired) return;
    this.expired = true;
    this.onExpire?.();
  }
};
async function httpProbe(req, timeoutMs, signal) {
  const deadline = new Deadline();
  const timer = setTimeout(() => deadline.expire(), timeoutMs);
  const onParentAbort = () => deadline.expire();
  signal?.addEventListener('abort', onParentAbort, { once: true });
  try {
    return await probe(req, deadline);
  } finally {
    clearTimeout(timer);
    signal?.removeEventListener('abort', onParentAbort);
  }
}
async function probe(req, abort) {
  const first = req;
  let target = first;
  for (let redirects = 0; ; redirects++) {
    let response;
    try {
      response = await send(target, req.headers, abort);
    } catch (error) {
      return {
        outcome: 'failure',
        output: `Get ${JSON.stringify(target.url)}: ${requestErrorText(target, error)}`,
      };
    }
    const status2 = response.statusCode ?? 0;
    const location = response.headers.location;
    if (REDIRECT_CODES.has(status2) && location !== void 0) {
      let next;
      try {
        next = new URL(
          location,
          `${target.scheme}://${joinHostPort(target.host, target.port)}${target.path}`,
        );
      } catch {
        response.destroy();
        return {
          outcome: 'failure',
          output: `Get ${JSON.stringify(target.url)}: failed to parse Location header ${JSON.stringify(location)}`,
        };
      }
      const nextHost = next.hostname.replace(/^\[|\]$/g, '');
      if (nextHost !== first.host) return classify(status2, await readBody(response, abort).catch(() => ''));
      response.destroy();
      if (redirects + 1 >= MAX_REDIRECTS) {
        return { outcome: 'failure', output: `Get ${JSON.stringify(location)}: stopped after 10 redirects` };
      }
      const relative = !/^[a-z][a-z0-9+.-]*:/i.test(location);
      const port = Number(next.port) || (next.protocol === 'https:' ? 443 : 80);
      target = {
        scheme: next.protocol.replace(/:$/, ''),
        host: nextHost,
        port,
        path: `${next.pathname}${next.search}`,
        url: next.href,
        hostHeader: relative ? target.hostHeader : void 0,
      };
      continue;
    }
    let body;
    try {
      body = await readBody(response, abort);
    } catch (error) {
      const message2 =
        error instanceof TimeoutSignal
          ? 'context deadline exceeded (Client.Timeout or context cancellation while reading body)'
          : error instanceof Error
            ? error.message
            : String(error);
      return { outcome: 'failure', output: '', error: new Error(message2) };
    }
    return classify(status2, body);
  }
}
function classify(status2, body) {
  if (status2 >= 200 && status2 < 400) {
    if (status2 >= 300)
      return { outcome: 'warning', output: `Probe terminated redirects, Response body: ${body}` };
    return { outcome: 'success', output: body };
  }
  return { outcome: 'failure', output: `HTTP probe failed with statuscode: ${status2}` };
}
function send(target, headers, deadline) {
  if (target.scheme !== 'http' && target.scheme !== 'https') {
    return Promise.reject(new Error(`unsupported protocol scheme ${JSON.stringify(target.scheme)}`));
  }
  if (deadline.expired) return Promise.reject(new TimeoutSignal());
  const outgoing = {};
  for (const name in headers) {
    const values = headers[name];
    outgoing[name] = values.length === 1 ? values[0] : [...values];
  }
  if (target.hostHeader !== void 0) outgoing.Host = target.hostHeader;
  return new Promise((resolve, reject) => {
    let req;
    const onAbort = () => {
      req?.destroy(new TimeoutSignal());
    };
    try {
      const options = {
        host: target.host,
        port: target.port,
        path: target.path,
        method: 'GET',
        headers: outgoing,
        agent: false,
      };
      req =
        target.scheme === 'https'
          ? httpsRequest({
              ...options,
              rejectUnauthorized: false,
              ...(isIP(target.host) === 0 && target.host !== '' ? { servername: target.host } : {}),
            })
          : httpRequest(options);
    } catch (error) {
      reject(error);
      return;
    }
    deadline.onExpire = onAbort;
    req.once('response', (res) => {
      deadline.onExpire = void 0;
      resolve(res);
    });
    req.once('error', (error) => {
      deadline.onExpire = void 0;
      reject(error);
    });
    req.end();
  });
}
function readBody(res, deadline) {
  return new Promise((resolve, reject) => {
    const chunks = [];
    let size = 0;
    const finish = (error) => {
      deadline.onExpire = void 0;
      res.removeAllListeners('data');
      if (error !== void 0) reject(error);
      else resolve(Buffer.concat(chunks).subarray(0, MAX_PROBE_OUTPUT_BYTES).toString('utf8'));
    };
    const onAbort = () => {
      res.destroy();
      finish(new TimeoutSignal());
    };
    if (deadline.expired) return onAbort();
    deadline.onExpire = onAbort;
    res.on('data', (chunk) => {
      chunks.push(chunk);
      size += chunk.length;
      if (size >= MAX_PROBE_OUTPUT_BYTES) {
        res.destroy();
        finish();
      }
    });
    res.once('end', () => finish());
    res.once('error', (error) => finish(error));
    res.once('close', () => {
      if (!res.complete && size < MAX_PROBE_OUTPUT_BYTES) finish(new Error('unexpected EOF'));
    });
  });
}
function requestErrorText(target, error) {
  if (error instanceof TimeoutSignal)
    return 'context deadline exceeded (Client.Timeout exceeded while awaiting headers)';
  const code = error?.code;
  if (code === 'ERR_INVALID_CHAR' || code === 'ERR_INVALID_HTTP_TOKEN') {
    return `net/http: invalid header field ${code === 'ERR_INVALID_CHAR' ? 'value' : 'name'}`;
  }
  if (isDialError(error)) return dialErrorText(joinHostPort(target.host, target.port), error);
  if (code === 'ECONNRESET' && error.message === 'socket hang up') return 'EOF';
  if (code === 'ECONNRESET') return 'read: connection reset by peer';
  return error instanceof Error ? error.message : String(error);
}

// packages/prober/src/probes/http-request.ts
function newHTTPProbeRequest(action, container, podIP, userAgent) {
  const scheme = String(action.scheme ?? '').toLowerCase() || 'http';
  const host = action.host || podIP;
  const port = resolveContainerPort(action.port, container);
  const rawPath = String(action.path ?? '');
  const path = rawPath === '' ? '/' : rawPath.startsWith('/') ? rawPath : `/${rawPath}`;
  const url = `${scheme}://${joinHostPort(host, port)}${rawPath === '' ? '' : path}`;
  const headers = {};
  for (const h of Array.isArray(action.httpHeaders) ? action.httpHeaders : []) {
    const name = canonicalHeaderKey(String(h.name));
    const values = headers[name] ?? [];
    values.push(String(h.value ?? ''));
    headers[name] = values;
  }
  if (headers['User-Agent'] === void 0) headers['User-Agent'] = [userAgent];
  if (headers.Accept === void 0) headers.Accept = ['*/*'];
  else if (headers.Accept[0] === '') delete headers.Accept;
  const hostValue = headers.Host?.[0];
  delete headers.Host;
  return { scheme, host, port, path, url, headers, hostHeader: hostValue === '' ? void 0 : hostValue };
}
function canonicalHeaderKey(name) {
  if (!/^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/.test(name)) return name;
  return name.toLowerCase().replace(/(^|-)([a-z])/g, (_m, dash, c) => dash + c.toUpperCase());
}

// packages/prober/src/probes/tcp-probe.ts
import { connect } from 'node:net';

function tcpProbe(host, port, timeoutMs, signal) {
  const address = joinHostPort(host, port);
  return new Promise((resolve) => {
    const socket = connect({ host, port });
    let done = false;
    const finish = (run) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      signal?.removeEventListener('abort', onAbort);
      socket.destroy();
      resolve(run);
    };
    const onAbort = () =>
      finish({ outcome: 'failure', output: `dial tcp ${address}: operation was canceled` });
    const timer = setTimeout(
      () => finish({ outcome: 'failure', output: `dial tcp ${address}: i/o timeout` }),
      timeoutMs,
    );
    signal?.addEventListener('abort', onAbort, { once: true });
    socket.once('connect', () => finish({ outcome: 'success', output: '' }));
    socket.once('error', (error) => finish({ outcome: 'failure', output: dialErrorText(address, error) }));
  });
}

// packages/prober/src/results-manager.ts
function runtimeContainerId(containerID) {
  const i = containerID.indexOf('://');
  return i === -1 ? containerID : containerID.slice(i + 3);
}
var ResultsManager = class {
  #cache = /* @__PURE__ */ new Map();
  /** The result for `containerId`, if one is published. */
  get(containerId) {
    return this.#cache.get(runtimeContainerId(containerId))?.result;
  }
  /** The cached entry for `containerId`, with its pod and container. */
  entry(containerId) {
    return this.#cache.get(runtimeContainerId(containerId));
  }
  /** Number of cached results. */
  get size() {
    return this.#cache.size;
  }
  /**
   * Sets the result; returns true when it is new or changed (upstream sends an update only
   * then). @internal
   */
  set(containerId, entry) {
    const id = runtimeContainerId(containerId);
    const prev = this.#cache.get(id);
    if (prev !== void 0 && prev.result === entry.result) return false;
    this.#cache.set(id, entry);
    return true;
  }
  /** Forgets the result of `containerId`. @internal */
  remove(containerId) {
    return this.#cache.delete(runtimeContainerId(containerId));
  }
};

// packages/prober/src/prober.ts
var MAX_PROBE_ATTEMPTS = 3;
async function probeOnce(deps, target, status2, containerID, signal) {
  let run = await runAction(deps, target, status2, containerID, signal);
  for (let attempt = 1; attempt < MAX_PROBE_ATTEMPTS && run.error !== void 0 && !signal.aborted; attempt++) {
    run = await runAction(deps, target, status2, containerID, signal);
  }
  const label = probeTypeLabel(target.type);
  if (run.error !== void 0) {
    record(
      deps,
      target,
      'Unhealthy',
      `${label} probe errored and resulted in ${run.outcome} state: ${run.error.message}`,
    );
    return { result: 'failure', error: run.error, run };
  }
  switch (run.outcome) {
    case 'success':
      return { result: 'success', error: void 0, run };
    case 'warning':
      record(deps, target, 'ProbeWarning', `${label} probe warning: ${run.output}`);
      return { result: 'success', error: void 0, run };
    case 'failure':
      record(deps, target, 'Unhealthy', `${label} probe failed: ${run.output}`);
      return { result: 'failure', error: void 0, run };
    default:
      return { result: 'failure', error: void 0, run };
  }
}
function formatPod(pod) {
  return `${pod.metadata?.name ?? ''}_${pod.metadata?.namespace ?? ''}(${pod.metadata?.uid ?? ''})`;
}
async function runAction(deps, target, status2, containerID, signal) {
  if (target.invalid !== void 0) return errored(target.invalid);
  const { probe: probe2, container } = target;
  const timeoutMs = target.timeoutSeconds * 1e3;
  const podIP = status2.podIP ?? '';
  try {
    if (probe2.exec != null) {
      if (deps.commandRunner === void 0) return errored('exec probes need a commandRunner (none configured)');
      const command = expandContainerCommandOnlyStatic(
        (probe2.exec.command ?? []).map(String),
        container.env,
      );
      const runner = deps.commandRunner;
      return await withDeadline(
        deps,
        timeoutMs,
        signal,
        (s) => execProbe(runner, runtimeContainerId(containerID), command, timeoutMs, s),
        () => ({ outcome: 'failure', output: new ExecTimeoutError(command, timeoutMs).message }),
      );
    }
    if (probe2.httpGet != null) {
      let request = target.memo?.http?.podIP === podIP ? target.memo.http.request : void 0;
      if (request === void 0) {
        try {
          request = newHTTPProbeRequest(probe2.httpGet, container, podIP, deps.userAgent);
        } catch (error) {
          return errored(messageOf(error));
        }
        if (target.memo !== void 0) target.memo.http = { podIP, request };
      }
      return await httpProbe(request, timeoutMs, signal);
    }
    if (probe2.tcpSocket != null) {
      let port;
      try {
        port = resolveContainerPort(probe2.tcpSocket.port, container);
      } catch (error) {
        return errored(messageOf(error));
      }
      return await tcpProbe(probe2.tcpSocket.host || podIP, port, timeoutMs, signal);
    }
    if (probe2.grpc != null) {
      const port = Number(probe2.grpc.port ?? 0);
      return await grpcProbe(
        podIP,
        port,
        String(probe2.grpc.service ?? ''),
        timeoutMs,
        deps.userAgent,
        signal,
      );
    }
  } catch (error) {
    return errored(messageOf(error));
  }
  return errored(`missing probe handler for ${formatPod(target.pod)}:${container.name}`);
}
async function withDeadline(deps, timeoutMs, parent, fn, onTimeout) {
  const controller = new AbortController();
  let timedOut = false;
  let onGiveUp = () => {};
  const gaveUp = new Promise((resolve) => {
    onGiveUp = resolve;
  });
  const timer = deps.clock.setTimeout(() => {
    timedOut = true;
    controller.abort(new Error('context deadline exceeded'));
    onGiveUp();
  }, timeoutMs + deps.runtimeRequestTimeoutMs);
  const onAbort = () => {
    controller.abort(parent.reason);
    onGiveUp();
  };
  parent.addEventListener('abort', onAbort, { once: true });
  try {
    const work = fn(controller.signal);
    work.catch(() => {});
    const result = await Promise.race([work, gaveUp.then(() => void 0)]);
    if (timedOut) return onTimeout();
    return result ?? errored('context canceled');
  } finally {
    timer.cancel();
    parent.removeEventListener('abort', onAbort);
  }
}
function record(deps, target, reason, message2) {
  if (deps.recorder === void 0) return;
  try {
    deps.recorder(target.pod, target.container, 'Warning', reason, message2);
  } catch (error) {
    deps.logger.error({ err: error, reason, message: message2 }, 'probe event recorder failed');
  }
}
function messageOf(error) {
  return error instanceof Error ? error.message : String(error);
}

// packages/prober/src/worker.ts
var KUBELET_RESTART_GRACE_MS = 1e4;
var ProbeWorker = class {
  type;
  container;
  probe;
  spec;
  #host;
  #pod;
  #containerID = '';
  #lastResult;
  #resultRun = 0;
  #onHold = false;
  #stopped = false;
  #timer;
  #nextDueMs = 0;
  /** Aborted when the worker stops; one per worker (a controller per run costs at thousands per second). */
  #abort = new AbortController();
  #inFlight = false;
  #memo = {};
  #target;
  #pendingTick = false;
  #pendingManual = false;
  #ticking = false;
  #totalLabels;
  #durationLabels;
  constructor(host, type, pod, container, probe2) {
    this.#host = host;
    this.type = type;
    this.#pod = pod;
    this.container = container;
    this.probe = probe2;
    this.spec = probeSpec(probe2, type);
    const base = {
      probe_type: probeTypeLabel(type),
      container: container.name,
      pod: pod.metadata?.name ?? '',
      namespace: pod.metadata?.namespace ?? '',
    };
    const total = (result) => ({
      probe_type: base.probe_type,
      result,
      container: base.container,
      pod: base.pod,
      namespace: base.namespace,
      pod_uid: pod.metadata?.uid ?? '',
    });
    this.#totalLabels = {
      successful: total('successful'),
      failed: total('failed'),
      unknown: total('unknown'),
    };
    this.#durationLabels = base;
  }
  /** The pod this worker probes (refreshed by a later `addPod`). */
  get pod() {
    return this.#pod;
  }
  set pod(pod) {
    this.#pod = pod;
  }
  /** The container ID the worker last saw (`''` before the container exists). */
  get containerID() {
    return this.#containerID;
  }
  /** True while waiting for a new container after a liveness failure or a startup result. */
  get onHold() {
    return this.#onHold;
  }
  get #periodMs() {
    return this.spec.timing.periodSeconds * 1e3;
  }
  /** Starts the loop: a random part of a period first when the manager started less than a period ago. */
  start() {
    const now = this.#host.clock.now();
    const period = this.#periodMs;
    const jitter = period > now - this.#host.startedAtMs ? Math.floor(this.#host.random() * period) : 0;
    this.#nextDueMs = now + jitter;
    this.#arm(jitter, true);
  }
  /** Probes now and restarts the period from here (upstream `manualTriggerCh`). */
  trigger() {
    if (this.#stopped || !this.#ticking) {
      if (!this.#stopped) this.#pendingManual = true;
      return;
    }
    if (this.#inFlight) {
      this.#pendingManual = true;
      return;
    }
    this.#resetTicker();
    this.#run();
  }
  /** Stops the worker: no more probes, an in-flight one is aborted, its result is removed. */
  stop() {
    if (this.#stopped) return;
    this.#stopped = true;
    this.#timer?.cancel();
    this.#timer = void 0;
    this.#abort.abort(new Error('probe worker stopped'));
    if (this.#containerID !== '') this.#host.unpublish(this, this.#containerID);
    this.#host.metrics.remove(Object.values(this.#totalLabels), [this.#durationLabels]);
    this.#host.exited(this);
  }
  #arm(delayMs, first) {
    this.#timer = this.#host.clock.setTimeout(() => {
      if (this.#stopped) return;
      if (first) {
        this.#nextDueMs = this.#host.clock.now();
        this.#ticking = true;
      }
      this.#nextDueMs += this.#periodMs;
      const now = this.#host.clock.now();
      while (this.#nextDueMs <= now) this.#nextDueMs += this.#periodMs;
      this.#arm(this.#nextDueMs - now, false);
      this.#tick();
    }, delayMs);
  }
  #resetTicker() {
    this.#timer?.cancel();
    const now = this.#host.clock.now();
    this.#nextDueMs = now + this.#periodMs;
    this.#arm(this.#periodMs, false);
  }
  #tick() {
    if (this.#inFlight) {
      this.#pendingTick = true;
      return;
    }
    this.#run();
  }
  #run() {
    this.#inFlight = true;
    this.#doProbe(this.#abort.signal).then(
      (keepGoing) => this.#after(keepGoing),
      (error) => {
        this.#host.logger.error(
          { err: error, probeType: this.type, container: this.container.name },
          'probe crashed',
        );
        this.#after(true);
      },
    );
  }
  #after(keepGoing) {
    this.#inFlight = false;
    if (this.#stopped) return;
    if (!keepGoing) {
      this.stop();
      return;
    }
    if (this.#pendingManual) {
      this.#pendingManual = false;
      this.#pendingTick = false;
      this.#resetTicker();
      this.#run();
    } else if (this.#pendingTick) {
      this.#pendingTick = false;
      this.#run();
    }
  }
  #set(result) {
    if (this.#containerID !== '') this.#host.publish(this, this.#containerID, result);
  }
  /** One iteration (upstream `doProbe`); resolves whether the worker keeps going. */
  async #doProbe(signal) {
    const host = this.#host;
    const startedAtMs = host.clock.now();
    let status2;
    try {
      status2 = host.getPodStatus(this.#pod.metadata?.uid ?? '');
    } catch (error) {
      host.logger.error({ err: error }, 'pod status provider failed');
      return true;
    }
    if (status2 == null) return true;
    if (status2.phase === 'Failed' || status2.phase === 'Succeeded') return false;
    const c =
      findStatus(status2.containerStatuses, this.container.name) ??
      findStatus(status2.initContainerStatuses, this.container.name);
    if (c === void 0) return true;
    if (c.containerID !== this.#containerID) {
      if (this.#containerID !== '') host.unpublish(this, this.#containerID);
      this.#containerID = String(c.containerID);
      this.#lastResult = void 0;
      this.#resultRun = 0;
      const runningSince = timeMs(c.state?.running?.startedAt);
      const wasRunningBefore =
        runningSince !== void 0 && runningSince < host.startedAtMs - KUBELET_RESTART_GRACE_MS;
      if (!wasRunningBefore) this.#set(initialResult(this.type));
      this.#onHold = false;
    }
    if (this.#onHold) return true;
    const running = c.state?.running;
    if (running == null) {
      this.#set('failure');
      const isSidecar =
        (this.#pod.spec?.initContainers ?? []).some((i) => i.name === this.container.name) &&
        isRestartableInitContainer(this.container);
      return c.state?.terminated == null || this.#pod.spec?.restartPolicy !== 'Never' || isSidecar;
    }
    if (this.#pod.metadata?.deletionTimestamp != null && this.type !== 'readiness') {
      this.#set('success');
      return false;
    }
    const since = timeMs(running.startedAt);
    const elapsedSeconds =
      since === void 0 ? Number.POSITIVE_INFINITY : Math.trunc((host.clock.now() - since) / 1e3);
    if (elapsedSeconds < this.spec.timing.initialDelaySeconds) return true;
    if (c.started === true) {
      if (this.type === 'startup') return true;
    } else if (this.type !== 'startup') {
      return true;
    }
    if (this.#target?.pod !== this.#pod) {
      this.#target = {
        type: this.type,
        pod: this.#pod,
        container: this.container,
        probe: this.probe,
        timeoutSeconds: this.spec.timing.timeoutSeconds,
        invalid: this.spec.invalid,
        memo: this.#memo,
      };
    }
    const verdict = await probeOnce(host, this.#target, status2, this.#containerID, signal);
    if (this.#stopped || signal.aborted) return true;
    const durationMs = host.clock.now() - startedAtMs;
    host.probed(this, startedAtMs, durationMs, verdict.result, verdict.run.output, verdict.error);
    if (verdict.error !== void 0) return true;
    if (verdict.result === 'success') {
      host.metrics.probe(this.#totalLabels.successful);
      host.metrics.duration(this.#durationLabels, durationMs / 1e3);
    } else host.metrics.probe(this.#totalLabels.failed);
    if (this.#lastResult === verdict.result) this.#resultRun++;
    else {
      this.#lastResult = verdict.result;
      this.#resultRun = 1;
    }
    const { failureThreshold, successThreshold } = this.spec.timing;
    if (
      (verdict.result === 'failure' && this.#resultRun < failureThreshold) ||
      (verdict.result === 'success' && this.#resultRun < successThreshold)
    ) {
      return true;
    }
    this.#set(verdict.result);
    if ((this.type === 'liveness' && verdict.result === 'failure') || this.type === 'startup') {
      this.#onHold = true;
      this.#resultRun = 0;
    }
    return true;
  }
};
function findStatus(list, name) {
  const s = list?.find((x) => x.name === name);
  return s?.containerID ? s : void 0;
}
function timeMs(value) {
  if (value == null) return void 0;
  const ms = value instanceof Date ? value.getTime() : Date.parse(String(value));
  return Number.isFinite(ms) ? ms : void 0;
}

// packages/prober/src/pod-status.ts
var KUBELET_RESTART_GRACE_MS2 = 1e4;
function applyProbeResults(pod, status2, view) {
  const uid = pod.metadata?.uid ?? '';
  const startedAt2 = view.startedAtMs ?? 0;
  const isStarted = (s) => {
    if (s.state?.running == null) return false;
    const result = view.result('startup', s.containerID ?? '');
    if (result !== void 0) return result === 'success';
    if (s.started === true) return true;
    return !view.hasWorker(uid, s.name, 'startup');
  };
  const readyOf = (s, hasReadinessProbe) => {
    if (s.state?.running == null) return false;
    if (view.result('readiness', s.containerID ?? '') === 'success') return true;
    const exists = view.hasWorker(uid, s.name, 'readiness');
    let ready = !exists;
    if (exists) view.triggerReadiness?.(uid, s.name);
    const since = timeMs(s.state.running.startedAt);
    if (since !== void 0 && since < startedAt2 - KUBELET_RESTART_GRACE_MS2) {
      if (!ready && view.result('readiness', s.containerID ?? '') === void 0) ready = true;
      if (hasReadinessProbe) {
        const podReady = (pod.status?.conditions ?? []).some(
          (c) => c.type === 'Ready' && c.status === 'True',
        );
        if (!podReady) ready = false;
      }
    }
    return ready;
  };
  const containers = pod.spec?.containers ?? [];
  const containerStatuses = status2.containerStatuses?.map((s) => {
    const started = isStarted(s);
    if (!started) return { ...s, started };
    const spec = containers.find((c) => c.name === s.name);
    return { ...s, started, ready: readyOf(s, spec?.readinessProbe != null) };
  });
  const inits = pod.spec?.initContainers ?? [];
  const initContainerStatuses = status2.initContainerStatuses?.map((s, i) => {
    const started = isStarted(s);
    const spec = inits[i]?.name === s.name ? inits[i] : inits.find((c) => c.name === s.name);
    if (spec === void 0) return { ...s, started };
    if (!isRestartableInitContainer(spec)) {
      return s.state?.terminated != null && s.state.terminated.exitCode === 0
        ? { ...s, started, ready: true }
        : { ...s, started };
    }
    if (!started) return { ...s, started };
    return { ...s, started, ready: readyOf(s, spec.readinessProbe != null) };
  });
  return { ...status2, ...definedFields({ containerStatuses, initContainerStatuses }) };
}

// packages/prober/src/probe-manager.ts
import { EventEmitter } from 'eventemitter3';

// packages/prober/src/metrics.ts
var DEFAULT_BUCKETS_SECONDS = [5e-3, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];
var noop2 = { probe() {}, duration() {}, remove() {} };
function createProberMetrics(options) {
  if (options === void 0) return noop2;
  const factory = createMetricFactory(options);
  const total = factory.counter({
    name: 'prober_probe_total',
    help: 'Cumulative number of a liveness, readiness or startup probe for a container by result.',
    labelNames: ['probe_type', 'result', 'container', 'pod', 'namespace', 'pod_uid'],
  });
  const duration = factory.histogram({
    name: 'prober_probe_duration_seconds',
    help: 'Duration in seconds for a probe response.',
    labelNames: ['probe_type', 'container', 'pod', 'namespace'],
    buckets: DEFAULT_BUCKETS_SECONDS,
  });
  const removeFrom = (metric, labels) => {
    metric.remove?.(labels);
  };
  return {
    probe: (labels) => total.inc(labels),
    duration: (labels, seconds) => duration.observe(labels, seconds),
    remove(totals, durations) {
      for (const l of totals) removeFrom(total, l);
      for (const l of durations) removeFrom(duration, l);
    },
  };
}

// packages/prober/src/probe-manager-options.ts
var DEFAULT_USER_AGENT = 'kube-probe/1.36';

// packages/prober/src/probe-manager.ts
var key = (uid, name, type) => `${uid}\0${name}\0${type}`;
var ProbeManager = class extends EventEmitter {
  /** Readiness results by container ID. */
  readiness = new ResultsManager();
  /** Liveness results by container ID. */
  liveness = new ResultsManager();
  /** Startup results by container ID. */
  startup = new ResultsManager();
  #once = new StartOnce('ProbeManager');
  #workers = /* @__PURE__ */ new Map();
  #restarts = /* @__PURE__ */ new Map();
  #host;
  #clock;
  #logger;
  #statusProvider;
  #running = false;
  #stopped = false;
  /** @throws `InvalidOptionsError` (from `@nodeagent/core`) for a missing status provider or a bad option. */
  constructor(options) {
    super();
    if (options == null || typeof options.statusProvider?.getPodStatus !== 'function') {
      throw new InvalidOptionsError('ProbeManager', 'statusProvider must have a getPodStatus(uid) method');
    }
    const slack = options.runtimeRequestTimeoutMs ?? 12e4;
    if (!(slack >= 0) || !Number.isFinite(slack)) {
      throw new InvalidOptionsError(
        'ProbeManager',
        `runtimeRequestTimeoutMs must be a finite number >= 0, got ${slack}`,
      );
    }
    const userAgent = options.userAgent ?? DEFAULT_USER_AGENT;
    if (typeof userAgent !== 'string' || userAgent === '') {
      throw new InvalidOptionsError(
        'ProbeManager',
        `userAgent must be a non-empty string, got ${JSON.stringify(userAgent)}`,
      );
    }
    this.#clock = options.clock ?? realClock;
    this.#logger = options.logger ?? noopLogger;
    this.#statusProvider = options.statusProvider;
    this.#host = {
      clock: this.#clock,
      logger: this.#logger,
      userAgent,
      runtimeRequestTimeoutMs: slack,
      commandRunner: options.commandRunner,
      recorder: options.recorder,
      metrics: createProberMetrics(options.metrics),
      random: options.random ?? Math.random,
      startedAtMs: 0,
      getPodStatus: (uid) => this.#statusProvider.getPodStatus(uid),
      publish: (w, id, result) => this.#publish(w, id, result),
      unpublish: (w, id) => this.#unpublish(w, id),
      exited: (w) => this.#exited(w),
      probed: (w, startedAtMs, durationMs, result, output, error) => {
        if (this.listenerCount('probe') === 0) return;
        this.#emit('probe', {
          probeType: w.type,
          podUID: w.pod.metadata?.uid ?? '',
          containerName: w.container.name,
          startedAtMs,
          durationMs,
          result,
          output,
          error,
        });
      },
    };
  }
  /** Starts probing (workers added before `start` begin now). Resolves at once. */
  start(signal) {
    return this.#once.run(
      signal,
      async () => {
        if (this.#stopped) return;
        this.#host.startedAtMs = this.#clock.now();
        this.#running = true;
        for (const w of this.#workers.values()) w.start();
      },
      () => this.stop(),
    );
  }
  /** Stops every worker and forgets every result. Idempotent; safe before `start`. */
  async stop() {
    this.#stopped = true;
    this.#running = false;
    for (const w of [...this.#workers.values()]) w.stop();
  }
  /** Number of workers. */
  get workerCount() {
    return this.#workers.size;
  }
  /**
   * Creates workers for every probe of the pod's regular containers and restartable init
   * containers (sidecars); plain init containers are never probed. Workers that exist are kept
   * (their pod object is refreshed, so a deletion timestamp is seen); probe specs do not change.
   */
  addPod(pod) {
    if (this.#stopped) return;
    const uid = pod.metadata?.uid ?? '';
    const list = (value) =>
      Array.isArray(value) ? value.filter((c) => typeof c === 'object' && c !== null) : [];
    const containers = [
      ...list(pod.spec?.containers),
      ...list(pod.spec?.initContainers).filter((c) => isRestartableInitContainer(c)),
    ];
    for (const c of containers) {
      for (const type of ['startup', 'readiness', 'liveness']) {
        const probe2 = probeOf(c, type);
        if (probe2 == null) continue;
        const k = key(uid, c.name, type);
        const existing = this.#workers.get(k);
        if (existing !== void 0) {
          existing.pod = pod;
          continue;
        }
        const w = new ProbeWorker(this.#host, type, pod, c, probe2);
        this.#workers.set(k, w);
        if (this.#running) w.start();
      }
    }
  }
  /** Stops the liveness and startup workers of a terminating pod; readiness goes on. */
  stopLivenessAndStartup(pod) {
    const uid = pod.metadata?.uid ?? '';
    for (const c of Array.isArray(pod.spec?.containers) ? pod.spec.containers : []) {
      for (const type of ['liveness', 'startup']) this.#workers.get(key(uid, c.name, type))?.stop();
    }
  }
  /** Stops every worker of the pod and removes its results. */
  removePod(pod) {
    this.#removeUID(pod.metadata?.uid ?? '');
  }
  /** Stops the workers of every pod whose UID is not in `desiredUIDs`. */
  cleanupPods(desiredUIDs) {
    const desired = new Set(desiredUIDs);
    for (const w of [...this.#workers.values()]) if (!desired.has(w.pod.metadata?.uid ?? '')) w.stop();
  }
  /**
   * `status` with `containerStatuses[].started` and `.ready` set from the probe results
   * (upstream `UpdatePodStatus`); a readiness worker without a success is asked to probe now.
   * Returns a new object.
   */
  updatePodStatus(pod, status2) {
    return applyProbeResults(pod, status2, {
      result: (type, id) => this.resultOf(type, id),
      hasWorker: (uid, name, type) => this.#workers.has(key(uid, name, type)),
      triggerReadiness: (uid, name) => this.#workers.get(key(uid, name, 'readiness'))?.trigger(),
      startedAtMs: this.#host.startedAtMs,
    });
  }
  /** The published result of `type` for `containerId` (`containerd://abc` or `abc`). */
  resultOf(type, containerId) {
    return this.#results(type).get(containerId);
  }
  /**
   * A lookup for the runtime side (`@nodeagent/kuberuntime`'s `liveness` / `startup` /
   * `readiness` options): `success`, `failure`, or `undefined` when none or unknown.
   */
  resultLookup(type) {
    const results = this.#results(type);
    return (id) => {
      const r = results.get(id);
      return r === 'unknown' ? void 0 : r;
    };
  }
  /** The restart the runtime must do for `containerId`, if a liveness or startup probe failed. */
  restartRequest(containerId) {
    return this.#restarts.get(runtimeContainerId(containerId));
  }
  /** True when `containerId` must be restarted (see {@link ProbeManager.restartRequest}). */
  shouldRestart(containerId) {
    return this.#restarts.has(runtimeContainerId(containerId));
  }
  #results(type) {
    return type === 'readiness' ? this.readiness : type === 'liveness' ? this.liveness : this.startup;
  }
  #removeUID(uid) {
    for (const w of [...this.#workers.values()]) if ((w.pod.metadata?.uid ?? '') === uid) w.stop();
  }
  #publish(w, containerID, result) {
    const results = this.#results(w.type);
    if (results.get(containerID) === result) return;
    const changed = results.set(containerID, {
      result,
      podUID: w.pod.metadata?.uid ?? '',
      containerName: w.container.name,
    });
    if (!changed) return;
    const id = runtimeContainerId(containerID);
    if (w.type !== 'readiness') {
      if (result === 'failure') {
        const type = w.type;
        const reason = type === 'liveness' ? 'LivenessProbe' : 'StartupProbe';
        const request = {
          probeType: type,
          reason,
          message: `Container ${w.container.name} failed ${type} probe`,
          gracePeriodSeconds: terminationGracePeriodSeconds(w.pod, w.container, reason),
          containerID,
          containerName: w.container.name,
          pod: w.pod,
        };
        this.#restarts.set(id, request);
        this.#emit('result', {
          probeType: type,
          result,
          containerID,
          containerName: w.container.name,
          pod: w.pod,
        });
        this.#emit('restart', request);
        return;
      }
      if (this.#restarts.get(id)?.probeType === w.type) this.#restarts.delete(id);
    }
    this.#emit('result', {
      probeType: w.type,
      result,
      containerID,
      containerName: w.container.name,
      pod: w.pod,
    });
  }
  #unpublish(w, containerID) {
    this.#results(w.type).remove(containerID);
    const id = runtimeContainerId(containerID);
    if (this.#restarts.get(id)?.probeType === w.type) this.#restarts.delete(id);
  }
  #exited(w) {
    const k = key(w.pod.metadata?.uid ?? '', w.container.name, w.type);
    if (this.#workers.get(k) === w) this.#workers.delete(k);
  }
  #emit(event, ...args) {
    try {
      this.emit(event, ...args);
    } catch (error) {
      this.#logger.error({ err: error, event }, 'ProbeManager event handler threw');
    }
  }
};
function probeOf(c, type) {
  const p = type === 'liveness' ? c.livenessProbe : type === 'readiness' ? c.readinessProbe : c.startupProbe;
  return p == null ? void 0 : p;
}

// packages/prober/test/helpers.ts
function startedContainer(name, containerID, startedAt2) {
  return {
    name,
    containerID,
    image: 'x',
    imageID: '',
    ready: false,
    restartCount: 0,
    started: true,
    state: { running: { startedAt: startedAt2 } },
  };
}

// packages/prober/bench/profile-manager.ts
var PROBES = Number(process.env.PROBER_BENCH_PROBES ?? 5e3);
var SECONDS = Number(process.env.PROBER_PROFILE_SECONDS ?? 15);
var METRICS = process.env.PROBER_PROFILE_METRICS === '1';
var CONTAINERS_PER_POD = 5;
var servers = spawn(
  process.execPath,
  [process.env.PROBER_SERVERS ?? fileURLToPath(new URL('./probe-servers.mjs', import.meta.url)), '16'],
  { stdio: ['ignore', 'pipe', 'inherit'] },
);
var ports = await new Promise((resolve) => {
  servers.stdout?.once('data', (d) => resolve(JSON.parse(d.toString())));
});
var statuses = /* @__PURE__ */ new Map();
var metricsOption = METRICS ? { metrics: { registry: new (await import('prom-client')).Registry() } } : {};
var manager = new ProbeManager({
  statusProvider: { getPodStatus: (uid) => statuses.get(uid) },
  ...metricsOption,
});
var probes = 0;
var failures = 0;
var late = [];
var last = /* @__PURE__ */ new Map();
manager.on('probe', (a) => {
  probes++;
  if (a.result !== 'success' || a.error !== void 0) failures++;
  const k = `${a.podUID}/${a.containerName}`;
  const prev = last.get(k);
  if (prev !== void 0) late.push(Math.max(0, a.startedAtMs - prev - 1e3));
  last.set(k, a.startedAtMs);
});
var BARE = process.env.PROBER_PROFILE_BARE === '1';
if (!BARE) await manager.start();
else {
  const { request } = await import('node:http');
  const { connect: connect2 } = await import('node:net');
  for (let i = 0; i < PROBES; i++) {
    const kind = i % 2 === 0 ? 'http' : 'tcp';
    const list = kind === 'http' ? ports.http : ports.tcp;
    const port = list[Math.floor(i / 2) % list.length];
    const key2 = String(i);
    let prev;
    const done = (start, ok) => {
      probes++;
      if (!ok) failures++;
      if (prev !== void 0) late.push(Math.max(0, start - prev - 1e3));
      prev = start;
    };
    let next = Date.now() + Math.floor(Math.random() * 1e3);
    const once = () => {
      const startedAt2 = Date.now();
      if (kind === 'http') {
        const req = request(
          {
            host: '127.0.0.1',
            port,
            path: '/healthz',
            agent: false,
            headers: { 'User-Agent': 'kube-probe/1.36', Accept: '*/*' },
          },
          (res) => {
            res.on('data', () => {});
            res.on('end', () => done(startedAt2, res.statusCode === 200));
          },
        );
        req.setTimeout(1e3, () => req.destroy());
        req.on('error', () => done(startedAt2, false));
        req.end();
      } else {
        const s = connect2({ host: '127.0.0.1', port });
        s.setTimeout(1e3, () => s.destroy());
        s.once('connect', () => {
          s.destroy();
          done(startedAt2, true);
        });
        s.once('error', () => done(startedAt2, false));
      }
    };
    void key2;
    let anchored = false;
    const tick = () => {
      if (!anchored) {
        anchored = true;
        next = Date.now();
      }
      once();
      next += 1e3;
      while (next <= Date.now()) next += 1e3;
      setTimeout(tick, next - Date.now());
    };
    setTimeout(tick, next - Date.now());
  }
}
var startedAt = /* @__PURE__ */ new Date();
for (let p = 0; p < PROBES / CONTAINERS_PER_POD; p++) {
  const uid = `bench-${p}`;
  const containers = [];
  for (let c = 0; c < CONTAINERS_PER_POD; c++) {
    const i = p * CONTAINERS_PER_POD + c;
    const kind = i % 2 === 0 ? 'http' : 'tcp';
    const list = kind === 'http' ? ports.http : ports.tcp;
    const port = list[Math.floor(i / 2) % list.length];
    const handler = kind === 'http' ? { httpGet: { port, path: '/healthz' } } : { tcpSocket: { port } };
    containers.push({
      name: `c${c}`,
      image: 'x',
      readinessProbe: { ...handler, periodSeconds: 1, timeoutSeconds: 1 },
    });
  }
  const pod = { metadata: { name: uid, namespace: 'bench', uid }, spec: { containers } };
  statuses.set(uid, {
    phase: 'Running',
    podIP: '127.0.0.1',
    containerStatuses: containers.map((c) =>
      startedContainer(c.name, `containerd://${uid}-${c.name}`, startedAt),
    ),
  });
  if (!BARE) manager.addPod(pod);
}
for (let s = 0; s < SECONDS; s++) {
  const cpu0 = process.cpuUsage();
  const n0 = probes;
  const f0 = failures;
  late = [];
  await new Promise((r) => setTimeout(r, 1e3));
  const cpu = process.cpuUsage(cpu0);
  const n = probes - n0;
  late.sort((a, b) => a - b);
  console.log(
    `${s}s probes ${n} failed ${failures - f0} cpu \xB5s/probe ${Math.round((cpu.user + cpu.system) / n)} p99 interval lateness ${late[Math.floor(late.length * 0.99)] ?? '-'} ms`,
  );
}
await manager.stop();
servers.kill('SIGTERM');
process.exit(0);
