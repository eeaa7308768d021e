/**
 * A {@link Logger} that keeps every record in memory, for asserting on logs in tests.
 *
 * @module
 */
import type { LogFn, Logger, LogLevel } from './logger.js';

/** One recorded log call, with the bindings of the child logger that made it. */
export interface LogRecord {
  readonly level: LogLevel;
  readonly msg: string | undefined;
  readonly fields: Readonly<Record<string, unknown>>;
}

/** Records log calls; children share the parent's record list. */
export class RecordingLogger implements Logger {
  readonly records: LogRecord[];
  private readonly bindings: Readonly<Record<string, unknown>>;

  constructor(bindings: Readonly<Record<string, unknown>> = {}, records: LogRecord[] = []) {
    this.bindings = bindings;
    this.records = records;
  }

  readonly trace: LogFn = this.method('trace');
  readonly debug: LogFn = this.method('debug');
  readonly info: LogFn = this.method('info');
  readonly warn: LogFn = this.method('warn');
  readonly error: LogFn = this.method('error');

  child(bindings: Readonly<Record<string, unknown>>): Logger {
    return new RecordingLogger({ ...this.bindings, ...bindings }, this.records);
  }

  /** Records at `level` or above whose message contains `text`. */
  find(text: string, level?: LogLevel): LogRecord[] {
    return this.records.filter((r) => (r.msg ?? '').includes(text) && (level === undefined || r.level === level));
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
