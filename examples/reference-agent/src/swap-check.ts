/**
 * `--fail-swap-on`: the kubelet refuses to start when swap is on (`NewContainerManager` in
 * `pkg/kubelet/cm/container_manager_linux.go`), which it decides from `/proc/swaps`
 * (`pkg/kubelet/util/swap`): swap is on when the file has a line besides its header; a missing
 * file means off.
 *
 * @module
 */
import { readFile } from 'node:fs/promises';
import type { Logger } from '@nodeagent/core';

/** The kubelet's error when swap is on and `--fail-swap-on` is true (its exact wording). */
export const SWAP_ON_MESSAGE =
  'running with swap on is not supported, please disable swap or set --fail-swap-on flag to false';

/** Swap is on and `--fail-swap-on` is true: the agent does not start. */
export class SwapOnError extends Error {
  override readonly name = 'SwapOnError';
  /** @param swaps the `/proc/swaps` content that showed swap on. */
  constructor(readonly swaps: string) {
    super(SWAP_ON_MESSAGE);
  }
}

/** Whether `/proc/swaps` content shows swap on: more than its header line (upstream's `isSwapOnAccordingToProcSwaps`). */
export function isSwapOnAccordingToProcSwaps(content: string): boolean {
  return content.trim().split('\n').length > 1;
}

/** Whether swap is on, from `path` (default `/proc/swaps`); a missing file means off. */
export async function isSwapOn(path = '/proc/swaps'): Promise<boolean> {
  let content: string;
  try {
    content = await readFile(path, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return false;
    throw new Error(`failed to determine if swap is on: ${(err as Error).message}`);
  }
  return isSwapOnAccordingToProcSwaps(content);
}

/**
 * The start-up check: with `failSwapOn` and swap on, a {@link SwapOnError}; with swap on and
 * `failSwapOn` false, `'swap-on'` (the caller logs it); else `'ok'`.
 * @throws SwapOnError
 */
export async function checkSwap(failSwapOn: boolean, path = '/proc/swaps'): Promise<'ok' | 'swap-on'> {
  if (!(await isSwapOn(path))) return 'ok';
  if (failSwapOn) throw new SwapOnError(await readFile(path, 'utf8').catch(() => ''));
  return 'swap-on';
}

/** Options of {@link enforceSwapPolicy}. */
export interface SwapPolicyOptions {
  /** `--fail-swap-on` as given; `undefined` when not given. */
  readonly failSwapOn: boolean | undefined;
  /** The agent runs the embedded fake runtime (no real containers, so no memory to swap). */
  readonly embeddedRuntime: boolean;
  /** @default '/proc/swaps' */
  readonly path?: string | undefined;
  /** Where swap being on without failing is reported. */
  readonly logger: Logger;
}

/**
 * The agent's start-up swap rule. On a real runtime it is the kubelet's: `--fail-swap-on`
 * defaults to true, so swap on refuses to start ({@link SwapOnError}); with
 * `--fail-swap-on=false` swap on is logged. On the embedded fake runtime, which runs no real
 * process, swap cannot affect pods: unless `--fail-swap-on` was given explicitly, swap on is
 * only logged, so `npm run agent` starts on a laptop with swap.
 * @throws SwapOnError
 */
export async function enforceSwapPolicy(options: SwapPolicyOptions): Promise<void> {
  const fail = options.failSwapOn ?? !options.embeddedRuntime;
  const result = await checkSwap(fail, options.path ?? '/proc/swaps');
  if (result === 'swap-on') {
    options.logger.warn(
      { failSwapOn: options.failSwapOn ?? false, embeddedRuntime: options.embeddedRuntime },
      options.failSwapOn === undefined
        ? 'Swap is on; the embedded fake runtime runs no real containers, so the agent starts (--fail-swap-on=true refuses)'
        : 'Swap is on; --fail-swap-on=false, so the agent starts',
    );
  }
}
