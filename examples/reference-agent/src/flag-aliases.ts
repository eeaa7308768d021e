/**
 * The agent's earlier flag names, kept as deprecated aliases of the kubelet's: each use is
 * rewritten to the kubelet's name and produces pflag's deprecation warning (`Flag
 * --runtime-endpoint has been deprecated, use --container-runtime-endpoint instead`).
 *
 * @module
 */

/** Deprecated flag → the kubelet flag that replaces it. */
export const DEPRECATED_FLAG_ALIASES: Readonly<Record<string, string>> = {
  'runtime-endpoint': 'container-runtime-endpoint',
  'node-name': 'hostname-override',
};

/** The kubelet's name of `name` (itself unless it is a deprecated alias). */
export function canonicalFlag(name: string): string {
  return DEPRECATED_FLAG_ALIASES[name] ?? name;
}

/** `argv` with deprecated flag names replaced, and one warning per deprecated flag used. */
export function rewriteDeprecatedFlags(argv: readonly string[]): { argv: string[]; warnings: string[] } {
  const warnings: string[] = [];
  const out: string[] = [];
  let done = false;
  for (const arg of argv) {
    if (done || arg === '--') {
      done = true;
      out.push(arg);
      continue;
    }
    const m = /^--([^=]+)(=.*)?$/s.exec(arg);
    const replacement = m?.[1] === undefined ? undefined : DEPRECATED_FLAG_ALIASES[m[1]];
    if (m === null || replacement === undefined) {
      out.push(arg);
      continue;
    }
    const warning = `Flag --${m[1]} has been deprecated, use --${replacement} instead`;
    if (!warnings.includes(warning)) warnings.push(warning);
    out.push(`--${replacement}${m[2] ?? ''}`);
  }
  return { argv: out, warnings };
}
