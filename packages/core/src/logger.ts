/**
 * The logging contract every `@nodeagent` package accepts: pino's argument order
 * (`(obj, msg)` or `(msg)`) and `child(bindings)`. pino loggers satisfy it as they are;
 * libraries never depend on pino.
 *
 * @module
 */

/** One log method: `log({ podUid }, 'syncing pod')` or `log('syncing')`. */
export interface LogFn {
  (obj: Readonly<Record<string, unknown>>, msg?: string): void;
  (msg: string): void;
}

/** A structured logger with pino's shape. */
export interface Logger {
  /** Logs the finest detail (pino level 10). */
  trace: LogFn;
  /** Logs diagnostics for developers (pino level 20). */
  debug: LogFn;
  /** Logs normal operation (pino level 30). */
  info: LogFn;
  /** Logs something unexpected that the code recovered from (pino level 40). */
  warn: LogFn;
  /** Logs a failure that needs attention (pino level 50). */
  error: LogFn;
  /** A logger that adds `bindings` to every record, e.g. `{ component: 'pleg' }`. */
  child(bindings: Readonly<Record<string, unknown>>): Logger;
}

/** The log levels, least to most severe. */
export type LogLevel = 'trace' | 'debug' | 'info' | 'warn' | 'error';

const LEVELS: readonly LogLevel[] = ['trace', 'debug', 'info', 'warn', 'error'];
/** pino's numeric levels, so JSON output sorts and filters like pino's. */
const LEVEL_NUMBERS: Readonly<Record<LogLevel, number>> = {
  trace: 10,
  debug: 20,
  info: 30,
  warn: 40,
  error: 50,
};

const noop: LogFn = () => {};

/** A logger that drops everything: the default wherever a logger is optional. */
export const noopLogger: Logger = {
  trace: noop,
  debug: noop,
  info: noop,
  warn: noop,
  error: noop,
  child: () => noopLogger,
};

/** Options for {@link consoleLogger}. */
export interface ConsoleLoggerOptions {
  /**
   * The least severe level written.
   * @default 'info'
   */
  readonly level?: LogLevel;
  /** Fields added to every record. */
  readonly bindings?: Readonly<Record<string, unknown>>;
  /**
   * Where lines go.
   * @default process.stderr
   */
  readonly stream?: {
    /** Receives one complete line, ending in `\n`. */
    write(line: string): unknown;
  };
  /**
   * `json` writes one pino-compatible JSON object per line; `pretty` writes
   * `LEVEL msg key=value ...` for humans.
   * @default 'json'
   */
  readonly format?: 'json' | 'pretty';
  /** Time source for the `time` field (ms since the epoch). @default Date.now */
  readonly now?: () => number;
}

/**
 * A dependency-free logger writing JSON lines (pino's record shape: `level`, `time`,
 * `msg`, bindings, fields) or a compact human format.
 *
 * @example
 * ```ts
 * const log = consoleLogger({ level: 'debug' }).child({ component: 'pleg' });
 * log.info({ pods: 3 }, 'relisted');
 * ```
 */
export function consoleLogger(options: ConsoleLoggerOptions = {}): Logger {
  const min = LEVELS.indexOf(options.level ?? 'info');
  if (min < 0)
    throw new RangeError(`consoleLogger: level must be one of ${LEVELS.join(', ')}, got ${options.level}`);
  const stream = options.stream ?? process.stderr;
  const format = options.format ?? 'json';
  const now = options.now ?? Date.now;
  const make = (bindings: Readonly<Record<string, unknown>>): Logger => {
    const method = (level: LogLevel): LogFn => {
      if (LEVELS.indexOf(level) < min) return noop;
      return ((objOrMsg: Readonly<Record<string, unknown>> | string, msg?: string) => {
        const fields = typeof objOrMsg === 'string' ? {} : objOrMsg;
        const text = typeof objOrMsg === 'string' ? objOrMsg : msg;
        let line: string;
        try {
          line = render(format, level, now(), bindings, fields, text);
        } catch (err) {
          // Spreading the fields ran a throwing getter: still say something, never throw.
          line = safeStringify({ level: LEVEL_NUMBERS[level], msg: text, logError: String(err) });
        }
        stream.write(`${line}\n`);
      }) as LogFn;
    };
    return {
      trace: method('trace'),
      debug: method('debug'),
      info: method('info'),
      warn: method('warn'),
      error: method('error'),
      child: (more) => make({ ...bindings, ...more }),
    };
  };
  return make(options.bindings ?? {});
}

function render(
  format: 'json' | 'pretty',
  level: LogLevel,
  time: number,
  bindings: Readonly<Record<string, unknown>>,
  fields: Readonly<Record<string, unknown>>,
  msg: string | undefined,
): string {
  if (format === 'json') {
    const record: Record<string, unknown> = { level: LEVEL_NUMBERS[level], time, ...bindings, ...fields };
    if (msg !== undefined) record.msg = msg;
    return safeStringify(record);
  }
  const parts = [new Date(time).toISOString(), level.toUpperCase().padEnd(5), msg ?? ''];
  for (const [k, v] of Object.entries({ ...bindings, ...fields })) {
    parts.push(`${k}=${typeof v === 'string' ? JSON.stringify(v) : safeStringify(v)}`);
  }
  return parts.join(' ');
}

/**
 * JSON.stringify that survives Errors, bigints, cycles and throwing getters (a log call must
 * never throw). Only true cycles become `[Circular]`; an object referenced twice is written twice.
 */
function safeStringify(value: unknown): string {
  // The replacer's `this` is the object holding the current key, so trimming the stack back
  // to it leaves exactly the ancestors of the value being written.
  const ancestors: object[] = [];
  try {
    return JSON.stringify(value, function (this: unknown, _key: string, v: unknown) {
      if (typeof v === 'bigint') return v.toString();
      if (typeof v !== 'object' || v === null) return v;
      while (ancestors.length > 0 && ancestors[ancestors.length - 1] !== this) ancestors.pop();
      if (ancestors.includes(v)) return '[Circular]';
      ancestors.push(v);
      if (v instanceof Error) return { type: v.name, message: v.message, stack: v.stack };
      return v;
    });
  } catch (err) {
    return JSON.stringify({ msg: '[unserializable log record]', error: String(err) });
  }
}
