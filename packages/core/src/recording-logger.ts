/**
 * A {@link Logger} that keeps every record in memory, for asserting on logs in tests.
 *
 * @module
 */
import type { LogFn, Logger, LogLevel } from './logger.js';

/** One recorded log call, with the bindings of the child logger that made it. */
export interface LogRecord {
  /** The method that was called. */
  readonly level: LogLevel;
  /** The message, if one was given. */
  readonly msg: string | undefined;
  /** The logger's bindings merged with the call's fields (the call's win). */
  readonly fields: Readonly<Record<string, unknown>>;
}

/** Records log calls; children share the parent's record list. */
export class RecordingLogger implements Logger {
  /** Every record so far, oldest first (shared with child loggers). */
  readonly records: LogRecord[];
  private readonly bindings: Readonly<Record<string, unknown>>;

  /**
   * @param bindings fields added to every record.
   * @param records the list to append to (children pass their parent's).
   */
  constructor(bindings: Readonly<Record<string, unknown>> = {}, records: LogRecord[] = []) {
    this.bindings = bindings;
    this.records = records;
  }

  /** Records a `trace` call. */
  readonly trace: LogFn = this.method('trace');
  /** Records a `debug` call. */
  readonly debug: LogFn = this.method('debug');
  /** Records a `info` call. */
  readonly info: LogFn = this.method('info');
  /** Records a `warn` call. */
  readonly warn: LogFn = this.method('warn');
  /** Records a `error` call. */
  readonly error: LogFn = this.method('error');

  /** A logger adding `bindings` to its records, which go to the same list. */
  child(bindings: Readonly<Record<string, unknown>>): Logger {
    return new RecordingLogger({ ...this.bindings, ...bindings }, this.records);
  }

  /** Records whose message contains `text`, at exactly `level` when one is given. */
  find(text: string, level?: LogLevel): LogRecord[] {
    return this.records.filter(
      (r) => (r.msg ?? '').includes(text) && (level === undefined || r.level === level),
    );
  }

  private method(level: LogLevel): LogFn {
    return ((objOrMsg: Readonly<Record<string, unknown>> | string, msg?: string) => {
      const fields = typeof objOrMsg === 'string' ? {} : objOrMsg;
      this.records.push({
        level,
        msg: typeof objOrMsg === 'string' ? objOrMsg : msg,
        fields: { ...this.bindings, ...fields },
      });
    }) as LogFn;
  }
}
