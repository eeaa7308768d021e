// --fail-swap-on: the kubelet's rule (pkg/kubelet/util/swap: swap is on when /proc/swaps has a
// line besides its header, a missing file means off; NewContainerManager refuses to start with
// "running with swap on is not supported, please disable swap or set --fail-swap-on flag to
// false"), read from an injected /proc/swaps.
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import { join } from 'node:path';
import { noopLogger } from '@nodeagent/core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../src/cli.js';
import {
  checkSwap,
  enforceSwapPolicy,
  isSwapOn,
  isSwapOnAccordingToProcSwaps,
  SWAP_ON_MESSAGE,
  SwapOnError,
} from '../src/swap-check.js';

const HEADER = 'Filename\t\t\t\tType\t\tSize\t\tUsed\t\tPriority\n';
const ON = `${HEADER}/dev/dm-1                               partition\t16760828\t0\t\t-2\n`;

describe('swap detection', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(os.tmpdir(), 'swap-check-'));
    await writeFile(join(dir, 'header-only'), HEADER);
    await writeFile(join(dir, 'on'), ON);
  });
  afterAll(() => rm(dir, { recursive: true, force: true }));

  it('upstream cases: a header alone is off, an entry is on, a missing file is off', async () => {
    expect(isSwapOnAccordingToProcSwaps(HEADER)).toBe(false);
    expect(isSwapOnAccordingToProcSwaps(`${HEADER}\n\n`)).toBe(false);
    expect(isSwapOnAccordingToProcSwaps(ON)).toBe(true);
    expect(await isSwapOn(join(dir, 'header-only'))).toBe(false);
    expect(await isSwapOn(join(dir, 'on'))).toBe(true);
    expect(await isSwapOn(join(dir, 'missing'))).toBe(false);
  });

  it('fail-swap-on true with swap on: the kubelet error; false: started, reported', async () => {
    await expect(checkSwap(true, join(dir, 'on'))).rejects.toThrow(SwapOnError);
    await expect(checkSwap(true, join(dir, 'on'))).rejects.toThrow(
      'running with swap on is not supported, please disable swap or set --fail-swap-on flag to false',
    );
    expect(await checkSwap(false, join(dir, 'on'))).toBe('swap-on');
    expect(await checkSwap(true, join(dir, 'header-only'))).toBe('ok');
    expect(await checkSwap(true, join(dir, 'missing'))).toBe('ok');
  });

  it('the agent rule: default true on a real runtime; on the embedded runtime only when given', async () => {
    const on = join(dir, 'on');
    await expect(
      enforceSwapPolicy({ failSwapOn: undefined, embeddedRuntime: false, path: on, logger: noopLogger }),
    ).rejects.toThrow(SWAP_ON_MESSAGE);
    await expect(
      enforceSwapPolicy({ failSwapOn: undefined, embeddedRuntime: true, path: on, logger: noopLogger }),
    ).resolves.toBeUndefined();
    await expect(
      enforceSwapPolicy({ failSwapOn: true, embeddedRuntime: true, path: on, logger: noopLogger }),
    ).rejects.toThrow(SwapOnError);
    await expect(
      enforceSwapPolicy({ failSwapOn: false, embeddedRuntime: false, path: on, logger: noopLogger }),
    ).resolves.toBeUndefined();
  });

  it('the CLI refuses to start with a real runtime endpoint and swap on (exit 1, the kubelet message)', async () => {
    let stderr = '';
    const code = await runCli(['--container-runtime-endpoint', `unix://${join(dir, 'no.sock')}`], {
      stdout: { write: () => true },
      stderr: { write: (t: string) => (stderr += t) },
      handleSignals: false,
      agentOptions: { procSwapsPath: join(dir, 'on'), kubeletServer: undefined },
    });
    expect(code).toBe(1);
    expect(stderr).toContain(SWAP_ON_MESSAGE);
  }, 30_000);
});
