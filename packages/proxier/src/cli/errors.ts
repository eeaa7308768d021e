/**
 * The CLI's error kinds and how messages reach the terminal: one line per problem, whatever
 * the object names contain.
 *
 * @module
 */

/** A command line that cannot be used (unknown option, bad value): exit code 2 with usage. */
export class CliUsageError extends Error {
  override readonly name = 'CliUsageError';
  /** The command whose usage text should be shown (`render`, `trace`, `apply`), if known. */
  readonly command: string | undefined;
  /** @param message what is wrong; @param command the command it belongs to. */
  constructor(message: string, command?: string) {
    super(message);
    this.command = command;
  }
}

/** A failure that leaves nothing usable (unreadable file, no valid object, kernel tool failed): exit 1. */
export class CliFailure extends Error {
  override readonly name = 'CliFailure';
  /** Further lines printed indented under the message (a tool's stderr, hints). */
  readonly details: readonly string[];
  /** @param message one line; @param details lines shown under it. */
  constructor(message: string, details: readonly string[] = []) {
    super(message);
    this.details = details;
  }
}

/**
 * `text` as one terminal line: control characters (newlines in hostile object names, escape
 * sequences) are written as `\n`, `\t`, `\x1b`, … so every problem stays on its own line and
 * cannot rewrite the terminal.
 */
export function oneLine(text: string): string {
  // biome-ignore lint/suspicious/noControlCharactersInRegex: matching control characters is the point.
  return text.replace(/[\u0000-\u001f\u007f-\u009f\u2028\u2029]/g, (c) => {
    if (c === '\n') return '\\n';
    if (c === '\r') return '\\r';
    if (c === '\t') return '\\t';
    const code = c.charCodeAt(0);
    return code <= 0xff ? `\\x${code.toString(16).padStart(2, '0')}` : `\\u${code.toString(16)}`;
  });
}
