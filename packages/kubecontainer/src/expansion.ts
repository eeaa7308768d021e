/**
 * `$(VAR)` expansion (upstream `third_party/forked/golang/expansion`) and the container helpers
 * built on it (upstream `kubecontainer.ExpandContainerCommandOnlyStatic`): `$$` escapes,
 * unresolved references stay as written. The runtime manager expands env values, command and
 * args with it; the prober expands exec probe commands.
 *
 * @module
 */
import type { V1EnvVar } from '@kubernetes/client-node';

/**
 * Expands `$(NAME)` in `input` with `lookup` (upstream `expansion.Expand`): `$$` is a literal
 * `$`, a reference `lookup` does not resolve is kept as `$(NAME)`, an unclosed `$(` is kept.
 *
 * @example
 * ```ts
 * expand('echo $(GREETING) $$(HOME)', (n) => (n === 'GREETING' ? 'hi' : undefined)); // 'echo hi $(HOME)'
 * ```
 */
export function expand(input: string, lookup: (name: string) => string | undefined): string {
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

/**
 * Expands `$(VAR)` in `command` with the container's static env only (upstream
 * `ExpandContainerCommandOnlyStatic`, used for exec probes and hooks): each `env` entry maps its
 * name to its literal `value` (a `valueFrom` entry maps to `''`, as upstream's `EnvVarsToMap`);
 * later entries override earlier ones; `envFrom` is not consulted.
 */
export function expandContainerCommandOnlyStatic(
  command: readonly string[],
  env: readonly V1EnvVar[] | undefined,
): string[] {
  const values = new Map((env ?? []).map((e) => [e.name, e.value ?? '']));
  const lookup = (name: string): string | undefined => values.get(name);
  return command.map((arg) => expand(arg, lookup));
}
