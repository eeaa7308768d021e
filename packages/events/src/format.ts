/**
 * The part of Go's `fmt.Sprintf` that event messages use: `%s`, `%v`, `%d`, `%q` and `%%`,
 * so messages ported from the kubelet (`"Back-off restarting failed container %s in pod %s"`)
 * keep their upstream format strings.
 *
 * @module
 */

function verbatim(arg: unknown): string {
  if (arg instanceof Error) return arg.message;
  if (typeof arg === 'string') return arg;
  if (arg === null || arg === undefined) return '<nil>';
  if (typeof arg === 'object') return JSON.stringify(arg);
  return String(arg);
}

/**
 * Formats `format` with `args` as Go would for these verbs (`%q` quotes like Go's `strconv.Quote`
 * for printable text). A missing argument prints `%!v(MISSING)`; extra ones are appended as
 * `%!(EXTRA …)`, as Go does.
 */
export function sprintf(format: string, ...args: readonly unknown[]): string {
  let i = 0;
  const out = format.replace(/%([%svdq])/g, (_m, verb: string) => {
    if (verb === '%') return '%';
    if (i >= args.length) return `%!${verb}(MISSING)`;
    const arg = args[i++];
    if (verb === 'q') return JSON.stringify(verbatim(arg));
    if (verb === 'd' && typeof arg === 'number') return String(Math.trunc(arg));
    return verbatim(arg);
  });
  if (i < args.length) return `${out}%!(EXTRA ${args.slice(i).map(verbatim).join(', ')})`;
  return out;
}
